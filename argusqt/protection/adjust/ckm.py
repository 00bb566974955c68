"""The cell key method, CKM (argusqt/docs/methods.md §16): every cell published with the noise
its cell key picks in a ptable, as τ-Argus 4.2 does, for counts and magnitudes.

The method reads the cell keys the tabulation kept (model.cellkey) and the ptables the
metadata names (or a generated one); it changes no status. Its face is "ckm": no suppression
audit, the checks of argusqt/docs/methods.md §16.6 instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from argusqt.errors import Cancelled, MethodError
from argusqt.model.cellkey import CellKeyInputs
from argusqt.model.ptable import PTable
from argusqt.model.status import Status
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.adjust.ckm_loss import info_loss
from argusqt.protection.adjust.ckm_perturb import (
    magnitude_setup,
    perturb_counts,
    perturb_magnitudes,
)
from argusqt.protection.adjust.ckm_ptable import generate_ptable
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


def solve_ckm(
    problem,
    params: CkmOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Perturb every cell of the table (argusqt/docs/methods.md §16.2–§16.3); statuses stay as they are."""
    opts = CkmOptions.of(params)
    watch = Stopwatch()
    source = getattr(problem, "cellkey", None)
    inputs: CellKeyInputs | None = source() if callable(source) else source
    if inputs is None:
        raise MethodError(
            "CKM needs record keys: the data has no <RECORDKEY> variable (argusqt/docs/"
            "argusqt/docs/formats.md §1.5); add one to the data, or generate keys and keep them with it"
        )
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
    if inputs.frequency:
        if generate is not None:
            d, v, js, pstay = generate
            table = generate_ptable(int(d), float(v), int(js), pstay)
            log.append(
                f"ptable generated (D={d}, V={v:g}, js={js}"
                + (f", pstay={pstay:g}" if pstay else "")
                + "): keep D, V and the ptable confidential"
            )
        else:
            table = _ptable(inputs, inputs.pfile, "freq", "a ptable for counts (<PFILE>)")
            log.append(f"ptable {table.source}")
        weight = cells.weight if inputs.weighted else None
        published, _ = perturb_counts(cells.count, weight, cells.key, status, table)
        max_dev = table.max_deviation
        if weight is not None:
            scale = np.divide(cells.weight, cells.count, out=np.ones_like(cells.weight),
                              where=cells.count > 0)  # fmt: skip
            max_dev *= float(scale.max()) if scale.size else 1.0
    else:
        ckm = inputs.ckm
        if ckm is None or not ckm.enabled:
            raise MethodError(
                f"CKM on a magnitude table needs <CKM> M, D, V or T(k) on {inputs.response} "
                "in the metadata (it has <CKM> N or none): argusqt/docs/formats.md §1.5"
            )
        if generate is not None:
            raise MethodError("a generated ptable is for frequency tables only")
        large = _ptable(inputs, inputs.pfile_cont, "cont", "a ptable for magnitudes (<PFILE_CONT>)")
        small = None
        if ckm.separation:
            small = _ptable(inputs, inputs.pfile_sep, "cont", "a small-value ptable (<PFILE_SEP>)")
        try:
            setup = magnitude_setup(ckm, large, small, float(opts.mu_c))
            published = perturb_magnitudes(values, status, cells, ckm, setup, inputs.weighted)
        except ValueError as exc:
            raise MethodError(f"CKM: {exc}") from None
        log.append(f"ptables {large.source}" + (f" and {small.source}" if small else ""))
        max_dev = float("nan")
    decimals = max(int(getattr(problem, "decimals", 0) or 0), 0)
    published = np.round(published, decimals)
    nonempty = status != Status.EMPTY
    loss = info_loss(values, published, nonempty)
    log += loss.lines()
    progress(ProgressEvent("Cell key method finished", fraction=1.0))
    return ProtectionResult(
        method="CKM",
        status=status.copy(),
        cost=float(np.abs(published - values)[nonempty].sum()),
        published=published,
        elapsed=watch.elapsed,
        log=log,
        figures={"max_deviation": max_dev, "loss": loss.to_dict()},
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
