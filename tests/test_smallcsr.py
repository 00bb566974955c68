"""model.smallcsr against scipy.sparse (the independent reference): every operation a small
table's run asks of a SmallCompressed gives scipy's arrays and floats bit for bit, on random
and degenerate matrices (empty rows, zero shapes, −0.0, inf, nan, cancelling sums)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argusqt.model import smallcsr
from argusqt.model.smallcsr import SmallCompressed

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.1, -0.3, 1e16, -1e16, 1e-300, np.inf, -np.inf, np.nan]
floats = st.one_of(
    st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True, width=64)
)
PROFILE = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@st.composite
def triplets(draw, max_dim: int = 9, max_nnz: int = 30, unique: bool = True):
    """(vals, rows, cols, shape); with `unique` no (row, col) repeats."""
    m = draw(st.integers(0, max_dim))
    n = draw(st.integers(0, max_dim))
    if m == 0 or n == 0:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64), (m, n)
    k = draw(st.integers(0, max_nnz))
    cells = draw(st.lists(st.tuples(st.integers(0, m - 1), st.integers(0, n - 1)), max_size=k,
                          unique=unique))  # fmt: skip
    vals = draw(st.lists(floats, min_size=len(cells), max_size=len(cells)))
    rows = np.array([c[0] for c in cells], dtype=np.int64)
    cols = np.array([c[1] for c in cells], dtype=np.int64)
    return np.array(vals, dtype=float), rows, cols, (m, n)


def same(a, b) -> bool:
    """Equal arrays of one dtype bit for bit (−0.0 where −0.0), nan where nan: a nan's sign
    and payload bits are not compared (every comparison with a nan is false alike)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return a.tobytes() == b.tobytes()
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b))) and a[~nan].tobytes() == b[~nan].tobytes()


def same_matrix(small: SmallCompressed, ref) -> bool:
    return (
        small.format == ref.format
        and small.shape == ref.shape
        and same(small.data, ref.data)
        and same(small.indices, ref.indices)
        and same(small.indptr, ref.indptr)
    )


def pair(t):
    """A SmallCompressed from triplets and scipy's csr_matrix of the same triplets."""
    vals, rows, cols, shape = t
    ref = sp.csr_matrix((vals, (rows, cols)), shape=shape)
    small = smallcsr.from_triplets(vals, rows, cols, shape)
    return small, ref


@PROFILE
@given(triplets())
def test_from_triplets_is_scipys_csr(t):
    small, ref = pair(t)
    assert small is not None
    assert same_matrix(small, ref)
    assert small.has_canonical_format == ref.has_canonical_format
    assert small.nnz == ref.nnz


@PROFILE
@given(triplets(unique=False))
def test_repeated_triplets_are_left_to_scipy(t):
    vals, rows, cols, shape = t
    small = smallcsr.from_triplets(vals, rows, cols, shape)
    keys = set(zip(rows.tolist(), cols.tolist(), strict=True))
    assert (small is None) == (len(keys) < rows.size)


@PROFILE
@given(triplets(), st.data())
def test_products_with_a_vector_are_scipys(t, data):
    small, ref = pair(t)
    n = ref.shape[1]
    x = np.array(data.draw(st.lists(floats, min_size=n, max_size=n)), dtype=float)
    assert same(small @ x, ref @ x)
    assert same(small.tocsc() @ x, ref.tocsc() @ x)
    m = ref.shape[0]
    y = np.array(data.draw(st.lists(floats, min_size=m, max_size=m)), dtype=float)
    assert same(small.T @ y, ref.T @ y)
    assert same(abs(small) @ np.abs(x), abs(ref) @ np.abs(x))
    flags = x > 0
    assert same(small @ flags, ref @ flags)
    counts = np.arange(n, dtype=np.int64)
    assert same(small @ counts, ref @ counts)


