"""The subtables of a hierarchical table (argusqt/docs/methods.md §6): one parent node per
dimension, top-down, each a local protection problem with its margins fixed.

MOD solves them one by one and GH searches boxes in them; apart from modular.py so that GH
reads them without MOD's branch-and-cut.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import scipy.sparse as sp

from argusqt.dataclass import dataclass
from argusqt.errors import MethodError
from argusqt.model.codelist import CodeList
from argusqt.model.status import Status
from argusqt.model.table import build_relations
from argusqt.protection.core.problem import CSPProblem

#: HiTaS LOWERMARG 0.9 / UPPERMARG 1.1: protection of inherited secondaries
INHERITED_SHARE = 0.10


@dataclass
class Subtable:
    """One parent node per dimension; `cells` global ids in local row-major order."""

    parents: tuple[int, ...]
    depth: int
    cells: np.ndarray
    shape: tuple[int, ...]
    #: local cells that are fixed margins (some coordinate is a non-root parent)
    margin: np.ndarray


def subtables(dims: list[CodeList]) -> list[Subtable]:
    """All subtables in top-down order (increasing total depth of the parent vector)."""
    shape = tuple(len(d) for d in dims)
    out = []
    for combo in itertools.product(*[d.parents for d in dims]):
        nodes = [[p, *dims[k].children[p]] for k, p in enumerate(combo)]
        local_shape = tuple(len(n) for n in nodes)
        grids = np.meshgrid(*[np.asarray(n) for n in nodes], indexing="ij")
        cells = np.ravel_multi_index(tuple(g.ravel() for g in grids), shape)
        lgrids = np.meshgrid(*[np.arange(len(n)) for n in nodes], indexing="ij")
        margin = np.zeros(cells.size, dtype=bool)
        for k, p in enumerate(combo):
            if dims[k].parent[p] >= 0:  # non-root parent: its position is a fixed margin
                margin |= lgrids[k].ravel() == 0
        depth = int(sum(int(dims[k].depth[p]) for k, p in enumerate(combo)))
        out.append(Subtable(tuple(combo), depth, cells, local_shape, margin))
    out.sort(key=lambda s: s.depth)
    return out


def _local_relations(shape: tuple[int, ...]) -> sp.csr_matrix:
    """Relations of a non-hierarchical table with margins at position 0 of every dimension
    (a copy: the subtables of a table share a few shapes, D-63)."""
    return _relations_of_shape(shape).copy()


@functools.lru_cache(maxsize=64)
def _relations_of_shape(shape: tuple[int, ...]) -> sp.csr_matrix:
    """_local_relations' matrix, built once per shape (kept read-only: callers get copies)."""
    # CodeList.flat sorts codes by bytes: zero-padded codes keep positions 1..n-1 in order
    flat = [CodeList.flat(f"d{k}", [f"{i:06d}" for i in range(1, n)]) for k, n in enumerate(shape)]
    return build_relations(flat)


def _subproblem(
    problem: CSPProblem, sub: Subtable, sup: np.ndarray, true_prim: np.ndarray
) -> tuple[CSPProblem, np.ndarray, np.ndarray]:
    """Local CSP of a subtable, its `fixed` vector and the local true-primary mask."""
    c = sub.cells
    values = problem.values[c]
    lower = problem.lower[c].copy()
    upper = problem.upper[c].copy()
    status = problem.status[c].copy()
    lpl = np.where(true_prim[c], problem.lpl[c], 0.0)
    upl = np.where(true_prim[c], problem.upl[c], 0.0)
    was_sup = sup[c]
    inherited = was_sup & ~true_prim[c]
    share = INHERITED_SHARE * np.abs(values)
    lpl = np.where(inherited, np.minimum(share, values - lower), lpl)
    upl = np.where(inherited, np.minimum(share, upper - values), upl)
    status = np.where(inherited, Status.UNSAFE_MANUAL, status).astype(problem.status.dtype)
    fixed = np.full(c.size, np.nan)
    cand = problem.candidate[c] & ~was_sup
    fixed[~cand] = 0.0
    fixed[was_sup] = 1.0
    fixed[sub.margin & ~was_sup] = 0.0  # published margins stay published
    rel = _local_relations(sub.shape)
    local = CSPProblem(
        values=values,
        lower=lower,
        upper=upper,
        cost=np.asarray(problem.cost, dtype=float)[c],
        status=status,
        lpl=lpl,
        upl=upl,
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        spl=np.zeros(c.size),
        decimals=problem.decimals,
        freq=None if problem.freq is None else np.asarray(problem.freq)[c],
    )
    return local, fixed, true_prim[c]


def _table_part(problem: CSPProblem) -> CSPProblem:
    """The table cells only: callers may append virtual singleton cells after them."""
    n = math.prod(len(d) for d in problem.dims or [])
    if n == problem.n_cells:
        return problem
    if n > problem.n_cells:
        raise MethodError("the problem has fewer cells than its dimensions span")
    rel = sp.csr_matrix(problem.relations)
    touches_virtual = np.asarray((abs(rel[:, n:]) > 0).sum(axis=1)).ravel() > 0
    keep = np.flatnonzero(~touches_virtual)
    return CSPProblem(
        values=problem.values[:n],
        lower=problem.lower[:n],
        upper=problem.upper[:n],
        cost=np.asarray(problem.cost)[:n],
        status=problem.status[:n],
        lpl=problem.lpl[:n],
        upl=problem.upl[:n],
        relations=rel[keep][:, :n].tocsr(),
        rhs=np.asarray(problem.rhs)[keep],
        spl=None if problem.spl is None else problem.spl[:n],
        decimals=problem.decimals,
        dims=problem.dims,
        freq=None if problem.freq is None else np.asarray(problem.freq)[:n],
        names=list(problem.names[:n]),
    )
