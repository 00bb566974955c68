"""Text cells a spreadsheet would run as a formula, and how every writer keeps them text.

A code or label such as `=HYPERLINK(…)` or `+cmd|'…'!A0` in a CSV file is executed by the
spreadsheet that opens it ("CSV injection"). The Excel writer marks such texts with a quote
prefix; the text writers put a `'` in front. Both ask `formula_like`, so they agree on what
is risky. Numbers are never text cells and are never touched.
"""

from __future__ import annotations

import re

#: Leading characters with which a spreadsheet starts a formula (or strips before one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: A signed plain number ("-1", "+2.5"): a spreadsheet reads it as a number, never a formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)\Z")
#: What a user types in a spreadsheet to keep a text as text.
TEXT_PREFIX = "'"


def formula_like(text: str) -> bool:
    """True when `text` starts with = + - @ tab or CR and is neither a plain signed number
    (codes such as "-1" stay as they are) nor a lone sign."""
    return (
        text.startswith(FORMULA_STARTS)
        and text not in ("-", "+")
        and _PLAIN_NUMBER.match(text) is None
    )


def neutralise(text: str) -> str:
    """`text` with a `'` in front when a spreadsheet would read it as a formula."""
    return TEXT_PREFIX + text if formula_like(text) else text
