"""Reading the internal outputs (code-value/pivot with AS+, SBS, JJ) in tests: their first
line is the CONFIDENTIAL banner, the rest is τ-Argus's format."""

from __future__ import annotations

from pathlib import Path

BANNER = "// CONFIDENTIAL — not for publication"


def body_lines(path: str | Path) -> list[str]:
    """The lines after the banner (which must be there)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].startswith(BANNER), f"{path}: no CONFIDENTIAL first line"
    return lines[1:]


def body_text(path: str | Path) -> str:
    """The text after the banner line."""
    return "".join(line + "\n" for line in body_lines(path))


def body_bytes(path: str | Path) -> bytes:
    """The bytes after the banner line."""
    data = Path(path).read_bytes()
    assert data.startswith(BANNER.encode("utf-8")), f"{path}: no CONFIDENTIAL first line"
    return data.split(b"\n", 1)[1]
