"""The smallest rounding base a table allows, apart from the rounding solver: the registry's
table facts (the Protect dialog, every batch `<SUPPRESS>`) read it, and importing
`rounding` for it would load SCIP for methods that do not use it (docs/design.md, "Process
start")."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from argusqt.protection.problem import CSPProblem

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
