"""The cell-suppression problem instance every protection method works on
(argusqt/docs/methods.md §1–2).

Built from a Table (or read from a JJ file): values, attacker a-priori bounds, costs,
statuses, protection levels and the sparse relations M·a = b. Methods never look at the
Table; they return masks/values that the caller copies back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.model.smallcsr import SmallCompressed, scipy_of
from argusqt.model.status import (
    Status,
    is_candidate,
    is_primary,
    is_secondary,
    secondary_status_for,
)
from argusqt.protection.core.respondents import Floors, Respondents, floors_of
from argusqt.protection.core.respondents import from_table as respondents_of

if TYPE_CHECKING:
    from argusqt.model.codelist import CodeList
    from argusqt.model.table import Table


def minimum_protection(problem: CSPProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LPL, UPL and upper bounds with every primary's levels demanding a nonzero interval.

    The audit forgives half a unit of the last decimal on each side, so levels of 0 (a zero
    cell, a manual change, a JJ file) or below a unit pass a primary the attacker recomputes
    exactly. Such a primary gets UPL = one unit of the last decimal, τ-Argus's own minimum
    in its JJ files: the attacker must then reach at least half a unit above the value, so
    the cell is never exactly derivable (argusqt/docs/methods.md §12).
    """
    prim = is_primary(problem.status)
    lpl = np.asarray(problem.lpl, dtype=float)
    upl = np.asarray(problem.upl, dtype=float)
    tol = problem.tolerance
    unit = 2.0 * tol
    implied = np.maximum(lpl - tol, 0.0) + np.maximum(upl - tol, 0.0)  # width the audit demands
    narrow = prim & (implied < tol * (1.0 - 1e-9))
    if not narrow.any():
        return problem.lpl, problem.upl, problem.upper
    upl = np.where(narrow, np.maximum(upl, unit), upl)
    values = np.asarray(problem.values, dtype=float)
    upper = np.where(narrow, np.maximum(problem.upper, values + upl), problem.upper)
    return problem.lpl, upl, upper


class _Relations:
    """`CSPProblem.relations`: scipy's csr_matrix for its readers, as always; a small table's
    relations are stored as a SmallCompressed (no scipy.sparse on its path) and turned into
    that matrix, with the same arrays, at the first read (docs/design.md, D-78)."""

    def __get__(self, problem: CSPProblem | None, owner: type | None = None) -> sp.csr_matrix:
        if problem is None:
            raise AttributeError("relations")  # a field without a default
        return scipy_of(problem.__dict__["_relations"])

    def __set__(self, problem: CSPProblem, value: sp.csr_matrix | SmallCompressed) -> None:
        problem.__dict__["_relations"] = value


