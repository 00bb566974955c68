"""Atomic file writes: a crash or a full disk never leaves a half-written output file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write `data` to a temp file in the same folder, then os.replace it onto `path`."""
    path = Path(path)
    try:
        mode = path.stat().st_mode & 0o777  # keep the permissions of a file we replace
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | Path, data: str, encoding: str = "utf-8") -> None:
    """Text version of `atomic_write_bytes` (newlines written as given)."""
    atomic_write_bytes(path, data.encode(encoding))
