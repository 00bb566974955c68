"""The words that mark an internal output: what it holds must not be published.

Every file that tells primary from secondary cells, holds true values of suppressed cells,
audit intervals or sums over suppressed cells carries them in its name or first line (a
`//` comment line in the τ-Argus text formats, which every reader skips).
"""

from __future__ import annotations

#: First line (or cell) of every confidential output.
CONFIDENTIAL_BANNER = "CONFIDENTIAL — not for publication"


def comment_banner(what: str) -> str:
    """The first line of a confidential τ-Argus text file (`.hst`, `.tab`, `.rda`, the
    code-value/pivot file with `AS+`, SBS)."""
    return f"// {CONFIDENTIAL_BANNER}: {what}\n"


def jj_first_line(what: str) -> str:
    """The first line of a JJ file: its leading `0`, then the banner as a `//` comment.

    The JJ format has no comment line: τ-Argus's own JJ reader (libtauargus_csp's audit,
    tried through pytauargus) fails on a file that starts with `//`, but reads the first
    number of each line and ignores the rest of it, so the banner follows the `0`.
    """
    return f"0 {comment_banner(what)}"


def strip_comment(line: str) -> str:
    """A line without its `//` comment (the whole line when it starts with one)."""
    cut = line.find("//")
    return line if cut < 0 else line[:cut]