@dataclass(eq=False)
class CSPProblem:
    """Cells i with value a_i, bounds l_i ≤ a_i ≤ u_i, cost w_i, status, LPL/UPL/SPL; M a = b."""

    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    cost: np.ndarray
    status: np.ndarray
    lpl: np.ndarray
    upl: np.ndarray
    if TYPE_CHECKING:
        relations: sp.csr_matrix
    else:  # stored as given, read as scipy's matrix (_Relations)
        relations: sp.csr_matrix = _Relations()
    rhs: np.ndarray
    spl: np.ndarray | None = None
    decimals: int = 0
    #: optional structure for modular / network methods: codelists of the table dimensions
    dims: list[CodeList] | None = None
    #: respondents per cell — holdings when the table uses holdings, else records — for the
    #: singleton options (τ-Argus's HiTaS counts holdings too); None when unknown
    freq: np.ndarray | None = None
    names: list[str] = field(default_factory=list)
    #: respondents that alone make up some cell (the insider attacker); None: derived from
    #: `freq` and the relations when the audit needs it
    respondents: Respondents | None = None
    #: every respondent's contribution in the cells it shares (the insider's lower bounds,
    #: docs/design.md D-91); None: only the respondents alone in a cell attack
    floors: Floors | None = None
    #: True for a frequency (count) table, False for a magnitude table, None when unknown
    is_frequency: bool | None = None
    #: the cell key method's inputs (model.cellkey.CellKeyInputs), built when CKM calls it;
    #: None when the table's data has no record keys
    cellkey: Callable[[], Any] | None = None
    #: attacker moves (cells, shifts) through an earlier pattern of this table (the rule on
    #: combined cells runs a method again): the insider audit checks each and starts from
    #: those that still hold (docs/design.md, D-49); nothing else reads them
    moves: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    #: the rule on combined cells (US#160) as a check of a 0/1 pattern (suppressed mask over
    #: the table's cells): (published total, suppressed parts, published parts) of each
    #: relation whose determined sum a rule makes unsafe; OPT rejects such patterns inside
    #: its branch-and-cut so that its bound and "optimal" hold with the rule (D-53)
    pattern_rule: Callable[[np.ndarray], list[tuple[int, np.ndarray, np.ndarray]]] | None = None

    def __post_init__(self) -> None:
        self.lpl, self.upl, self.upper = minimum_protection(self)

    @property
    def relations_small(self) -> sp.csr_matrix | SmallCompressed:
        """The relations as stored: a SmallCompressed on a small table (read it where scipy's
        import is not wanted and only its operations are asked), else scipy's (D-78)."""
        stored: sp.csr_matrix | SmallCompressed = self.__dict__["_relations"]
        return stored

    @property
    def n_cells(self) -> int:
        return int(self.values.shape[0])

    @property
    def primary(self) -> np.ndarray:
        return is_primary(self.status)

    @property
    def candidate(self) -> np.ndarray:
        """Cells that may become secondary suppressions (statuses 1, 2, 13)."""
        return is_candidate(self.status)

    @property
    def secondary(self) -> np.ndarray:
        return is_secondary(self.status)

    def pattern_statuses(self, suppressed: np.ndarray) -> tuple[np.ndarray, float]:
        """Statuses once `suppressed` is the pattern (candidates in it become secondaries, by
        their own status) and its cost: the new secondaries' plus the ones the table had."""
        status = np.asarray(self.status).copy()
        newly = suppressed & self.candidate
        status[newly] = secondary_status_for(status[newly])
        return status, float(np.asarray(self.cost, dtype=float)[newly | self.secondary].sum())

    @property
    def tolerance(self) -> float:
        """Audit pass tolerance: half a unit of the last published decimal
        (argusqt/docs/methods.md §12)."""
        return 0.5 * 10.0 ** (-self.decimals)

    @classmethod
    def from_table(
        cls, table: Table, *, apriori_percent: float | None = None, status: np.ndarray | None = None
    ) -> CSPProblem:
        """Instance of a Table with τ-Argus's default bounds (argusqt/docs/methods.md §1.3).

        Bounds: l = min(0, 1.5·min value), u = 1.5·max value over non-empty cells, widened for
        primaries so that l ≤ a − LPL and a + UPL ≤ u. `apriori_percent` instead bounds each
        cell within ±P % of its value (hypercube-style attacker). `status`: the statuses to
        solve from instead of the table's (Protect: without the last method's secondaries).
        """
        values = np.asarray(table.value, dtype=float)
        status = np.asarray(table.status if status is None else status).astype(np.int16)
        nonempty = status != Status.EMPTY
        if nonempty.any():
            vmin = float(values[nonempty].min())
            vmax = float(values[nonempty].max())
        else:
            vmin = vmax = 0.0
        lo = min(0.0, 1.5 * vmin)
        hi = 1.5 * vmax if vmax > 0 else max(1.0, abs(lo))
        lower = np.full(values.shape, lo)
        upper = np.full(values.shape, hi)
        if apriori_percent is not None:
            span = np.abs(values) * apriori_percent / 100.0
            lower = np.maximum(lower, values - span)
            upper = np.minimum(upper, values + span)
        lpl, upl, floor = _levels(table, status, values)
        prim = is_primary(status)
        lpl[~prim] = 0.0
        upl[~prim] = 0.0
        if floor is not None:  # a suppressed count is not empty (D-94)
            lower = np.maximum(lower, floor)
        lower = np.where(prim, np.minimum(lower, values - lpl), lower)
        upper = np.where(prim, np.maximum(upper, values + upl), upper)
        rel = table.relations_small
        use_h = bool(table.spec.use_holdings) and table.hfreq is not None
        freq: np.ndarray | None = np.asarray(table.hfreq if use_h else table.freq, dtype=float)
        records = np.asarray(table.freq, dtype=float)
        if rel.shape[0] and np.abs(rel @ records).max() > 1e-6:
            # counts that do not add up (a table file without frequencies gets 1 per cell)
            # say nothing about respondents: no singleton options, no insider attacker
            freq = None
        return cls(
            values=values,
            lower=lower,
            upper=upper,
            cost=np.asarray(table.cost, dtype=float).copy(),
            status=status,
            lpl=lpl,
            upl=upl,
            relations=cast("sp.csr_matrix", rel),  # kept as given, read as scipy's (_Relations)
            rhs=np.zeros(rel.shape[0]),
            spl=np.zeros(values.shape),
            decimals=int(table.decimals),
            dims=list(table.dims),
            freq=freq,
            respondents=respondents_of(table, scipy_of(rel)) if freq is not None else None,
            floors=floors_of(table) if freq is not None else None,
            is_frequency=bool(table.spec.is_frequency),
            cellkey=_cell_key_source(table),
        )


