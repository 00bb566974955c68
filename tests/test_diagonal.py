"""respondents.diagonal against scipy's `diags` (D-107): the same CSR arrays, and products
with it bit for bit the ones `A @ sp.diags(mask.astype(float))` gives (the respondents'
closure and the insider audit's known suppressed cells), without `diags`' np.unique."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from argusqt.protection.core.respondents import diagonal

PROFILE = settings(max_examples=200, deadline=None, derandomize=True)


def identical(got: sp.csr_matrix, want: sp.csr_matrix) -> None:
    assert got.shape == want.shape and got.format == want.format == "csr"
    for a, b in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@PROFILE
@given(st.integers(0, 40), st.integers(0, 30), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_products_with_the_diagonal_as_with_diags(n, rows, density, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.5
    a = sp.random(rows, n, density=density, format="csr", random_state=rng)
    a.data = np.round(a.data * 4) - 1.0  # small integers, zeros among them kept explicit
    identical(diagonal(mask), sp.csr_matrix(sp.diags(mask.astype(float))))
    identical((a @ diagonal(mask)).tocsr(), (a @ sp.diags(mask.astype(float))).tocsr())
    up = (a.T @ a).tocsr()  # a cells × cells product, as the closure's `up`
    identical(up @ diagonal(mask), up @ sp.diags(mask.astype(float)))


def test_all_and_none():
    for mask in (np.zeros(5, bool), np.ones(5, bool), np.zeros(0, bool)):
        identical(diagonal(mask), sp.csr_matrix(sp.diags(mask.astype(float))))
