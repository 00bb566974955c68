"""A table: cells in row-major order over its dimensions, per-cell arrays, sparse relations.

See docs/design.md for why cells are dense numpy arrays and relations a scipy.sparse matrix.
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:  # imported when the relations are first built: reading and tabulating a
    import scipy.sparse as sp  # table does not pay scipy.sparse's import (docs/design.md)

    # annotations only: the layers above model fill these fields
    from argusqt.model.smallcsr import SmallCompressed
    from argusqt.protection.core.result import AuditResult
    from argusqt.recode.apply import RecodeState

from argusqt.model import scipy_sparse, smallcsr
from argusqt.model.codelist import CodeList
from argusqt.model.rulespec import SafetyRules
from argusqt.model.status import Status

CostKind = Literal["variable", "frequency", "unity", "distance"]

#: Largest number of explanatory variables a table may have: τ-Argus's 6 (and the batch
#: file's); a table file (tabular input) takes 4 (io.tabular).
MAX_DIMENSIONS = 6


@dataclass
class CostSpec:
    """Cost of suppressing a cell (argusqt/docs/rules.md §6): a variable, frequency (-1), unity
    (-2), distance (-3)."""

    kind: CostKind = "variable"
    variable: str | None = None  # None with kind "variable" = the response
    lam: float = 1.0


@dataclass
class TableSpec:
    """What the user asked for: explanatory variables, response (None = frequency), rules."""

    explanatory: list[str]
    response: str | None
    shadow: str | None = None  # None = response
    cost: CostSpec = field(default_factory=CostSpec)
    rules: SafetyRules = field(default_factory=SafetyRules)

    @property
    def is_frequency(self) -> bool:
        return self.response is None

    @property
    def use_weights(self) -> bool:
        return self.rules.use_weights

    @property
    def use_holdings(self) -> bool:
        return self.rules.uses_holdings


#: what a protected table publishes: suppressed cells, rounded values, CTA values, intervals
Face = Literal["suppress", "round", "cta", "interval", "ckm"]


@dataclass(frozen=True)
class ProtectionInfo:
    """The method whose audited result was copied back to a table (reports, exports, files)."""

    method: str  # batch name, e.g. "OPT"
    face: Face
    params: str = ""  # the parameters in words, for reports
    #: public parameters an attacker knows and the publication verdict needs (RND: base, steps)
    public: tuple[tuple[str, float], ...] = ()


@dataclass(eq=False)
class Table:
    """Cells of a table and everything the rules and protection methods need per cell.

    All per-cell arrays have length `n_cells`; cell index = row-major over `dims`
    (argusqt/docs/formats.md §9.2). `top`/`htop` hold the largest absolute shadow contributions
    (individual / holding level), columns in decreasing order, 0 where absent; for
    weighted tables they hold "unit" contributions (argusqt/docs/rules.md §3.9).
    """

    spec: TableSpec
    dims: list[CodeList]
    value: np.ndarray  # response sum (frequency tables: count)
    freq: np.ndarray  # number of records (float: weighted tables may need Σw too)
    shadow: np.ndarray  # shadow sum (rules look at it)
    cost_raw: np.ndarray  # cost variable sum / frequency / 1 before lambda
    top: np.ndarray  # (n_cells, K) largest |shadow| contributions
    hfreq: np.ndarray | None = None  # number of holdings
    htop: np.ndarray | None = None  # (n_cells, K) largest |holding sums|
    weight_sum: np.ndarray | None = None  # Σ weights (weighted tables)
    request_top: np.ndarray | None = None  # (n_cells, 2): largest |shadow| of requesters c1, c2
    request_freq: np.ndarray | None = None  # number of requesting records
    decimals: int = 0  # of the response (0 for frequency tables)
    status: np.ndarray = field(default=None)  # type: ignore[arg-type]
    lpl: np.ndarray = field(default=None)  # type: ignore[arg-type]
    upl: np.ndarray = field(default=None)  # type: ignore[arg-type]
    cost: np.ndarray = field(default=None)  # type: ignore[arg-type]  # effective cost
    published: np.ndarray | None = None  # rounded / adjusted values after RND or CTA
    interval_lower: np.ndarray | None = None  # published intervals after interval protection
    interval_upper: np.ndarray | None = None
    #: fingerprints (export.gate.fingerprint) of the published face when a protection method's
    #: result was copied back, and when the publication audit last passed; a manual change
    #: after either makes the fingerprint differ, so the table is "not protected" again
    protected_print: str | None = None
    cleared_print: str | None = None
    #: fingerprint of a method's result that failed the publication verdict (kept, not publishable)
    refused_print: str | None = None
    #: the method whose result the table holds (None: not protected by a method) and the
    #: audit of that result (protect.result.AuditResult)
    protection: ProtectionInfo | None = None
    audit: AuditResult | None = None
    #: per cell, the status (1, 2 or 13) a cell had before the protection method now on the
    #: table made it a secondary, 0 elsewhere (None: no method's pattern): the next Protect
    #: solves the problem the user posed, not the one with this method's secondaries fixed
    suppressed_from: np.ndarray | None = None
    source: Any = None  # fine-level contributions kept for recoding (model.tabulate)
    name: str = ""
    notes: list[str] = field(default_factory=list)
    recode_state: RecodeState | None = None  # original coding + recodes applied

    def __post_init__(self) -> None:
        n = self.n_cells
        if self.status is None:
            self.status = np.where(self.freq > 0, Status.SAFE, Status.EMPTY).astype(np.int8)
        if self.lpl is None:
            self.lpl = np.zeros(n)
        if self.upl is None:
            self.upl = np.zeros(n)
        if self.cost is None:
            self.cost = np.abs(self.cost_raw).astype(float)

    # ------------------------------------------------------------------ geometry
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(d) for d in self.dims)

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.shape)) if self.dims else 1

    @property
    def ndim(self) -> int:
        return len(self.dims)

    def cell_index(self, node_indices: tuple[int, ...]) -> int:
        return int(np.ravel_multi_index(node_indices, self.shape))

    def cell_nodes(self, cell: int) -> tuple[int, ...]:
        return tuple(int(i) for i in np.unravel_index(cell, self.shape))

    def cell_codes(self, cell: int) -> tuple[str, ...]:
        return tuple(d.codes[i] for d, i in zip(self.dims, self.cell_nodes(cell), strict=True))

    def variable(self, d: int) -> str:
        """The variable of dimension d (its code list's name, else the specification's)."""
        return str(self.dims[d].name or self.spec.explanatory[d])

    @cached_property
    def missing_mask(self) -> np.ndarray:
        """Cells with a missing code in some dimension (MIS(1) makes them safe)."""
        m = np.zeros(self.shape, dtype=bool)
        for axis, d in enumerate(self.dims):
            shape = [1] * self.ndim
            shape[axis] = len(d)
            m = m | d.is_missing.reshape(shape)
        return m.ravel()

    @cached_property
    def relations(self) -> sp.csr_matrix:
        """Sparse matrix M (relations × cells): −1 on the parent, +1 on each child; M·a = 0."""
        return build_relations(self.dims)

    @cached_property
    def relations_small(self) -> sp.csr_matrix | SmallCompressed:
        """`relations`, or on a small table the same arrays without scipy.sparse (D-78)."""
        if "relations" not in self.__dict__ and relation_nnz(self.dims) <= smallcsr.MAX_NNZ:
            return build_relations_small(self.dims)
        return self.relations

    @property
    def min_protection(self) -> float:
        """Smallest meaningful protection level: 1 for frequency tables, else 10^-decimals."""
        return 1.0 if self.spec.is_frequency else 10.0 ** (-self.decimals)


def build_relations(dims: list[CodeList]) -> sp.csr_matrix:
    """One relation per dimension d, parent node of d and combination of the other codes.

    Order as τ-Argus's JJ output (argusqt/docs/formats.md §9.3): d = 0 first; within d,
    nested loops over the other dimensions in table order; parents in code order.
    """
    return _scipy_relations(*_relation_triplets(dims))


def build_relations_small(dims: list[CodeList]) -> sp.csr_matrix | SmallCompressed:
    """`build_relations`, as a SmallCompressed with the same arrays on a small table: its
    run then needs no scipy.sparse (docs/design.md, D-78)."""
    vals, rows, cols, shape = _relation_triplets(dims)
    if rows.size <= smallcsr.MAX_NNZ:
        if not rows.size and not shape[0]:
            return smallcsr.empty(shape)
        small = smallcsr.from_triplets(vals, rows, cols, shape)
        if small is not None:
            return small
    return _scipy_relations(vals, rows, cols, shape)


def relation_nnz(dims: list[CodeList]) -> int:
    """The relations' nonzeros, counted without building them: per dimension, each parent
    and its children once for every combination of the other dimensions' codes."""
    n = [len(d) for d in dims]
    total = 0
    for d, dim in enumerate(dims):
        n_other = int(np.prod([n[e] for e in range(len(dims)) if e != d]))
        total += n_other * sum(1 + len(dim.children[p]) for p in dim.parents)
    return total


