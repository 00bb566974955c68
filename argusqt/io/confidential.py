"""The words that mark an internal output: what it holds must not be published.

Every file that tells primary from secondary cells, holds true values of suppressed cells,
audit intervals or sums over suppressed cells carries them in its name or first line (a
`//` comment line in the τ-Argus text formats, which every reader skips).
"""

from __future__ import annotations

#: First line (or cell) of every confidential output.
CONFIDENTIAL_BANNER = "CONFIDENTIAL — not for publication"


def comment_banner(what: str) -> str:
    """The first line of a confidential τ-Argus text file (`.hst`, `.tab`, `.rda`)."""
    return f"// {CONFIDENTIAL_BANNER}: {what}\n"
