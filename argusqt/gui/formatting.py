"""How the windows print figures: grouped digits, the table's decimals, never -0.00 or 5.3e+06."""

from __future__ import annotations

import math


def format_number(x: float, decimals: int) -> str:
    """A value with the table's printed decimals; a value that prints as zero has no sign."""
    d = max(0, int(decimals))
    text = f"{float(x):,.{d}f}"
    if text.startswith("-") and not any(c in "123456789" for c in text):
        return text[1:]  # -0.00 from an LP's rounding noise is 0.00
    return text


def format_cost(x: float | None) -> str:
    """Costs as a statistician reads them: grouped digits, never 5.32128e+06."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if abs(x - round(x)) < 1e-9 or abs(x) >= 1e5:
        return format_number(x, 0)
    return format_number(x, 2)


def format_gap(g: float | None) -> str:
    return "–" if g is None else f"{100 * g:.2f} %"


def axis_number(x: float, spacing: float) -> str:
    """A chart tick: grouped digits with just the decimals the tick spacing needs."""
    decimals = 0 if spacing >= 1 or spacing <= 0 else min(6, math.ceil(-math.log10(spacing)))
    return format_number(x, decimals)