@PROFILE
@given(triplets())
def test_conversions_are_scipys(t):
    small, ref = pair(t)
    assert same_matrix(small.tocsc(), ref.tocsc())
    assert same_matrix(small.T.tocsr(), ref.T.tocsr())
    assert same_matrix(small.tocsc().tocsr(), ref.tocsc().tocsr())
    assert same_matrix(small.T, ref.T)
    coo, ref_coo = small.tocoo(), ref.tocoo()
    assert same(coo.row, ref_coo.row) and same(coo.col, ref_coo.col)
    assert same(coo.data, ref_coo.data)
    assert same_matrix(smallcsr.pattern_of(small), smallcsr.pattern_of(ref))
    assert same_matrix(smallcsr.as_float_csr(small), smallcsr.as_float_csr(ref))
    assert same(small.sum(axis=0), np.asarray(ref.sum(axis=0)))
    small.eliminate_zeros()
    ref.eliminate_zeros()
    assert same_matrix(small, ref)


@PROFILE
@given(triplets(), triplets())
def test_stacking_is_scipys(top, bottom):
    n = top[3][1]
    vals, rows, cols, (m, _) = bottom
    keep = {}
    for v, r, c in zip(vals.tolist(), rows.tolist(), cols.tolist(), strict=True):
        if n:
            keep.setdefault((r, c % n), v)
    rows = np.array([k[0] for k in keep], dtype=np.int64)
    cols = np.array([k[1] for k in keep], dtype=np.int64)
    bottom = (np.array(list(keep.values()), dtype=float), rows, cols, (m, n))
    a, ref_a = pair(top)
    b, ref_b = pair(bottom)
    assert same_matrix(smallcsr.vstack_csr(a, b), sp.vstack([ref_a, ref_b]).tocsr())


@PROFILE
@given(triplets(max_dim=7), st.data())
def test_residuals_of_moves_are_scipys(t, data):
    """max |M δ| per move, M as CSR or CSC and the moves as CSC (components.relation_residuals)."""
    small, ref = pair(t)
    m, n = ref.shape
    if not m:
        return
    k = data.draw(st.integers(1, 5))
    cells = data.draw(st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, k - 1)),
                               max_size=12, unique=True)) if n else []  # fmt: skip
    vals = np.array(data.draw(st.lists(floats, min_size=len(cells), max_size=len(cells))))
    rows = np.array([c[0] for c in cells], dtype=np.int64)
    cols = np.array([c[1] for c in cells], dtype=np.int64)
    ref_moves = sp.csc_matrix((vals.astype(float), (rows, cols)), shape=(n, k))
    small_moves = smallcsr.compressed(
        ref_moves.data, ref_moves.indices, ref_moves.indptr, (n, k), "csc", small
    )
    assert same_matrix(small_moves, ref_moves)
    from argusqt.protection.lp.components import relation_residuals

    for a, ref_a in ((small, ref), (small.tocsc(), ref.tocsc())):
        got = relation_residuals(a, small_moves)
        want = np.asarray(abs(ref_a @ ref_moves).max(axis=0).toarray()).ravel()
        assert same(got, want)


def test_anything_else_is_asked_of_scipy_with_the_same_arrays():
    vals = np.array([1.0, -1.0, 1.0, 2.0])
    small = smallcsr.from_triplets(vals, np.array([0, 0, 1, 1]), np.array([2, 0, 1, 2]), (2, 3))
    ref = sp.csr_matrix((vals, (np.array([0, 0, 1, 1]), np.array([2, 0, 1, 2]))), shape=(2, 3))
    assert same(small[1].toarray(), ref[1].toarray())
    assert same((small - small).toarray(), (ref - ref).toarray())
    assert same(small.toarray(), ref.toarray())
    assert same((small @ ref.T).toarray(), (ref @ ref.T).toarray())
    assert smallcsr.scipy_of(small) is small.to_scipy()


def test_in_place_changes_reach_the_arrays():
    """sum_duplicates and the like change the SmallCompressed itself, as scipy's own."""
    small = SmallCompressed(
        np.array([1.0, 2.0, 3.0]),
        np.array([1, 0, 1], np.int32),
        np.array([0, 3, 3], np.int32),
        (2, 2),
    )
    assert not small.has_canonical_format
    small.sum_duplicates()
    assert same(small.indices, np.array([0, 1], np.int32))
    assert same(small.data, np.array([2.0, 4.0]))
    assert same(small @ np.ones(2), np.array([6.0, 0.0]))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=9), st.integers(1, 5), st.integers(0, 2))
