"""`np.unique(a)` of an integer array without importing numpy.ma: numpy 2.4's plain
`np.unique` asks `np.ma.is_masked`, whose first use imports numpy.ma (≈ 8 ms of a 0.2-s
batch run that needs no masked array, docs/design.md D-85)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: numpy.typing is not imported at run time (D-92)
    from numpy.typing import ArrayLike

#: dtype kinds whose distinct sorted values any exact method finds alike: booleans and
#: integers (no ±0.0 or NaN whose kept representative could differ)
EXACT_KINDS = "biu"


def sorted_distinct(a: ArrayLike) -> np.ndarray:
    """The sorted distinct values of `a`, flattened: `np.unique(a)` exactly (same values,
    dtype and order); other than booleans and integers, `np.unique` itself answers."""
    arr = np.asarray(a)
    if arr.dtype.kind not in EXACT_KINDS:
        return np.unique(arr)
    ordered = np.sort(arr, axis=None)  # a flat sorted copy, as np.unique's own
    if ordered.size <= 1:
        return ordered
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def sorted_difference(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """`np.setdiff1d(a, b)` exactly (the sorted distinct values of `a` not in `b`), its two
    `np.unique` calls through sorted_distinct: no numpy.ma on a small table's run (D-107)."""
    first = sorted_distinct(a)
    return first[np.isin(first, sorted_distinct(b), assume_unique=True, invert=True)]
