"""The Python API: `argusqt.protect(...)` for notebooks and pipelines.

Data frame (pandas, polars), Parquet/CSV file or τ-Argus files in; a `Protection` out whose
tables give the safe DataFrame (`publish()`, through the publication gate), the internal cell
view (`to_frame()`), the audit and every writer. It drives a `Session` (the one door shared with
the GUI and batch), so every check, log line and safety rule is the same there.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from argusqt.dataclass import dataclass
from argusqt.errors import SpecificationError
from argusqt.io.cdl import read_cdl
from argusqt.model.rulespec import SafetyRules
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.rules.parse import parse_safety_rule

if TYPE_CHECKING:
    import pandas as pd

    from argusqt.model.table import Table
    from argusqt.protection.audit.publication import PublicationVerdict
    from argusqt.protection.core.params import MethodParams
    from argusqt.protection.core.result import ProtectionResult
    from argusqt.session import Session

__all__ = [
    "FREQ",
    "NK",
    "P",
    "ZERO",
    "Protection",
    "ProtectedTable",
    "open_session",
    "protect",
]

#: a hierarchy: an `.hrc` path, a parent/child DataFrame (two columns) or mapping
#: {child: parent}, or the digits per level of the codes (e.g. [1, 1] for '12' under '1')
Hierarchy: TypeAlias = (
    "str | os.PathLike[str] | pd.DataFrame | Mapping[str, str | None] | Sequence[int]"
)
#: labels: an `.cdl` path, a {code: label} mapping or a two-column (code, label) DataFrame
Labels: TypeAlias = "str | os.PathLike[str] | pd.DataFrame | Mapping[str, str]"


# ---------------------------------------------------------------------------- typed rules
@dataclass(frozen=True)
class P:
    """p%-rule: a cell is unsafe when the n largest contributions let the second largest
    estimate the largest within p % (`holding=True`: at holding level)."""

    p: float
    n: int = 1
    holding: bool = False

    def text(self) -> str:
        return f"P({self.p:g},{self.n})"


@dataclass(frozen=True)
class NK:
    """(n,k)-dominance: unsafe when the n largest contributions exceed k % of the cell."""

    n: int
    k: float
    holding: bool = False

    def text(self) -> str:
        return f"NK({self.n},{self.k:g})"


@dataclass(frozen=True)
class FREQ:
    """Minimum frequency: unsafe with fewer than `minfreq` contributors; `range` is the
    protection level in % of the cell value; `unweighted=True` counts respondents even
    when weights are applied (US#98)."""

    minfreq: int
    range: float = 0.0
    holding: bool = False
    unweighted: bool = False

    def text(self) -> str:
        return f"FREQ({self.minfreq},{self.range:g}{',U' if self.unweighted else ''})"


@dataclass(frozen=True)
class ZERO:
    """Zero cells (value 0 with contributors) are unsafe, protected by `range`."""

    range: float

    def text(self) -> str:
        return f"ZERO({self.range:g})"


Rule: TypeAlias = "str | P | NK | FREQ | ZERO"


def _rules(
    rules: str | SafetyRules | Rule | Sequence[Rule] | None,
    *,
    weights: bool,
    missing_safe: bool | None,
    manual_margin: float | None,
) -> SafetyRules:
    """SafetyRules from τ-Argus rule text ("P(15,1)|FREQ(3,30)") and/or typed rules."""
    if isinstance(rules, SafetyRules):
        out = rules
    else:
        items: list[Any] = (
            []
            if rules is None
            else [rules]
            if isinstance(rules, str | P | NK | FREQ | ZERO)
            else list(rules)
        )
        texts = [r for r in items if isinstance(r, str)]
        out = parse_safety_rule("|".join(texts)) if texts else SafetyRules()
        for r in items:
            if isinstance(r, str):
                continue
            if not isinstance(r, P | NK | FREQ | ZERO):
                raise SpecificationError(
                    f"unknown safety rule {r!r}: expected text such as 'P(15,1)|FREQ(3,30)' or "
                    "argusqt.P(15), argusqt.NK(3, 70), argusqt.FREQ(3, 30), argusqt.ZERO(10)"
                )
            one = parse_safety_rule(r.text())  # the parser's checks of the numbers
            if isinstance(r, ZERO):
                out.zero_range = one.zero_range
            elif isinstance(r, FREQ):
                if r.holding:
                    out.freq_holding = one.freq_individual
                else:
                    out.freq_individual = one.freq_individual
            else:
                kind = "p" if isinstance(r, P) else "nk"
                level = "holding" if r.holding else "individual"
                getattr(out, f"{kind}_{level}").extend(getattr(one, f"{kind}_individual"))
        for kind, limit in (("p_individual", 2), ("nk_individual", 2), ("p_holding", 2),
                            ("nk_holding", 2)):  # fmt: skip
            if len(getattr(out, kind)) > limit:
                raise SpecificationError(f"at most {limit} rules of kind {kind} (τ-Argus)")
    if weights:
        out.use_weights = True
    if missing_safe is not None:
        out.missing_safe = bool(missing_safe)
    if manual_margin is not None:
        out.manual_margin = float(manual_margin)
    return out


# ---------------------------------------------------------------------------- hierarchies
def _text(x: Any) -> str | None:
    if x is None or (isinstance(x, float) and x != x):
        return None
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    s = str(x).strip()
    return s or None


def _hierarchy(var: str, h: Any, roles: Any) -> None:
    """Put one hierarchy into the frame roles."""
    # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    from argusqt.io.frames import tree_from_pairs

    if isinstance(h, str | os.PathLike):
        path = Path(h)
        if not path.is_file():
            raise SpecificationError(f"hierarchy file of {var} not found: {path}")
        roles.hier_files[var] = path.resolve()
        return
    if isinstance(h, Mapping):
        pairs = [(_text(c), _text(p)) for c, p in h.items()]
    elif hasattr(h, "columns") and hasattr(h, "iloc"):  # a parent/child DataFrame
        if h.shape[1] != 2:
            raise SpecificationError(
                f"hierarchy of {var}: a DataFrame needs two columns (parent, child), got "
                f"{list(h.columns)}"
            )
        cols = [c.lower() for c in map(str, h.columns)]
        pi, ci = (
            (cols.index("parent"), cols.index("child"))
            if {"parent", "child"} <= set(cols)
            else (0, 1)
        )
        pairs = [(_text(r[ci]), _text(r[pi])) for r in h.itertuples(index=False)]
    elif isinstance(h, Sequence) and all(isinstance(x, int) for x in h):
        roles.levels[var] = [int(x) for x in h]
        return
    else:
        raise SpecificationError(
            f"hierarchy of {var}: expected an .hrc path, a parent/child DataFrame, a "
            f"{{child: parent}} mapping or digits per level such as [1, 1], got {type(h).__name__}"
        )
    if any(c is None for c, _ in pairs):
        raise SpecificationError(f"hierarchy of {var}: a child code is empty")
    roles.trees[var] = tree_from_pairs([(c, p) for c, p in pairs if c is not None], var)


def _labels(var: str, lab: Any, roles: Any) -> None:
    if isinstance(lab, str | os.PathLike):
        roles.labels[var] = read_cdl(Path(lab))
    elif isinstance(lab, Mapping):
        roles.labels[var] = {str(_text(k)): str(v) for k, v in lab.items()}
    elif hasattr(lab, "itertuples"):
        roles.labels[var] = {str(_text(r[0])): str(r[1]) for r in lab.itertuples(index=False)}
    else:
        raise SpecificationError(
            f"labels of {var}: expected a .cdl path, a {{code: label}} mapping or a two-column "
            "DataFrame"
        )


# ---------------------------------------------------------------------------- results
@dataclass
class ProtectedTable:
    """One protected table of a `Protection` (its number in the session is `number`)."""

    session: Session
    number: int
    result: ProtectionResult | None

    @property
    def table(self) -> Table:
        return self.session.table(self.number)

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def n_primary(self) -> int:
        """Primary (unsafe) cells: statuses 3–9."""
        # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
        from argusqt.model.status import is_primary

        return int(is_primary(self.table.status).sum())

    @property
    def n_secondary(self) -> int:
        # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
        from argusqt.model.status import is_secondary

        return int(is_secondary(self.table.status).sum())

    @property
    def cancelled(self) -> bool:
        """True when Ctrl-C (or the cancel token) stopped the method: the best audited
        result found until then is kept."""
        return bool(self.result is not None and self.result.cancelled)

    @property
    def time_limit_decided(self) -> bool:
        """True when the method's time limit cut the run short: the result is audited, but
        another machine or load may give another one (every other run is reproducible)."""
        return bool(self.result is not None and self.result.timed_out)

    @property
    def cancel_note(self) -> str:
        """After a cancel that kept a result: which one and its audit, the sentence the log
        gives ('' otherwise; a cancel that kept nothing raises Cancelled saying so)."""
        return self.result.cancel_note if self.result is not None else ""

    def to_frame(self) -> pd.DataFrame:
        """Every cell: codes, labels, true value, freq, status (named categories) and the
        published value (NA where suppressed). CONFIDENTIAL: it holds the true values of the
        suppressed cells; publish with `publish()`."""
        # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
        from argusqt.export.frame import cell_frame

        return cell_frame(self.table)

    def publish(self) -> pd.DataFrame:
        """The safe DataFrame (codes, labels, published value, NA where suppressed), only
        after the publication gate's outsider and insider audit passed (PublicationError
        naming the cells otherwise)."""
        return self.session.published_frame(self.number)

    def audit(self) -> PublicationVerdict:
        """The publication gate's verdict on the table as it will be printed (pattern,
        intervals, rounded or adjusted values; outsider, insiders and point estimates):
        `ok`, `summary()` and the failing cells; for tables protected together the joint
        one too, as `publish()` (docs/design.md, D-50). Check `.ok`; PublicationError only
        when such tables can no longer be judged together (see the message)."""
        # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
        from argusqt.export.gate import linked_table_verdicts, table_verdict
        from argusqt.workflow.output import beside_verdict  # lazy: as above

        linked = self.session.linked
        if self.number in linked:
            tables = [self.session.table(n) for n in linked]
            own = linked_table_verdicts(tables, linked)[linked.index(self.number)]
        else:
            own = table_verdict(self.table)
        if not own.ok:
            return own
        # beside the tables already published from the same records (D-81)
        joint = beside_verdict(self.session, self.number)
        return joint if joint is not None and not joint.ok else own

    def to_excel(self, path: str | os.PathLike[str]) -> Path:
        """The published Excel workbook (through the publication gate)."""
        path = Path(path)
        if path.suffix.lower() != ".xlsx":
            path = path.with_suffix(".xlsx")
        return self.session.write_table(self.number, 1, "", path)[0]

    def to_parquet(self, path: str | os.PathLike[str]) -> Path:
        """The safe DataFrame (`publish()`) as a Parquet file, written atomically."""
        path = Path(path)
        self.session.check_outputs(path, action=f"writing table {self.number} as Parquet")
        frame = self.publish()
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
        os.close(fd)
        try:
            frame.to_parquet(tmp, index=False)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self.session.add_log(f"Table {self.number} written as Parquet ({path})")
        return path

    def write(
        self, path: str | os.PathLike[str], kind: int | str = "codevalue", options: str = ""
    ) -> list[Path]:
        """Any τ-Argus output: kind 1 "csv", 2 "pivot", 3 "codevalue", 4 "sbs",
        5 "intermediate", 6 "jj", with τ-Argus option text (e.g. "AS+" adds the status: a
        CONFIDENTIAL file). Files for publication pass the publication gate first."""
        kinds = {"csv": 1, "pivot": 2, "codevalue": 3, "sbs": 4, "intermediate": 5, "jj": 6}
        out_type = kinds.get(str(kind).lower(), kind) if isinstance(kind, str) else kind
        if not isinstance(out_type, int):
            raise SpecificationError(f"unknown output kind {kind!r}: expected 1–6 or {list(kinds)}")
        return self.session.write_table(self.number, out_type, options, Path(path))

    def write_report(self, path: str | os.PathLike[str]) -> Path:
        """The CONFIDENTIAL HTML report (rules, method, status counts and sums)."""
        return self.session.write_report(self.number, Path(path))


@dataclass
class Protection:
    """What `protect` returns: the session it drove and one ProtectedTable per table. The
    first table's methods are available here too (`publish()`, `to_frame()`, …)."""

    session: Session
    tables: list[ProtectedTable] = field(default_factory=list)

    @property
    def log(self) -> list[str]:
        return [str(e) for e in self.session.log]

    def __getattr__(self, name: str) -> Any:
        tables = self.__dict__.get("tables")  # not self.tables: no recursion while unpickling
        if name.startswith("_") or not tables:
            raise AttributeError(name)
        return getattr(tables[0], name)

    def __getitem__(self, k: int) -> ProtectedTable:
        return self.tables[k]

    def save_session(self, path: str | os.PathLike[str]) -> Path:
        """The session file (`.aqs`, CONFIDENTIAL: every cell's status) that `open_session`
        reopens audited. Microdata from a data frame or Parquet/CSV file is written beside
        it as `<stem>_data.asc` + `<stem>_data.rda` (+ `.hrc`, `.cdl`), one atomic set."""
        # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
        from argusqt.sessionfile import save_session

        return save_session(self.session, Path(path))

    def write_batch_file(self, path: str | os.PathLike[str]) -> list[Path]:
        """A τ-Argus batch file (`.arb`) that `argusqt batch` runs to the same tables (the
        data frame's microdata written beside it as for `save_session`); the files written."""
        # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
        from argusqt.batch.render import write_batch_file

        return write_batch_file(self.session, Path(path))

    def __len__(self) -> int:
        return len(self.tables)


def open_session(
    path: str | os.PathLike[str], progress: ProgressCallback | bool | None = None
) -> Protection:
    """Reopen a session file: data read again, tables recomputed, statuses restored and every
    protected pattern audited again (AuditError when one no longer passes)."""
    # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    from argusqt.sessionfile import load_session

    callback, close = _progress(progress)
    try:
        session = load_session(Path(path), callback)
    finally:
        close()
    out = Protection(session)
    for no in range(1, len(session.tables) + 1):
        out.tables.append(ProtectedTable(session, no, session.results.get(no)))
    return out


# ---------------------------------------------------------------------------- progress
def _tqdm_progress() -> tuple[ProgressCallback, Callable[[], None]]:
    """A tqdm bar when tqdm is installed (notebook bar in Jupyter), else nothing."""
    try:
        # lazy: tqdm is optional, and slow to import (asyncio, ssl, logging)
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return no_progress, lambda: None
    bar = tqdm(total=100, unit="%", bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}")
    lock = threading.Lock()

    def update(event: ProgressEvent) -> None:
        with lock:
            desc = event.message or ""
            if event.gap is not None:
                desc += f" (gap {100 * event.gap:.1f} %)"
            bar.set_description_str(desc[:60], refresh=False)
            if event.fraction is not None:
                bar.n = round(100 * max(0.0, min(1.0, event.fraction)))
            bar.refresh()

    return update, bar.close


def _run_cancellable(fn: Callable[[], Any], cancel: CancelToken) -> Any:
    """Run `fn` in a worker thread; Ctrl-C in the caller cancels it (the method then returns
    its best audited result) instead of killing the solve; a second Ctrl-C stops waiting.

    In the main thread Ctrl-C is caught by a SIGINT handler for the run's duration, so it
    cancels wherever the caller's thread is (even starting the worker, on a loaded machine);
    elsewhere (no handler possible) a KeyboardInterrupt while waiting does the same."""
    box: dict[str, Any] = {}
    done = threading.Event()  # not Thread.join: a join interrupted by Ctrl-C can report
    # the thread finished while it still runs (CPython gh-90882)
    interrupted = False

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    def first_cancels() -> None:
        nonlocal interrupted
        if interrupted:  # a second Ctrl-C: give up waiting
            raise KeyboardInterrupt
        interrupted = True
        cancel.cancel()

    restore = _catch_sigint(lambda signum, frame: first_cancels())
    try:
        worker = threading.Thread(target=work, name="argusqt-protect", daemon=True)
        worker.start()
        while not done.is_set():
            try:
                done.wait(0.2)
            except KeyboardInterrupt:
                first_cancels()
    finally:
        restore()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _catch_sigint(handler: Callable[[int, Any], None]) -> Callable[[], None]:
    """Install `handler` for SIGINT; returns what puts the previous one back (nothing to do
    where no handler can be set: a thread other than the main one)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main interpreter
        return lambda: None
    if previous is None:  # set outside Python: the default is the best we can put back
        previous = signal.default_int_handler

    def restore() -> None:
        signal.signal(signal.SIGINT, previous)

    return restore


# ---------------------------------------------------------------------------- protect
def protect(
    microdata: Any = None,
    *,
    explanatory: Sequence[str] | Sequence[Sequence[str]],
    response: str | None = None,
    rules: str | SafetyRules | Rule | Sequence[Rule] | None = None,
    method: str = "OPT",
    params: MethodParams | Mapping[str, object] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    labels: Mapping[str, Labels] | None = None,
    total_codes: Mapping[str, str] | None = None,
    shadow: str | None = None,
    cost: str | Literal["frequency", "unity", "distance"] | None = None,
    cost_lambda: float = 1.0,
    weight: str | None = None,
    holding: str | None = None,
    request: str | None = None,
    request_codes: Sequence[str] = (),
    decimals: Mapping[str, int] | None = None,
    metadata: str | os.PathLike[str] | None = None,
    table: Any = None,
    freq: str | None = None,
    top: Sequence[str] = (),
    status: str | None = None,
    missing_safe: bool | None = None,
    manual_margin: float | None = None,
    progress: ProgressCallback | bool | None = None,
    cancel: CancelToken | None = None,
    logbook: str | os.PathLike[str] | None = None,
    record_key: str | None = None,
    record_key_seed: int | None = None,
    ptable: Any = None,
    ptable_sep: Any = None,
    ckm: Any = None,
) -> Protection:
    """Protect one or more tables of microdata (or a ready table) and return them protected.

    Input, one of:
      - `microdata`: a pandas or polars DataFrame, a pyarrow Table, or a Parquet/CSV path
        (only the columns named below are read; large files in chunks);
      - `microdata` + `metadata`: τ-Argus files (fixed/free-format data file and its `.rda`);
      - `table`: a ready table as a DataFrame (one row per cell: `explanatory` codes, the
        `response` value, `freq`, optional `top` contributions, `status`, `shadow`, `cost`).

    Table: `explanatory` names its spanning variables (a list of lists for several tables
    with the same response and rules); `response` the summed variable (None: a frequency
    table); `shadow` the variable the rules look at; `cost` a variable or "frequency",
    "unity", "distance"; `weight`, `holding`, `request` columns as τ-Argus uses them.
    `hierarchies` maps a variable to an `.hrc` path, a parent/child DataFrame or
    {child: parent} mapping, or digits per level; `labels` to a `.cdl`, mapping or DataFrame.

    Rules: τ-Argus text `"P(15,1)|FREQ(3,30)"` or typed `[argusqt.P(15), argusqt.FREQ(3, 30)]`.
    Method: a registry name (OPT, MOD, HEUR, GH, NET, RND, CTA, IP) with `params` by name,
    e.g. `params={"max_minutes": 2}`; an unknown or out-of-range one raises ParameterError
    naming the allowed ones.

    Progress: a callback taking `ProgressEvent`s, True for a tqdm bar (the default in a
    notebook when tqdm is installed), False for none. Ctrl-C (or `cancel.cancel()`) stops
    the method and keeps the best audited result (`.cancelled` is then True). Runs are
    reproducible; `.time_limit_decided` says when the method's time limit cut one short.

    Cell key method (`method="CKM"`, argusqt/docs/methods.md §16): `record_key` names the
    data frame's column of record keys (τ-Argus files name it in the `.rda`), or
    `record_key_seed` draws keys for a pandas DataFrame (keep them with the data: other keys
    give other noise); `ptable` (a file or a DataFrame with i, j, p, v, p_int_ub) replaces
    the counts' ptable, or the magnitudes' with `ptable_sep` for small values; `ckm` (a
    `argusqt.model.cellkey.MagnitudeCKM`) gives a data frame's response its `<CKM>` options.

    Raises ArgusError subclasses with clear messages; AuditError when the method's result
    fails the audit (nothing is kept then).
    """
    # lazy: numpy, the core, the registry: `import argusqt` stays light (docs/design.md, D-29)
    from argusqt.model.table import TableSpec
    from argusqt.protection.core import registry
    from argusqt.session import Session

    desc = registry.get(method)  # unknown method or parameters: fail before reading data
    desc.params.coerce(params)
    groups = _table_groups(explanatory)
    cancel = cancel or CancelToken()
    callback, close = _progress(progress)
    session = Session()
    if logbook is not None:
        session.set_logbook(Path(logbook))
    spec_rules = _rules(
        rules, weights=weight is not None, missing_safe=missing_safe, manual_margin=manual_margin
    )
    cost_spec = _cost(cost, cost_lambda)

    def spec_for(dims: list[str]) -> TableSpec:

        return TableSpec(list(dims), response, shadow, cost_spec, deepcopy(spec_rules))

    def run() -> Protection:
        if table is not None:
            if microdata is not None:
                raise SpecificationError("give either microdata or a table, not both")
            if len(groups) != 1:
                raise SpecificationError("a ready table has one set of explanatory variables")
            _open_table(session, table, groups[0], response, freq, top, status, shadow, cost,
                        hierarchies, labels, total_codes, decimals)  # fmt: skip
        elif metadata is not None:
            if microdata is None:
                raise SpecificationError("metadata given without its microdata file")
            session.open_microdata(Path(microdata), Path(metadata))
        elif microdata is not None:
            roles = _roles(groups, response, shadow, cost, weight, holding, request,
                           request_codes, hierarchies, labels, total_codes, decimals)  # fmt: skip
            data = _with_record_keys(session, microdata, roles, record_key, record_key_seed)
            if ckm is not None and response is not None:
                roles.ckm[response] = ckm
            session.open_microdata_frame(data, roles, callback, cancel)
        else:
            raise SpecificationError("give microdata (a DataFrame or a file) or a table")
        for dims in groups:
            spec = spec_for(dims)
            session.specify_table(spec)
            session.set_safety_rules(spec.rules)
        if not session.compute_tables(callback, cancel, totals_mode=1 if table is not None else 0):
            raise KeyboardInterrupt("computing the tables was cancelled")
        out = Protection(session)
        if ptable is not None or ptable_sep is not None:
            for no in range(1, len(session.tables) + 1):
                kind = "freq" if session.table(no).spec.is_frequency else "cont"
                session.set_ckm_ptables(no, _ptable(ptable, kind), _ptable(ptable_sep, "cont"))
        for no in range(1, len(session.tables) + 1):
            result = None
            if not cancel.cancelled:
                result = session.protect(no, desc.name, params, callback, cancel)
            else:
                session.add_log(f"Table {no}: not protected (cancelled before its turn)")
            out.tables.append(ProtectedTable(session, no, result))
        return out

    try:
        return _run_cancellable(run, cancel)
    finally:
        close()


def _ptable(x: Any, kind: str) -> Any:
    """A ptable argument: a file name as given, a DataFrame as a checked ptable."""
    if x is None or isinstance(x, str | os.PathLike):
        return x
    # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    from argusqt.io.ptable import ptable_from_frame

    return ptable_from_frame(x, kind)  # type: ignore[arg-type]


def _with_record_keys(session, data: Any, roles: Any, column: str | None, seed: int | None) -> Any:
    """The data with its record key column set in `roles`; with a seed, keys drawn into a
    copy of a pandas DataFrame (argusqt/docs/formats.md §1.5: keep them with the data)."""
    if seed is None:
        roles.record_key = column
        return data
    # lazy: pandas, numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    import pandas as pd

    from argusqt.model.cellkey import generated_record_keys

    if not isinstance(data, pd.DataFrame):
        raise SpecificationError(
            "record_key_seed draws keys into a pandas DataFrame; for other data add a column "
            "of record keys and name it with record_key"
        )
    name = column or "record_key"
    if name in data.columns:
        raise SpecificationError(f"the data already has a column {name!r}: name it record_key")
    data = data.copy()
    data[name] = generated_record_keys(len(data), seed)
    roles.record_key = name
    session.add_log(
        f"Record keys drawn with seed {seed} into column {name!r}: keep them with the data "
        "(the same cell gets the same noise only with the same keys)"
    )
    return data


def _table_groups(explanatory: Any) -> list[list[str]]:
    if isinstance(explanatory, str):
        return [[explanatory]]
    items = list(explanatory)
    if not items:
        raise SpecificationError("give at least one explanatory variable")
    if all(isinstance(x, str) for x in items):
        return [list(items)]
    groups = [[x] if isinstance(x, str) else list(x) for x in items]
    return groups


def _cost(cost: str | None, lam: float) -> Any:
    # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    from argusqt.model.table import CostSpec

    if cost is None:
        return CostSpec("variable", None, lam)
    if cost in ("frequency", "unity", "distance"):
        return CostSpec(cost, None, lam)  # type: ignore[arg-type]
    return CostSpec("variable", cost, lam)


def _progress(progress: ProgressCallback | bool | None) -> tuple[ProgressCallback, Callable]:
    if callable(progress):
        return progress, lambda: None
    if progress is None:
        progress = _in_notebook()
    if progress:
        return _tqdm_progress()
    return no_progress, lambda: None


def _in_notebook() -> bool:
    try:
        # lazy: IPython is there only in a notebook
        from IPython import get_ipython  # type: ignore[import-not-found]
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _roles(groups, response, shadow, cost, weight, holding, request, request_codes,
           hierarchies, labels, total_codes, decimals) -> Any:  # fmt: skip
    # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    from argusqt.io.frames import Roles

    explanatory = list(dict.fromkeys(v for g in groups for v in g))
    numeric = [v for v in (response, shadow) if v is not None]
    if cost is not None and cost not in ("frequency", "unity", "distance"):
        numeric.append(cost)
    roles = Roles(
        explanatory=explanatory,
        numeric=list(dict.fromkeys(numeric)),
        weight=weight,
        holding=holding,
        request=request,
        request_codes=tuple(request_codes),
        total_codes=dict(total_codes or {}),
        decimals=dict(decimals or {}),
    )
    for var, h in (hierarchies or {}).items():
        if var not in explanatory:
            raise SpecificationError(f"hierarchy given for {var!r}, which is not explanatory")
        _hierarchy(var, h, roles)
    for var, lab in (labels or {}).items():
        _labels(var, lab, roles)
    return roles


def _open_table(session, frame, dims, response, freq, top, status, shadow, cost,
                hierarchies, labels, total_codes, decimals) -> None:  # fmt: skip
    """A ready table (one row per cell) through τ-Argus tabular files in a temporary folder."""
    # lazy: numpy and the core stay out of `import argusqt` (docs/design.md, D-29)
    from argusqt.io.tables import write_tabular_input

    folder = Path(tempfile.mkdtemp(prefix="argusqt-table-"))
    # the files are read again on every recompute: kept while the session lives, then gone
    weakref.finalize(session, shutil.rmtree, folder, ignore_errors=True)
    tab, rda = write_tabular_input(
        frame, folder, dims, response, freq, list(top), status, shadow,
        cost if cost not in (None, "frequency", "unity", "distance") else None,
        {k: v for k, v in (hierarchies or {}).items()}, labels or {}, total_codes or {},
        decimals or {},
    )  # fmt: skip
    session.open_table_data(tab, rda)
    session.sources[-1].temporary = True  # saving writes it beside the session file
