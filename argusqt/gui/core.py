"""The only GUI module that talks to the core Session: one function per user action.

Keeping every Session call here means the windows depend on a handful of obvious names;
a core method that does not exist yet is reported as a MethodError, never silently skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argusqt.errors import MethodError
from argusqt.model.table import Table

DATA_SUFFIXES = {".asc", ".dat", ".csv", ".txt"}
TABLE_SUFFIXES = {".tab"}
META_SUFFIXES = {".rda"}
BATCH_SUFFIXES = {".arb"}


def new_session() -> Any:
    """A fresh core Session (argusqt.session)."""
    try:
        from argusqt.session import Session
    except ImportError as exc:  # pragma: no cover - only while the core is being written
        raise MethodError(f"the core session is not available ({exc})") from exc
    return Session()


#: core modules the worker threads use; imported on the GUI thread once (see preload_core)
CORE_MODULES = (
    "pandas",
    "argusqt.session",
    "argusqt.io.microdata",
    "argusqt.io.tabular",
    "argusqt.io.apriori",
    "argusqt.model.tabulate",
    "argusqt.rules.classify",
    "argusqt.rules.cost",
    "argusqt.rules.changes",
    "argusqt.recode.apply",
    "argusqt.protection.methods",
    "argusqt.protection.audit",
    "argusqt.protection.heuristic",
    "argusqt.protection.optimal",
    "argusqt.protection.modular",
    "argusqt.protection.linked",
    "argusqt.protection.rounding",
    "argusqt.protection.cta",
    "argusqt.protection.interval",
    "argusqt.protection.publication",
    "argusqt.export.gate",
    "argusqt.export.writetable",
    "argusqt.export.excel",
    "argusqt.export.report",
    "argusqt.batch.runner",
    "argusqt.sessionfile",
)


def preload_core() -> None:
    """Import the core before any worker starts: a first import of C extensions (pandas,
    SCIP) inside a QThread while the GUI thread runs crashed the process (segfault seen in
    the GUI tests); imports on the GUI thread at start-up avoid that race."""
    import importlib

    for name in CORE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional part missing: its action reports it when used
            pass


def call(session: Any, name: str, *args, **kwargs) -> Any:
    """Call a Session method, with a clear message if this core version lacks it."""
    fn = getattr(session, name, None)
    if fn is None:
        raise MethodError(f"'{name}' is not available in this version of the core")
    return fn(*args, **kwargs)


def protection_of(table: Table) -> tuple[str, str]:
    """(state, words) of a table on its way to publication (export.gate): 'cleared',
    'protected', 'changed', 'unprotected' or 'nothing to protect'."""
    import numpy as np

    from argusqt.export.gate import STATE_TEXT, protection_state

    state = protection_state(table)
    status = np.asarray(table.status)
    if state == "unprotected" and ((status == 11) | (status == 12)).any():
        # e.g. statuses read from a table file: the gate audits them when saving
        return state, "not protected by a method (the pattern is audited when saved)"
    return state, STATE_TEXT[state]


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


def tables_of(session: Any) -> list[Table]:
    """Tables of the session, numbered from 1 in the GUI."""
    return list(getattr(session, "tables", []) or [])


def metadata_of(session: Any) -> Any:
    return getattr(session, "metadata", None) or getattr(session, "meta", None)


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
