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
    return _same(_identity(a), _identity(b))


#: a name's resolved path and (device, inode), each None where it cannot be had
Identity = tuple[Path | None, tuple[int, int] | None]


def _identity(p: Path) -> Identity:
    """What same_file compares, computed once per name (a batch run checks each output
    against every input: resolving each pair again cost ≈ 1 ms a run, D-89)."""
    try:
        resolved: Path | None = p.resolve()
    except (OSError, RuntimeError):
        resolved = None
    try:
        st = os.stat(p)
        inode: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        inode = None
    return resolved, inode


def _same(a: Identity, b: Identity) -> bool:
    """same_file's test on two identities: equal resolved paths or the same inode."""
    return (a[0] is not None and a[0] == b[0]) or (a[1] is not None and a[1] == b[1])


class KnownInputs:
    """(role, path) inputs with their identities, for checking several outputs against the
    same inputs (a batch file's commands) without resolving the inputs again."""

    def __init__(self, inputs: Iterable[tuple[str, Path]]) -> None:
        self.known = [(role, Path(p), _identity(Path(p))) for role, p in inputs]


def check_outputs(
    outputs: Iterable[str | Path],
    inputs: Iterable[tuple[str, Path]] | KnownInputs,
    action: str,
) -> None:
    """SpecificationError when an output is one of the (role, path) inputs; nothing written."""
    known = (inputs if isinstance(inputs, KnownInputs) else KnownInputs(inputs)).known
    for out in outputs:
        out = Path(out)
        ident = _identity(out)
        for role, _, inp in known:
            if _same(ident, inp):
                raise SpecificationError(
                    f"{action}: {out} is the {role} this session read (an input); writing "
                    "there would replace it. Nothing was written: choose another file name"
                )
