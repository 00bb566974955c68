"""Reading the internal CSV-format outputs (code-value/pivot with AS+, SBS) in tests: the file
is exactly τ-Argus's format (no extra line), its CONFIDENTIAL marking is the sidecar beside it
(`NAME.CONFIDENTIAL.txt`)."""

from __future__ import annotations

from pathlib import Path

BANNER = "CONFIDENTIAL — not for publication"


def assert_marked(path: str | Path) -> None:
    """The sidecar is there and says CONFIDENTIAL; the file itself carries no comment line."""
    path = Path(path)
    side = path.with_name(path.name + ".CONFIDENTIAL.txt")
    assert side.is_file(), f"{path}: no CONFIDENTIAL sidecar {side.name}"
    assert side.read_text(encoding="utf-8").startswith(BANNER), f"{side}: not marked"
    first = path.read_bytes().split(b"\n", 1)[0]
    assert not first.startswith(b"//"), f"{path}: a comment line τ-Argus's format has not"


def body_lines(path: str | Path) -> list[str]:
    """The lines of a marked internal file (its marking checked)."""
    assert_marked(path)
    return Path(path).read_text(encoding="utf-8").splitlines()


def body_text(path: str | Path) -> str:
    """The text of a marked internal file."""
    return "".join(line + "\n" for line in body_lines(path))


def body_bytes(path: str | Path) -> bytes:
    """The bytes of a marked internal file."""
    assert_marked(path)
    return Path(path).read_bytes()
