"""The cell key method, CKM (argusqt/docs/methods.md §16): every cell published with the noise
its cell key picks in a ptable, as τ-Argus 4.2 does, for counts and magnitudes.

The method reads the cell keys the tabulation kept (model.cellkey) and the ptables the
metadata names (or a generated one); it changes no status. Its face is "ckm": no suppression
audit; the verdict of argusqt/docs/methods.md §16.6 (the checks and the attacker who knows
the ptable) instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled, MethodError
from argusqt.model.cellkey import CellKeyInputs
from argusqt.model.ptable import PRow, PTable
from argusqt.model.status import Status
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.adjust.ckm_loss import info_loss
from argusqt.protection.adjust.ckm_perturb import (
    MagnitudeSetup,
    magnitude_setup,
    perturb_counts,
    perturb_magnitudes,
)
from argusqt.protection.adjust.ckm_ptable import generate_ptable
from argusqt.protection.audit.disclosure import Face, face_verdict
from argusqt.protection.core.options import SolverOptions
from argusqt.protection.core.params import MethodParams, TableFacts, param
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult

#: a ptable given in memory (API) or by file name
PTableSource = PTable | str | Path


@dataclass(frozen=True, kw_only=True)
class CKMParams(MethodParams):
    """`<SUPPRESS> CKM(t)`: the ptables come from the metadata (or the batch command)."""

    METHOD: ClassVar[str] = "CKM"
    mu_c: float = param(
        0.0,
        position=1,
        batch="muC",
        label="Extra noise of primary cells (μc)",
        help="Magnitude tables: added to the first contribution's noise of unsafe cells.",
        minimum=0,
        extension=True,
        decimals=2,
    )
    ptable_d: int = param(
        0,
        position=2,
        batch="D",
        label="Generate the ptable: maximum deviation D (0: the metadata's ptable)",
        help="Counts: build a ptable with this D instead of reading <PFILE>. Keep D secret.",
        minimum=0,
        maximum=100,
        extension=True,
    )
    ptable_v: float = param(
        1.0,
        position=3,
        batch="V",
        label="Generated ptable: variance V",
        minimum=0,
        exclusive_minimum=True,
        extension=True,
        decimals=3,
    )
    ptable_js: int = param(
        0,
        position=4,
        batch="js",
        label="Generated ptable: no perturbed value in 1 … js",
        minimum=0,
        maximum=100,
        extension=True,
    )
    ptable_pstay: float = param(
        0.0,
        position=5,
        batch="pstay",
        label="Generated ptable: least probability of no noise (0: free)",
        minimum=0,
        maximum=0.99,
        extension=True,
        decimals=2,
    )


@dataclass(frozen=True, kw_only=True)
class CkmOptions(SolverOptions):
    """What solve_ckm reads: μc for magnitude primaries, and the generator's (D, V, js, pstay)
    when the ptable is generated instead of read (None: the metadata's ptables)."""

    mu_c: float = 0.0
    generate: tuple[int, float, int, float | None] | None = None


def _options(params: CKMParams, facts: TableFacts) -> CkmOptions:
    return CkmOptions(
        mu_c=params.mu_c,
        generate=(
            None
            if params.ptable_d == 0
            else (
                params.ptable_d,
                params.ptable_v,
                params.ptable_js,
                params.ptable_pstay or None,
            )
        ),
    )


def _ptable(inputs: CellKeyInputs, source: PTableSource | None, kind: str, what: str) -> PTable:
    """The ptable itself: given in memory, or read by the session's reader."""
    if source is None:
        raise MethodError(f"CKM needs {what}: the metadata names none")
    if isinstance(source, PTable):
        return source
    if inputs.reader is None:
        raise MethodError(f"CKM cannot read the ptable {source}: no reader was given")
    return inputs.reader(source, kind)


def _inputs(problem) -> CellKeyInputs:
    source = getattr(problem, "cellkey", None)
    inputs: CellKeyInputs | None = source() if callable(source) else source
    if inputs is None:
        raise MethodError(
            "CKM needs record keys: the data has no <RECORDKEY> variable "
            "(argusqt/docs/formats.md §1.5); add one to the data, or generate keys and keep them with it"
        )
    return inputs


def _count_ptable(inputs: CellKeyInputs, generate: Any) -> PTable:
    """The counts' ptable: generated from (D, V, js, pstay), or the metadata's / the batch's."""
    if generate is not None:
        d, v, js, pstay = generate
        return generate_ptable(int(d), float(v), int(js), pstay)
    return _ptable(inputs, inputs.pfile, "freq", "a ptable for counts (<PFILE>)")


def _magnitude_setup(inputs: CellKeyInputs, mu_c: float) -> tuple[MagnitudeSetup, Any]:
    ckm = inputs.ckm
    if ckm is None or not ckm.enabled:
        raise MethodError(
            f"CKM on a magnitude table needs <CKM> M, D, V or T(k) on {inputs.response} "
            "in the metadata (it has <CKM> N or none): argusqt/docs/formats.md §1.5"
        )
    large = _ptable(inputs, inputs.pfile_cont, "cont", "a ptable for magnitudes (<PFILE_CONT>)")
    small = None
    if ckm.separation:
        small = _ptable(inputs, inputs.pfile_sep, "cont", "a small-value ptable (<PFILE_SEP>)")
    try:
        return magnitude_setup(ckm, large, small, mu_c), ckm
    except ValueError as exc:
        raise MethodError(f"CKM: {exc}") from None


def _saturated(table: PTable) -> PTable:
    """The ptable with every noise at its largest |v| of positive p: the farthest a cell
    can move."""
    big = _largest_noise(table)
    rows = {
        kind: [PRow(r.i, r.j, r.p, np.full_like(r.v, big, dtype=float), r.ub, r.line) for r in rs]
        for kind, rs in table.rows.items()
    }
    return PTable(table.kind, rows, table.source)


def count_hull(ptable: PTable, published: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per published count j, the smallest and largest original i with p(i → j) > 0: rows
    i < maxNi as listed, from maxNi up i = j − v of the last row (argusqt/docs/methods.md §16.6)."""
    rows = ptable.table("all")
    last = rows[-1]
    top = len(rows) - 1
    y = np.rint(np.asarray(published, dtype=float)).astype(np.int64)
    lo = np.full(y.shape[0], np.inf)
    hi = np.full(y.shape[0], -np.inf)
    for r in rows[:top]:  # few rows: each marks the published values it reaches
        reach = np.isin(y, r.j[r.p > 0].astype(np.int64))
        lo[reach] = np.minimum(lo[reach], r.i)
        hi[reach] = np.maximum(hi[reach], r.i)
    for v in last.v[last.p > 0].tolist():  # i = j − v, counts from maxNi up
        i = (y - v).astype(float)
        ok = i >= top
        lo[ok] = np.minimum(lo[ok], i[ok])
        hi[ok] = np.maximum(hi[ok], i[ok])
    none = ~np.isfinite(lo)  # no original gives j: nothing the ptable explains, a point
    lo[none], hi[none] = y[none], y[none]
    return lo, hi


def _largest_noise(table: PTable) -> float:
    """max |v| over the transitions of positive p (one of p = 0 never happens)."""
    return max(
        float(np.abs(r.v[r.p > 0]).max(initial=0.0)) for rs in table.rows.values() for r in rs
    )


def attacker_intervals(
    problem, published: np.ndarray, public: dict[str, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """What an attacker who knows the ptable and the public parameters learns of every
    cell's original from its published value (argusqt/docs/methods.md §16.6): counts the
    hull of the originals that can give it, weighted counts and magnitudes the published
    value ± the largest perturbation the ptable and scaling allow for the cell."""
    pub = dict(public or {})
    inputs = _inputs(problem)
    y = np.asarray(published, dtype=float)
    status = np.asarray(problem.status)
    if inputs.frequency:
        d = int(pub.get("ptable_d", 0) or 0)
        gen = None if d == 0 else (d, pub.get("ptable_v", 1.0), int(pub.get("ptable_js", 0)),
                                   pub.get("ptable_pstay") or None)  # fmt: skip
        table = _count_ptable(inputs, gen)
        cells = inputs.cells
        if not inputs.weighted:
            return count_hull(table, y)
        scale = np.divide(cells.weight, cells.count, out=np.ones_like(cells.weight),
                          where=cells.count > 0)  # fmt: skip
        bound = _largest_noise(table) * scale
    else:
        setup, ckm = _magnitude_setup(inputs, float(pub.get("mu_c", 0.0)))
        far = MagnitudeSetup(
            _saturated(setup.large),
            None if setup.small is None else _saturated(setup.small),
            setup.z_s,
            setup.mu_c,
        )
        values = np.asarray(problem.values, dtype=float)
        moved = perturb_magnitudes(values, status, inputs.cells, ckm, far, inputs.weighted)
        unit = 10.0 ** (-max(int(getattr(problem, "decimals", 0) or 0), 0))
        bound = np.abs(moved - values) + 0.5 * unit
    return y - bound, y + bound


def solve_ckm(
    problem,
    params: CkmOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Perturb every cell of the table (argusqt/docs/methods.md §16.2–§16.3); statuses stay as they are."""
    opts = CkmOptions.of(params)
    watch = Stopwatch()
    inputs = _inputs(problem)
    if inputs.holdings:
        raise MethodError(
            "the cell key method is not available when holdings are used (τ-Argus refuses "
            "it too): specify the table without holding-level rules"
        )
    progress(ProgressEvent("Cell key method: looking up the noise of every cell", fraction=0.1))
    if cancel is not None and cancel.cancelled:
        raise Cancelled("CKM cancelled before a cell was perturbed; the table is unchanged")
    status = np.asarray(problem.status)
    values = np.asarray(problem.values, dtype=float)
    cells = inputs.cells
    log: list[str] = []
    generate = opts.generate
    public: dict[str, float] = {"mu_c": float(opts.mu_c)}
    if inputs.frequency:
        table = _count_ptable(inputs, generate)
        if generate is not None:
            d, v, js, pstay = generate
            public |= {"ptable_d": d, "ptable_v": v, "ptable_js": js, "ptable_pstay": pstay or 0}
            log.append(
                f"ptable generated (D={d}, V={v:g}, js={js}"
                + (f", pstay={pstay:g}" if pstay else "")
                + "): keep D, V and the ptable confidential"
            )
        else:
            log.append(f"ptable {table.source}")
        weight = cells.weight if inputs.weighted else None
        published, _ = perturb_counts(cells.count, weight, cells.key, status, table)
        max_dev = table.max_deviation
        if weight is not None:
            scale = np.divide(cells.weight, cells.count, out=np.ones_like(cells.weight),
                              where=cells.count > 0)  # fmt: skip
            max_dev *= float(scale.max()) if scale.size else 1.0
    else:
        if generate is not None:
            raise MethodError("a generated ptable is for frequency tables only")
        setup, ckm = _magnitude_setup(inputs, float(opts.mu_c))
        try:
            published = perturb_magnitudes(values, status, cells, ckm, setup, inputs.weighted)
        except ValueError as exc:
            raise MethodError(f"CKM: {exc}") from None
        small = setup.small
        log.append(f"ptables {setup.large.source}" + (f" and {small.source}" if small else ""))
        max_dev = float("nan")
    decimals = max(int(getattr(problem, "decimals", 0) or 0), 0)
    published = np.round(published, decimals)
    nonempty = status != Status.EMPTY
    loss = info_loss(values, published, nonempty)
    log += loss.lines()
    lower, upper = attacker_intervals(problem, published, public)
    face = Face("ckm", published=published, lower=lower, upper=upper, base=max_dev)
    verdict = face_verdict(problem, face)
    log.append(verdict.summary())
    progress(ProgressEvent("Cell key method finished", fraction=1.0))
    return ProtectionResult(
        method="CKM",
        status=status.copy(),
        cost=float(np.abs(published - values)[nonempty].sum()),
        published=published,
        elapsed=watch.elapsed,
        log=log,
        verdict=verdict,
        figures={"max_deviation": max_dev, "loss": loss.to_dict()} | public,
    )


DESCRIPTOR = register(
    MethodDescriptor(
        name="CKM",
        kind="adjust",
        face="ckm",
        label="Cell key method",
        help=(
            "Publish every cell with a small noise drawn from a ptable by its cell key; the "
            "same cell gets the same noise in every table. Needs record keys."
        ),
        params=CKMParams,
        solve=solve_ckm,
        solver_options=_options,
        order=70,
    )
)
