"""Refuse an output path that is one of the open inputs, before anything is written.

A `<WRITETABLE>` or `<LOGBOOK>` naming the microdata, a save dialog pointed at the metadata:
the input would be replaced (or appended to) silently. The session knows its inputs
(data, metadata, hierarchies, codelists, recode and a-priori files, the batch or session
file) and every write it does is checked here first (argusqt/docs/formats.md §10.10).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from argusqt.errors import SpecificationError


def same_file(a: Path, b: Path) -> bool:
    """The two names are one file: the same resolved path, or (both existing) the same inode
    (hard links, case-insensitive file systems)."""
    try:
        if a.resolve() == b.resolve():
            return True
    except (OSError, RuntimeError):
        pass
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_outputs(
    outputs: Iterable[str | Path], inputs: Iterable[tuple[str, Path]], action: str
) -> None:
    """SpecificationError when an output is one of the (role, path) inputs; nothing written."""
    known = [(role, Path(p)) for role, p in inputs]
    for out in outputs:
        out = Path(out)
        for role, inp in known:
            if same_file(out, inp):
                raise SpecificationError(
                    f"{action}: {out} is the {role} this session read (an input); writing "
                    "there would replace it. Nothing was written: choose another file name"
                )
