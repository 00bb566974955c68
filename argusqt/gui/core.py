"""What the windows need from the core besides Session methods: file kinds, metadata roles,
the imports done before worker threads start, and the batch and session-file doors.

The GUI reaches the core only through `argusqt.session`, `argusqt.sessionfile` and
`argusqt.batch` (an import-linter contract); everything else goes through Session methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argusqt.model.table import Table
from argusqt.session import Session, preload, table_protection

DATA_SUFFIXES = {".asc", ".dat", ".csv", ".txt"}
TABLE_SUFFIXES = {".tab"}
META_SUFFIXES = {".rda"}
BATCH_SUFFIXES = {".arb"}


def new_session() -> Session:
    """A fresh core Session."""
    return Session()


def preload_core() -> None:
    """Import the core before any worker starts: a first import of C extensions (pandas,
    SCIP) inside a QThread while the GUI thread runs crashed the process (segfault seen in
    the GUI tests); imports on the GUI thread at start-up avoid that race."""
    import argusqt.batch.render  # noqa: F401
    import argusqt.batch.runner  # noqa: F401
    import argusqt.sessionfile  # noqa: F401

    preload()


def protection_of(table: Table) -> tuple[str, str]:
    """(state, words) of a table on its way to publication: 'cleared', 'protected',
    'changed', 'unprotected' or 'nothing to protect'."""
    return table_protection(table)


def proposed_metadata(data_path: str | Path) -> Path | None:
    """The .rda next to a data file with the same base name (case-insensitive), if any."""
    p = Path(data_path)
    exact = p.with_suffix(".rda")
    if exact.exists():
        return exact
    if p.parent.is_dir():
        for q in p.parent.iterdir():
            if q.suffix.lower() == ".rda" and q.stem.lower() == p.stem.lower():
                return q
    return None


def proposed_data(meta_path: str | Path) -> Path | None:
    """The one data or table file next to a `.rda` with the same base name (case-insensitive),
    so that opening a `.rda` (a double-click: the desktop entry claims `.rda`) opens its data;
    None when there is none or more than one."""
    p = Path(meta_path)
    if not p.parent.is_dir():
        return None
    found = [
        q
        for q in p.parent.iterdir()
        if q.suffix.lower() in DATA_SUFFIXES | TABLE_SUFFIXES
        and q.stem.lower() == p.stem.lower()
        and q.is_file()
    ]
    return found[0] if len(found) == 1 else None


def tables_of(session: Session) -> list[Table]:
    """Tables of the session, numbered from 1 in the GUI."""
    return list(session.tables)


def metadata_of(session: Session) -> Any:
    return session.metadata


@dataclass
class VariableChoices:
    """What the Specify Tables dialog may offer, derived from the metadata."""

    explanatory: list[str] = field(default_factory=list)
    numeric: list[str] = field(default_factory=list)
    weight: str | None = None
    holding: str | None = None
    request: str | None = None
    tabular: bool = False
    has_frequency: bool = True
    distance: dict[str, list[int]] = field(default_factory=dict)


def choices_from_metadata(meta: Any) -> VariableChoices:
    """Read the variable roles of a Metadata object (argusqt.model.metadata)."""
    ch = VariableChoices()
    if meta is None:
        return ch
    ch.tabular = getattr(meta, "kind", "") == "tabular"
    for v in getattr(meta, "variables", []):
        name = v.name
        if getattr(v, "recodeable", False):
            ch.explanatory.append(name)
            if getattr(v, "distance", None):
                ch.distance[name] = list(v.distance)
        if getattr(v, "weight", False):
            ch.weight = name
        elif getattr(v, "holding", False):
            ch.holding = name
        elif getattr(v, "request", False):
            ch.request = name
        elif getattr(v, "numeric", False) and not any(
            getattr(v, r, False) for r in ("frequency", "maxscore", "status", "lowerpl", "upperpl")
        ):
            ch.numeric.append(name)
    if ch.tabular:
        ch.has_frequency = any(getattr(v, "frequency", False) for v in meta.variables)
    return ch


def run_batch(path: str | Path, progress, cancel) -> Any:
    """Run a .arb file interactively; returns the batch outcome (with `.session`)."""
    from argusqt.batch.runner import run_batch as _run

    return _run(path, interactive=True, progress=progress, cancel=cancel)
