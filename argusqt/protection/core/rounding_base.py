"""The smallest rounding base a table allows, apart from the rounding solver: the registry's
table facts (the Protect dialog, every batch `<SUPPRESS>`) read it, and importing
`rounding` for it would load SCIP for methods that do not use it (docs/design.md, "Process
start")."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from argusqt.protection.core.problem import CSPProblem

#: relative tolerance of the rounding module's comparisons of multiples
REL_TOL = 1e-9


def minimum_base(
    problem: CSPProblem,
    *,
    min_frequency: float | None = None,
    frequency_table: bool | None = None,
) -> int:
    """argusqt/docs/rules.md §4.4: frequency tables → minimum frequency, else max(LPL + UPL) of
    primaries, ≥ 1.

    `frequency_table` None: a table is a frequency table when its values equal its
    frequencies (or, without frequencies, when a minimum frequency is given).
    """
    if frequency_table is None:
        frequency_table = problem.is_frequency
    if frequency_table is None:
        freq = problem.freq
        frequency_table = freq is None or np.array_equal(
            np.asarray(freq, dtype=float), np.asarray(problem.values, dtype=float)
        )
    if frequency_table and min_frequency is not None:
        return max(1, math.ceil(float(min_frequency) - REL_TOL))
    prim = problem.primary
    if not prim.any():
        return 1
    need = float(np.max(np.asarray(problem.lpl)[prim] + np.asarray(problem.upl)[prim]))
    return max(1, math.ceil(need - REL_TOL))


def existence_interval(
    published: np.ndarray,
    base: float,
    steps: int = 0,
    unit: float = 1.0,
    nonnegative: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """What an attacker who knows b and K learns from a rounded value P
    (argusqt/docs/methods.md §9): z ∈ [P − (K+1)b + unit, P + (K+1)b − unit], the lower end
    not below 0 in a table without negative values (a rounding never goes below 0 there).

    With K ≥ 1 a value 12 rounds to 5 (base 5: floor 10, one step down), so the upper end
    is P + (K+1)b − unit also for 0 < P < (K+1)b.
    """
    a = np.asarray(published, dtype=float)
    span = (steps + 1) * base
    lo = a - span + unit
    hi = a + span - unit
    if nonnegative:
        lo = np.maximum(lo, 0.0)
    return lo, hi


def protection_targets(
    problem: CSPProblem, nonnegative: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(primary mask, a − LPL, a + UPL): the interval a rounding interval must cover.

    In a table without negative values everyone knows z ≥ 0, so a − LPL is not asked
    below 0 (a count of 1 with LPL 1 is covered by [0, 4]).
    """
    z = np.asarray(problem.values, dtype=float)
    prim = np.asarray(problem.primary, dtype=bool)
    lo_req = z - np.where(prim, np.asarray(problem.lpl, dtype=float), 0.0)
    hi_req = z + np.where(prim, np.asarray(problem.upl, dtype=float), 0.0)
    if nonnegative:
        lo_req = np.maximum(lo_req, 0.0)
    return prim, lo_req, hi_req


def k_domain(z: np.ndarray, base: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The multiples k (value k·b) a K-step rounding may give each value: a multiple ±K,
    else ⌊z/b⌋ − K … ⌊z/b⌋ + 1 + K, never below 0 for z ≥ 0 (as the rounding model)."""
    q = np.asarray(z, dtype=float) / base
    near = np.round(q)
    multiple = np.abs(q - near) <= REL_TOL * np.maximum(1.0, np.abs(q))
    u = np.where(multiple, near, np.floor(q))
    down = np.where(q >= 0, np.minimum(steps, np.maximum(u, 0)), steps)
    return u - down, u + np.where(multiple, 0, 1) + steps


def covering_multiples(
    lo_req: np.ndarray, hi_req: np.ndarray, base: float, steps: int, unit: float
) -> tuple[np.ndarray, np.ndarray]:
    """The multiples k whose rounding interval covers [lo_req, hi_req] (lo_req ≥ 0 in a
    table without negative values): k·b − (K+1)b + unit ≤ lo_req and k·b + (K+1)b − unit ≥
    hi_req, i.e. kmin ≤ k ≤ kmax (whole numbers; empty when kmin > kmax)."""
    span = (steps + 1) * base
    eps = REL_TOL * np.maximum(1.0, np.abs(hi_req) / base)
    kmax = np.floor((lo_req + span - unit) / base + eps)
    kmin = np.ceil((hi_req - span + unit) / base - eps)
    return kmin, kmax


def uncovered_cells(problem: CSPProblem, base: int, steps: int) -> np.ndarray:
    """The primaries no allowed multiple of `base` can publish without the rounding interval
    lying inside their protection interval (argusqt/docs/methods.md §9)."""
    z = np.asarray(problem.values, dtype=float)
    nonneg = bool(np.all(z >= 0))
    unit = 10.0 ** (-max(0, int(problem.decimals)))
    prim, lo_req, hi_req = protection_targets(problem, nonneg)
    cells = np.flatnonzero(prim)
    dlo, dhi = k_domain(z[cells], base, steps)
    clo, chi = covering_multiples(lo_req[cells], hi_req[cells], base, steps, unit)
    return cells[np.maximum(dlo, clo) > np.minimum(dhi, chi)]


def covering_base(problem: CSPProblem, steps: int = 0, start: int | None = None) -> int:
    """The smallest base ≥ `start` (default: the minimum base) at which every primary has a
    multiple within its K-step rounding whose rounding interval covers its protection
    interval: the base the program proposes (argusqt/docs/methods.md §9).

    A base ≥ max(LPL + UPL) + 2 units always has one (rounded down covers when
    r + UPL ≤ b − unit, up when r ≥ LPL + unit, r = z − ⌊z/b⌋·b), so the search ends.
    """
    b = max(1, int(start if start is not None else minimum_base(problem)))
    prim = problem.primary
    if not prim.any():
        return b
    unit = 10.0 ** (-max(0, int(problem.decimals)))
    levels = np.asarray(problem.lpl)[prim] + np.asarray(problem.upl)[prim]
    enough = max(b, math.ceil(float(levels.max()) + 2 * unit - REL_TOL))
    while b < enough and uncovered_cells(problem, b, steps).size:
        b += 1
    return b