def _scipy_relations(
    vals: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]
) -> sp.csr_matrix:
    """scipy's CSR matrix of the relations' triplets."""
    sparse = scipy_sparse.load()
    if not rows.size and not shape[0]:
        return sparse.csr_matrix(shape)
    return sparse.csr_matrix((vals, (rows, cols)), shape=shape)


def _relation_triplets(
    dims: list[CodeList],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """The relations' (values, rows, columns) in build order and the matrix's shape."""
    shape = tuple(len(d) for d in dims)
    n_cells = int(np.prod(shape))
    strides = np.array([int(np.prod(shape[i + 1 :])) for i in range(len(shape))], dtype=np.int64)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    row0 = 0
    for d, dim in enumerate(dims):
        others = [e for e in range(len(dims)) if e != d]
        other_shape = [shape[e] for e in others]
        n_other = int(np.prod(other_shape)) if others else 1
        # base offset of every combination of the other dimensions (row-major over them)
        if others:
            grids = np.indices(other_shape).reshape(len(others), -1)
            base = (grids * strides[others][:, None]).sum(axis=0)
        else:
            base = np.zeros(1, dtype=np.int64)
        parents = dim.parents
        for k, p in enumerate(parents):
            members = [p, *dim.children[p]]
            coef = np.array([-1.0] + [1.0] * (len(members) - 1))
            # relation ids: combination-major? τ-Argus: loops over other dims, parents inner
            rel_ids = row0 + np.arange(n_other) * len(parents) + k
            for m, c in zip(members, coef, strict=True):
                rows.append(rel_ids)
                cols.append(base + m * strides[d])
                vals.append(np.full(n_other, c))
        row0 += n_other * len(parents)
    if not rows:
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), (0, n_cells)
    return np.concatenate(vals), np.concatenate(rows), np.concatenate(cols), (row0, n_cells)
