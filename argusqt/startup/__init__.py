"""What the `argusqt` command does to start faster without changing what it runs (D-57, D-68)."""
