"""The words that mark an internal output: what it holds must not be published.

Every file that tells primary from secondary cells, holds true values of suppressed cells,
audit intervals or sums over suppressed cells carries them in its name, in its first line
where its format has comments its readers skip (`.tab`, `.rda`, `.hst`, JJ after the
leading 0), or — for the CSV formats τ-Argus's and other readers take line by line
(code-value, pivot, SBS) — in a sidecar file written with it (argusqt/docs/formats.md §10.9).
"""

from __future__ import annotations

from pathlib import Path

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


#: End of the name of the sidecar that marks a confidential CSV-format file.
SIDECAR_SUFFIX = ".CONFIDENTIAL.txt"


def confidential_path(path: str | Path) -> Path:
    """`path` with CONFIDENTIAL in its file name (added before the suffix when missing).

    Beside the sidecar rule, not in `excel`, so that writing a text table never imports
    openpyxl."""
    path = Path(path)
    if "CONFIDENTIAL" in path.name:
        return path
    return path.with_name(f"{path.stem}_CONFIDENTIAL{path.suffix}")


def sidecar_path(path: str | Path) -> Path:
    """The marker beside a confidential CSV-format file: `cv.txt` → `cv.txt.CONFIDENTIAL.txt`."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def sidecar_text(path: str | Path, what: str) -> str:
    """What the sidecar says: the file beside it is confidential, and what it holds."""
    return (
        f"{CONFIDENTIAL_BANNER}: {Path(path).name}\n"
        f"{Path(path).name} holds the {what}.\n"
        "It is a working file in a τ-Argus format (kept readable by τ-Argus-format readers, so "
        "the marking is here and in the logbook); do not publish it.\n"
    )


def write_marked(path: str | Path, text: str, what: str) -> list[Path]:
    """Write a confidential CSV-format file and its sidecar as one atomic set; returns both."""
    from argusqt.io.atomic import atomic_write_set

    path = Path(path)
    side = sidecar_path(path)
    atomic_write_set({path: text.encode("utf-8"), side: sidecar_text(path, what).encode("utf-8")})
    return [path, side]