def protected_levels(table: Table) -> tuple[np.ndarray, np.ndarray]:
    """The table's LPL and UPL as every method and audit protects them, for what is shown or
    written: a count's lower level ends at the cell's known non-empty leaves (D-94)."""
    values = np.asarray(table.value, dtype=float)
    lpl, upl, _ = _levels(table, np.asarray(table.status).astype(np.int16), values)
    return lpl, upl


def _levels(
    table: Table, status: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The rule's levels, a primary's lower one ended at the count floor, and that floor."""
    lpl = np.asarray(table.lpl, dtype=float).copy()
    upl = np.asarray(table.upl, dtype=float).copy()
    floor = count_floor(table, status, values)
    if floor is not None:  # a suppressed count is not empty: levels end at that (D-94)
        lpl = np.where(is_primary(status), np.minimum(lpl, values - floor), lpl)
    return lpl, upl, floor


def count_floor(table: Table, status: np.ndarray, values: np.ndarray) -> np.ndarray | None:
    """Per cell, the count an outsider knows it holds at least: its non-empty leaf cells, each
    1 or more, when every empty cell prints '-' in an unweighted count table (D-94)."""
    if not table.spec.is_frequency or table.spec.use_weights or not table.dims:
        return None  # a magnitude or weighted cell may be non-empty and below 1
    empty = (status == Status.EMPTY) | (status == Status.EMPTY_NONSTRUCTURAL)
    if (values[~empty] < 1.0).any():
        return None  # an empty cell is suppressed (or counts that are not counts)
    shape = tuple(len(d) for d in table.dims)
    leaf = np.ones(shape, dtype=bool)
    for d, dim in enumerate(table.dims):
        leaf &= np.asarray(dim.is_leaf, dtype=bool).reshape(
            [-1 if e == d else 1 for e in range(len(shape))]
        )
    floor = (leaf & ~empty.reshape(shape)).astype(float)
    for d, dim in enumerate(table.dims):  # every leaf adds to itself and its ancestors
        chains = dim.ancestors
        below = np.repeat(np.arange(len(dim)), [len(c) for c in chains])
        above = np.fromiter((a for c in chains for a in c), dtype=np.int64, count=below.size)
        keep = np.asarray(dim.is_leaf, dtype=bool)[below]
        part = np.moveaxis(floor, d, 0)
        total = np.zeros_like(part)
        np.add.at(total, above[keep], part[below[keep]])
        floor = np.moveaxis(total, 0, d)
    floor = floor.ravel()
    if (floor > values + 1e-9).any():
        return None  # counts that do not add up: no floor beyond the bounds
    return floor


def _cell_key_source(table: Table) -> Callable[[], Any] | None:
    """CKM's inputs of a table, computed only when the method asks (argusqt/docs/methods.md §16.1)."""
    source = getattr(table, "source", None)
    if not isinstance(source, tuple) or getattr(source[0], "cellkey", None) is None:
        return None
    from argusqt.model.cellkey import cell_key_inputs  # lazy: only tables with cell keys

    return lambda: cell_key_inputs(table)