def test_relations_of_a_small_table_are_scipys(depths, n_flat, n_dims):
    """build_relations_small: build_relations's matrix, as a SmallCompressed when small."""
    from argusqt.model.codelist import CodeList
    from argusqt.model.table import build_relations, build_relations_small, relation_nnz

    entries, depth = [], 0
    for k, d in enumerate(depths):
        depth = min(d, depth + 1)
        entries.append((depth, f"c{k}"))
    tree = CodeList.from_tree("tree", entries)
    flat = CodeList.flat("flat", [f"f{k}" for k in range(n_flat)])
    dims = [[tree], [tree, flat], [flat, tree, flat]][n_dims]
    small = build_relations_small(dims)
    ref = build_relations(dims)
    assert relation_nnz(dims) == ref.nnz
    if ref.nnz > smallcsr.MAX_NNZ:
        assert small.format == ref.format and not isinstance(small, SmallCompressed)
        return
    assert isinstance(small, SmallCompressed)
    assert same_matrix(small, ref)
    x = np.linspace(-3.0, 7.0, ref.shape[1]) ** 3
    assert same(small @ x, ref @ x)


@st.composite
def raw(draw, max_dim: int = 7):
    """(data, indices, indptr, shape) of a CSR or CSC matrix in any order, repeats allowed."""
    m = draw(st.integers(0, max_dim))
    n = draw(st.integers(0, max_dim))
    majors = draw(st.sampled_from(["csr", "csc"]))
    n_major, n_minor = (m, n) if majors == "csr" else (n, m)
    lines = [
        draw(st.lists(st.integers(0, n_minor - 1), max_size=6)) if n_minor else []
        for _ in range(n_major)
    ]
    indices = np.array([i for line in lines for i in line], dtype=np.int32)
    indptr = np.r_[0, np.cumsum([len(line) for line in lines])].astype(np.int32)
    data = np.array(draw(st.lists(floats, min_size=indices.size, max_size=indices.size)))
    return data.astype(float), indices, indptr, (m, n), majors


@PROFILE
@given(raw(), st.data())
def test_any_stored_order_gives_scipys_sums(r, data):
    """Unsorted and repeated indices (a move naming a cell twice): the same sums, in order."""
    vals, indices, indptr, shape, fmt = r
    small = SmallCompressed(vals, indices, indptr, shape, fmt)
    make = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    ref = make((vals, indices, indptr), shape=shape)
    x = np.array(data.draw(st.lists(floats, min_size=shape[1], max_size=shape[1])), dtype=float)
    assert same(small @ x, ref @ x)
    assert same_matrix(small.tocsr(), ref.tocsr())
    assert same_matrix(small.tocsc(), ref.tocsc())
    assert small.has_canonical_format == ref.has_canonical_format
    if shape[0]:
        other = data.draw(raw())
        k = other[3][1]
        lines = [data.draw(st.lists(st.integers(0, shape[1] - 1), max_size=4)) if shape[1] else []
                 for _ in range(k)]  # fmt: skip
        ind = np.array([i for line in lines for i in line], dtype=np.int32)
        ptr = np.r_[0, np.cumsum([len(line) for line in lines])].astype(np.int32)
        d = np.array(data.draw(st.lists(floats, min_size=ind.size, max_size=ind.size)), dtype=float)
        moves = SmallCompressed(d, ind, ptr, (shape[1], k), "csc")
        ref_moves = sp.csc_matrix((d, ind, ptr), shape=(shape[1], k))
        from argusqt.protection.lp.components import relation_residuals

        want = np.asarray(abs(ref @ ref_moves).max(axis=0).toarray()).ravel()
        assert same(relation_residuals(small, moves), want)


def test_eq_is_elementwise_as_scipys():
    vals = np.array([1.0, 0.0])
    small = smallcsr.from_triplets(vals, np.array([0, 1]), np.array([0, 1]), (2, 2))
    with warnings.catch_warnings():  # scipy's SparseEfficiencyWarning for `==`
        warnings.simplefilter("ignore")
        assert same((small == small).toarray(), (small.to_scipy() == small.to_scipy()).toarray())
