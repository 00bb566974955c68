"""Singleton and minimum-frequency refinements (argusqt/docs/methods.md §5): virtual cells +
relations.

A respondent of a single-contributor cell knows it exactly and could undo the protection
of another primary of the same relation. A virtual cell v = Σ of those primaries, unsafe
with a tiny upper protection level, forces a third suppression in that relation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

    from argusqt.protection.core.options import SuppressOptions
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.model.status import Status
from argusqt.protection.core.params import TableFacts, param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult, ProtectionResult

OPTIONS = ("SS", "SM", "MF")

#: solver option keys of the singleton options (what OPT and MOD read, what run_method reads
#: for the methods it adds virtual cells for); every suppression method has them on by default
SINGLETON_KEYS = ("singleton_singleton", "singleton_multiple", "min_freq")

_SINGLETON_INFO = {
    "SS": dict(
        position=2,
        batch="singSing",
        label="Protect singletons",
        help="Two single-contributor primaries in one relation: a third cell is suppressed, "
        "so neither respondent can recompute the other.",
    ),
    "SM": dict(
        position=3,
        batch="singMult",
        label="Protect multiple singletons",
        help="A single-contributor primary beside one other primary of the same relation: "
        "a third cell is suppressed.",
    ),
    "MF": dict(
        position=4,
        batch="minFreq",
        label="Minimum frequency protection",
        help="Primaries of one relation with fewer respondents together than the minimum "
        "frequency of the FREQ rule: a third cell is suppressed.",
    ),
}


def singleton_param(option: Literal["SS", "SM", "MF"], *, extension: bool) -> Any:
    """A suppression method's singleton option as a parameter field (positions 2, 3, 4; on by
    default: argusqt/docs/methods.md §5)."""
    return param(True, extension=extension, **_SINGLETON_INFO[option])  # type: ignore[arg-type]


def singleton_solver_options(params: Any, facts: TableFacts) -> dict[str, Any]:
    """The solver keys of a method's singleton options; MF compares with the table's minimum
    frequency (none without a FREQ rule)."""
    minfreq = facts.min_frequency if params.min_freq_option and facts.min_frequency else 0
    return {
        "singleton_singleton": bool(params.singleton_singleton),
        "singleton_multiple": bool(params.singleton_multiple),
        "min_freq": int(minfreq),
    }


def singleton_request(options: dict) -> tuple[list[str], int]:
    """(options on, minimum frequency) from solver options; SS and SM default on, MF is on
    when a minimum frequency ≥ 2 is given."""
    on = {
        "SS": bool(options.get("singleton_singleton", True)),
        "SM": bool(options.get("singleton_multiple", True)),
    }
    minfreq = int(options.get("min_freq", 0) or 0)
    on["MF"] = minfreq >= 2
    return sorted(k for k, v in on.items() if v), minfreq if on["MF"] else 0


def _normalise(options) -> set[str]:
    if options is None:
        return set()
    if isinstance(options, str):
        options = options.replace("+", ",").replace("|", ",").split(",")
    out = {str(o).strip().upper() for o in options if str(o).strip()}
    bad = out - set(OPTIONS)
    if bad:
        raise ValueError(f"unknown singleton option(s) {sorted(bad)}; expected SS, SM or MF")
    return out


def singleton_groups(
    problem: CSPProblem, freq: np.ndarray | None, options, minfreq: int = 0
) -> list[np.ndarray]:
    """Sets of primary cells (children of one relation) that need a virtual cell.

    Only the interior cells (coefficient +1) of each relation are considered; a group is
    kept once even if several relations produce it.
    """
    opts = _normalise(options)
    if not opts:
        return []
    f = np.asarray(problem.freq if freq is None else freq, dtype=float)
    if f is None or f.shape != (problem.n_cells,):
        raise ValueError("singleton options need the frequency of every cell")
    rel = problem.relations.tocsr()
    prim = problem.primary
    groups: dict[tuple[int, ...], np.ndarray] = {}
    # relations that contain at least two primary children
    child = rel.multiply(rel > 0).tocsr()
    child.eliminate_zeros()
    pattern = sp.csr_matrix((np.ones(child.nnz), child.indices, child.indptr), shape=child.shape)
    n_prim = pattern @ prim.astype(float)
    for r in np.flatnonzero(n_prim >= 2):
        cells = child.indices[child.indptr[r] : child.indptr[r + 1]]
        pc = np.sort(cells[prim[cells]])
        fr = f[pc]
        single = fr == 1
        hit = False
        if pc.size == 2:
            n_single = int(single.sum())
            hit |= "SS" in opts and n_single == 2
            hit |= "SM" in opts and n_single == 1 and fr[~single][0] > 1
        if "MF" in opts and minfreq > 0:
            tot = float(fr.sum())
            hit |= 0 < tot < minfreq
        if hit:
            groups.setdefault(tuple(pc.tolist()), pc)
    return list(groups.values())


def add_singleton_cells(
    problem: CSPProblem,
    freq: np.ndarray | None = None,
    options=("SS", "SM", "MF"),
    minfreq: int = 0,
) -> tuple[CSPProblem, int]:
    """Problem extended with one virtual cell per group and its relation; (problem, n_virtual).

    Virtual cells come after the n table cells: value = Σ group, status 3 (unsafe), cost 1,
    LPL 0, UPL = max(10⁻⁴·v, 10^-decimals), bounds Σ of the members' bounds.
    """
    groups = singleton_groups(problem, freq, options, minfreq)
    nv = len(groups)
    if nv == 0:
        return problem, 0
    n = problem.n_cells
    values = np.asarray(problem.values, dtype=float)
    v_val = np.array([values[g].sum() for g in groups])
    v_lo = np.array([problem.lower[g].sum() for g in groups])
    v_hi = np.array([problem.upper[g].sum() for g in groups])
    unit = 10.0 ** (-problem.decimals)
    v_upl = np.maximum(1e-4 * np.abs(v_val), unit)
    v_hi = np.maximum(v_hi, v_val + v_upl)
    rows = np.concatenate([np.full(g.size + 1, k) for k, g in enumerate(groups)])
    cols = np.concatenate([np.concatenate([[n + k], g]) for k, g in enumerate(groups)])
    vals = np.concatenate([np.concatenate([[-1.0], np.ones(g.size)]) for g in groups])
    new_rel = sp.csr_matrix((vals, (rows, cols)), shape=(nv, n + nv))
    old = sp.hstack([problem.relations, sp.csr_matrix((problem.relations.shape[0], nv))])
    relations = sp.vstack([old, new_rel], format="csr")
    f = problem.freq if freq is None else np.asarray(freq, dtype=float)
    v_freq = np.array([f[g].sum() for g in groups]) if f is not None else None

    def ext(arr, extra):
        return None if arr is None else np.concatenate([np.asarray(arr), extra])

    status = np.concatenate(
        [problem.status, np.full(nv, Status.UNSAFE_RULE, dtype=problem.status.dtype)]
    )
    extended = replace(
        problem,
        values=np.concatenate([values, v_val]),
        lower=np.concatenate([problem.lower, v_lo]),
        upper=np.concatenate([problem.upper, v_hi]),
        cost=np.concatenate([problem.cost, np.ones(nv)]),
        status=status,
        lpl=np.concatenate([problem.lpl, np.zeros(nv)]),
        upl=np.concatenate([problem.upl, v_upl]),
        relations=relations,
        rhs=np.concatenate([problem.rhs, np.zeros(nv)]),
        spl=ext(problem.spl, np.zeros(nv)),
        freq=ext(f, v_freq) if v_freq is not None else None,
        names=list(problem.names) + [f"virtual {k + 1}" for k in range(nv)]
        if problem.names
        else [],
    )
    return extended, nv


def drop_virtual(result: ProtectionResult, n_cells: int) -> ProtectionResult:
    """The result restricted to the first `n_cells` (real) cells: virtual cells removed."""

    def cut(arr):
        return None if arr is None else np.asarray(arr)[:n_cells]

    result.status = cut(result.status)
    result.published = cut(result.published)
    result.interval_lower = cut(result.interval_lower)
    result.interval_upper = cut(result.interval_upper)
    if isinstance(result.audit, AuditResult):
        a = result.audit
        result.audit = replace(
            a,
            lower=cut(a.lower),
            upper=cut(a.upper),
            required_lower=cut(a.required_lower),
            required_upper=cut(a.required_upper),
            audited=cut(a.audited),
            passed=cut(a.passed),
            exact=cut(a.exact),
        )
    return result


# ------------- OPT's and MOD's virtual cells (one per risky relation, argusqt/docs/methods.md §5)
def with_singleton_cells(
    problem: CSPProblem,
    *,
    singleton_singleton: bool = False,
    singleton_multiple: bool = False,
    min_freq: int = 0,
    true_primary: np.ndarray | None = None,
) -> CSPProblem:
    """Problem plus one virtual unsafe cell v = Σ primaries per risky relation
    (argusqt/docs/methods.md §5).

    Risky relations (interior cells only, as argusqt.protection.suppress.singleton): exactly two true
    primaries, both singletons (SS) or one singleton and one multi-respondent cell (SM); or
    ≥ 2 true primaries with 0 < Σ freq < min_freq (MF).
    Virtual cells come after the original cells (indices ≥ problem.n_cells).
    """
    if problem.freq is None or not (singleton_singleton or singleton_multiple or min_freq > 0):
        return problem
    prim = problem.primary if true_primary is None else np.asarray(true_primary, dtype=bool)
    freq = np.asarray(problem.freq, dtype=float)
    rel = sp.csr_matrix(problem.relations)
    groups: list[tuple[int, ...]] = []
    # the primaries among the interior cells (coefficient > 0) of each relation, read from
    # the CSR arrays: scipy's multiply, comparison and product cost ~0.4 ms a call on a
    # 25-cell subtable, MOD makes one per subtable (docs/design.md, D-80); only the set of
    # a relation's cells matters below (sorted keys, sums of integer frequencies)
    row_of = np.repeat(np.arange(rel.shape[0]), np.diff(rel.indptr))
    inner = (rel.data > 0) & prim[rel.indices]
    n_prim = np.bincount(row_of[inner], minlength=rel.shape[0])
    for r in np.flatnonzero(n_prim >= 2):
        lo_r, hi_r = rel.indptr[r], rel.indptr[r + 1]
        pc = rel.indices[lo_r:hi_r][inner[lo_r:hi_r]]
        f = freq[pc]
        risky = False
        if pc.size == 2:
            n_single = int((f == 1).sum())
            risky = (singleton_singleton and n_single == 2) or (
                singleton_multiple and n_single == 1 and (f > 1).any()
            )
        if not risky and min_freq > 0:
            risky = 0 < f.sum() < min_freq
        if risky:
            key = tuple(sorted(int(c) for c in pc))
            if key not in groups:
                groups.append(key)
    if not groups:
        return problem
    n, k = problem.n_cells, len(groups)
    vals = np.array([problem.values[list(g)].sum() for g in groups])
    lo = np.array([problem.lower[list(g)].sum() for g in groups])
    hi = np.array([problem.upper[list(g)].sum() for g in groups])
    unit = 10.0 ** (-problem.decimals)
    upl = np.maximum(1e-4 * np.abs(vals), unit)
    hi = np.maximum(hi, vals + upl)
    spl = problem.spl if problem.spl is not None else np.zeros(n)
    return CSPProblem(
        values=np.r_[problem.values, vals],
        lower=np.r_[problem.lower, lo],
        upper=np.r_[problem.upper, hi],
        cost=np.r_[problem.cost, np.ones(k)],
        status=np.r_[problem.status, np.full(k, Status.UNSAFE_MANUAL, dtype=problem.status.dtype)],
        lpl=np.r_[problem.lpl, np.zeros(k)],
        upl=np.r_[problem.upl, upl],
        relations=_with_group_rows(rel, groups, n),
        rhs=np.r_[problem.rhs, np.zeros(k)],
        spl=np.r_[spl, np.zeros(k)],
        decimals=problem.decimals,
        dims=None,
        freq=np.r_[freq, np.array([freq[list(g)].sum() for g in groups])],
        names=list(problem.names),
    )


def _with_group_rows(rel: sp.csr_matrix, groups: list[tuple[int, ...]], n: int) -> sp.csr_matrix:
    """`rel` with k columns of zeros and one row per group (Σ its cells − its virtual cell
    n + j = 0): the arrays scipy's hstack, COO conversion and vstack gave (each group's
    cells ascending, then its virtual cell; float data), built without them (D-80)."""
    k = len(groups)
    sizes = np.fromiter((len(g) + 1 for g in groups), dtype=np.int64, count=k)
    cols = np.fromiter(
        (c for j, g in enumerate(groups) for c in (*g, n + j)),
        dtype=np.int64,
        count=int(sizes.sum()),
    )
    vals = np.ones(cols.size)
    vals[np.cumsum(sizes) - 1] = -1.0
    nnz = int(rel.indptr[-1])
    indptr = np.concatenate([rel.indptr[:-1].astype(np.int64), nnz + np.r_[0, np.cumsum(sizes)]])
    idx_type = np.int32 if max(nnz + cols.size, n + k) < np.iinfo(np.int32).max else np.int64
    return sp.csr_matrix(
        (
            np.concatenate([rel.data[:nnz].astype(float), vals]),
            np.concatenate([rel.indices[:nnz].astype(idx_type), cols.astype(idx_type)]),
            indptr.astype(idx_type),
        ),
        shape=(rel.shape[0] + k, n + k),
    )


def singleton_options(opts: SuppressOptions) -> tuple[bool, bool, int]:
    """(SS, SM, min_freq) from the solver options (off unless given: run_method gives them)."""
    return (
        bool(opts.singleton_singleton),
        bool(opts.singleton_multiple),
        int(opts.min_freq or 0),
    )
