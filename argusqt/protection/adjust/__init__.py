"""Methods that publish changed or interval values: rounding (RND), CTA, interval protection (IP)."""
