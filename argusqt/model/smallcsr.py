"""Small compressed sparse matrices in numpy alone, for the relations of small tables.

Why not scipy.sparse: its import costs ≈ 0.074 CPU-s of a ≈ 0.28-s `argusqt batch` run on
batch_ex1 (docs/design.md, D-73, D-78), more than all the sparse work of such a run. A
`SmallCompressed` (CSR or CSC) does the few operations a small table's start and OPT's
search ask for, with scipy's arrays and floats bit for bit (index dtype int32, entries in
scipy's order, each row's products added one after another from 0 like scipy's kernels);
any other operation turns it into the scipy matrix with the same arrays (importing scipy
then) and asks that one. `tests/test_smallcsr.py` checks each operation against scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from argusqt.model import scipy_sparse

if TYPE_CHECKING:
    import scipy.sparse as sp

#: relations with at most this many nonzeros are built as a SmallCompressed (batch_ex1: 30,
#: p78: ≈ 200; past that numpy's add.at falls behind scipy's kernel); bigger tables keep
#: scipy's matrices from the start (D-78)
MAX_NNZ = 1000

_I32 = np.int32


class Coo(NamedTuple):
    """What `tocoo()` gives the readers: the nonzeros' rows, columns and values."""

    row: np.ndarray
    col: np.ndarray
    data: np.ndarray


class SmallCompressed:
    """A CSR or CSC matrix (`fmt`) of scipy's three arrays; scipy's at the first op it lacks."""

    ndim = 2
    #: unhashable like scipy's matrices (`==` is elementwise, as theirs)
    __hash__ = None  # type: ignore[assignment]

    def __init__(
        self,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        shape: tuple[int, int],
        fmt: str = "csr",
    ) -> None:
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.shape = (int(shape[0]), int(shape[1]))
        self.format = fmt
        self._scipy: Any = None
        self._major_cache: np.ndarray | None = None

    # -- what scipy's readers see -------------------------------------------------------
    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def has_canonical_format(self) -> bool:
        """Indices strictly increasing within each row (column): scipy's own check."""
        if self.indices.size < 2:
            return True
        step = np.diff(self.indices.astype(np.int64))
        first = self.indptr[1:-1]
        starts = np.zeros(self.indices.size - 1, dtype=bool)
        inner = first[(first > 0) & (first < self.indices.size)]
        starts[inner - 1] = True  # a step across two rows says nothing
        return bool(np.all((step > 0) | starts))

    def to_scipy(self) -> Any:
        """The scipy matrix with these arrays (imports scipy.sparse; kept for the next ask)."""
        if self._scipy is None:
            sparse = scipy_sparse.load()
            make = sparse.csr_matrix if self.format == "csr" else sparse.csc_matrix
            self._scipy = make((self.data, self.indices, self.indptr), shape=self.shape)
        return self._scipy

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_scipy", "_major_cache"):
            raise AttributeError(name)
        return getattr(self.to_scipy(), name)

    def __getitem__(self, key: Any) -> Any:
        return self.to_scipy()[key]

    def _adopt(self, name: str, *args: Any) -> Any:
        """A method that changes the matrix in place: scipy's, then its arrays become ours."""
        matrix = self.to_scipy()
        out = getattr(matrix, name)(*args)
        self.data, self.indices, self.indptr = matrix.data, matrix.indices, matrix.indptr
        self.shape = matrix.shape
        self._major_cache = None
        return out

    def sum_duplicates(self) -> None:
        self._adopt("sum_duplicates")

    def sort_indices(self) -> None:
        self._adopt("sort_indices")

    def prune(self) -> None:
        self._adopt("prune")

    def setdiag(self, *args: Any) -> None:
        self._adopt("setdiag", *args)

    def resize(self, *args: Any) -> None:
        self._adopt("resize", *args)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._adopt("__setitem__", key, value)

    # -- conversions ----------------------------------------------------------------------
    def _major(self) -> np.ndarray:
        """Row (CSR) or column (CSC) of each stored entry."""
        return np.repeat(np.arange(len(self.indptr) - 1, dtype=_I32), np.diff(self.indptr))

    def _swapped(self) -> SmallCompressed:
        """The same matrix in the other format: scipy's csr_tocsc (a stable counting sort)."""
        n_minor = self.shape[1] if self.format == "csr" else self.shape[0]
        order = np.argsort(self.indices, kind="stable")
        indptr = np.zeros(n_minor + 1, dtype=_I32)
        np.cumsum(np.bincount(self.indices, minlength=n_minor), out=indptr[1:])
        fmt = "csc" if self.format == "csr" else "csr"
        return SmallCompressed(self.data[order], self._major()[order], indptr, self.shape, fmt)

    def tocsr(self, copy: bool = False) -> SmallCompressed:
        if self.format == "csr":
            return self._copy() if copy else self
        return self._swapped()

    def tocsc(self, copy: bool = False) -> SmallCompressed:
        if self.format == "csc":
            return self._copy() if copy else self
        return self._swapped()

    def _copy(self) -> SmallCompressed:
        return SmallCompressed(
            self.data.copy(), self.indices.copy(), self.indptr.copy(), self.shape, self.format
        )

    def copy(self) -> SmallCompressed:
        return self._copy()

    @property
    def T(self) -> SmallCompressed:  # noqa: N802 - scipy's name
        """The transpose shares the arrays, in the other format (as scipy's)."""
        fmt = "csc" if self.format == "csr" else "csr"
        return SmallCompressed(self.data, self.indices, self.indptr, self.shape[::-1], fmt)

    def transpose(self) -> SmallCompressed:
        return self.T

    def tocoo(self) -> Coo:
        major, minor = self._major(), self.indices.copy()
        if self.format == "csr":
            return Coo(major, minor, self.data.copy())
        return Coo(minor, major, self.data.copy())

    def eliminate_zeros(self) -> None:
        """Drop stored zeros in place (a fresh array when any; scipy compacts its own)."""
        keep = self.data != 0
        if keep.all():
            return
        counts = np.bincount(self._major()[keep], minlength=len(self.indptr) - 1)
        self.data, self.indices = self.data[keep], self.indices[keep]
        indptr = np.zeros_like(self.indptr)
        np.cumsum(counts, out=indptr[1:])
        self.indptr = indptr
        self._scipy = None
        self._major_cache = None

    def __abs__(self) -> SmallCompressed:
        return SmallCompressed(
            np.abs(self.data), self.indices, self.indptr, self.shape, self.format
        )

    # -- arithmetic ----------------------------------------------------------------------
    def __matmul__(self, other: Any) -> Any:
        """M x for a vector x as scipy's csr/csc_matvec: each output is 0 plus its products
        one after another in the stored order (np.add.at adds element after element;
        numpy's sums and np.dot add in other orders)."""
        if isinstance(other, SmallCompressed) or _is_scipy(other):
            right = other.to_scipy() if isinstance(other, SmallCompressed) else other
            return self.to_scipy() @ right
        x = np.asarray(other)
        if x.ndim != 1 or x.shape[0] != self.shape[1] or x.dtype.kind not in "biuf":
            return self.to_scipy() @ other
        data = self.data
        if x.dtype != np.float64 or data.dtype != np.float64:
            kind = np.result_type(data.dtype, x.dtype)
            x, data = x.astype(kind, copy=False), data.astype(kind, copy=False)
        out = np.zeros(self.shape[0], dtype=data.dtype)
        major = self._entry_major()
        with np.errstate(all="ignore"):  # scipy's kernel warns of no overflow or nan
            if self.format == "csr":
                np.add.at(out, major, data * x[self.indices])
            else:
                np.add.at(out, self.indices, data * x[major])
        return out

    def _entry_major(self) -> np.ndarray:
        """`_major()`, kept: the structure changes only through this class's methods."""
        if self._major_cache is None:
            self._major_cache = self._major()
        return self._major_cache

    def sum(self, axis: int | None = None) -> Any:
        """Column sums (axis 0) of a CSR matrix as scipy's: rows added in order. A (1, n)
        ndarray where scipy gives an np.matrix (numpy warns on making one): read it through
        `np.asarray(…).ravel()`, as for scipy's."""
        if axis != 0 or self.format != "csr" or self.data.dtype != np.float64:
            return self.to_scipy().sum(axis=axis)
        out = np.zeros(self.shape[1])
        with np.errstate(all="ignore"):
            np.add.at(out, self.indices, self.data)
        return out[None, :]


def abs_product_column_max(a: SmallCompressed, b: SmallCompressed) -> np.ndarray:
    """max over rows of |A B| per column of B, as scipy's `abs(A @ B).max(axis=0)`: each
    entry of A B added up from 0 in scipy's csr/csc_matmat order, then compared."""
    if a.format == "csr":
        # C[i, j] = Σ over A's row i (stored order) of A[i, k] B[k, j]
        rows, cols, vals = _products(a, b.tocsr())
    else:
        # column j of C: over B's column j (stored order), B[k, j] times A's column k
        cols, rows, vals = _products(b.tocsc(), a)
    dense = np.zeros((a.shape[0], b.shape[1]), dtype=np.result_type(a.data, b.data))
    with np.errstate(all="ignore"):
        np.add.at(dense, (rows, cols), vals)
    if dense.shape[0] == 0:
        return np.zeros(dense.shape[1])
    return np.abs(dense).max(axis=0)


def _products(
    outer: SmallCompressed, inner: SmallCompressed
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each stored entry of `outer` (major m, minor k) times each entry of `inner`'s line k:
    (m, the inner entry's minor, the product), in `outer`'s stored order, then `inner`'s."""
    lens = np.diff(inner.indptr)[outer.indices]
    take = concat_ranges(inner.indptr[outer.indices], lens)
    with np.errstate(all="ignore"):
        vals = np.repeat(outer.data, lens) * inner.data[take]
    return np.repeat(outer._major(), lens), inner.indices[take], vals


def concat_ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The indices start[i], …, start[i] + len[i] − 1 for every i, one after another: the
    positions of the segments of compressed sparse arrays, gathered without a loop."""
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lens)
    offsets = np.repeat(ends - lens, lens)
    return np.repeat(starts.astype(np.int64), lens) + np.arange(total) - offsets


def _is_scipy(x: Any) -> bool:
    """A scipy sparse matrix (without importing scipy when it is not loaded yet)."""
    return type(x).__module__.startswith("scipy.sparse")


def from_triplets(
    vals: np.ndarray, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]
) -> SmallCompressed | None:
    """scipy's `csr_matrix((vals, (rows, cols)), shape)` when no (row, col) repeats: sorted
    by row, then column (what scipy's coo_tocsr and sort_indices give); None when one
    repeats (scipy sums those in its own order: the caller asks scipy)."""
    rows = np.asarray(rows)
    cols = np.asarray(cols)
    vals = np.asarray(vals)
    order = np.lexsort((cols, rows))
    r, c = rows[order], cols[order]
    if r.size > 1 and np.any((r[1:] == r[:-1]) & (c[1:] == c[:-1])):
        return None
    if r.size and (r.min() < 0 or c.min() < 0 or r.max() >= shape[0] or c.max() >= shape[1]):
        return None
    indptr = np.zeros(shape[0] + 1, dtype=_I32)
    np.cumsum(np.bincount(r, minlength=shape[0]), out=indptr[1:])
    data = vals[order]
    if data.dtype.kind not in "f":
        return None
    return SmallCompressed(data, c.astype(_I32), indptr, shape, "csr")


def empty(shape: tuple[int, int]) -> SmallCompressed:
    """scipy's `csr_matrix(shape)`: no entries, float64."""
    return SmallCompressed(
        np.zeros(0), np.zeros(0, dtype=_I32), np.zeros(shape[0] + 1, dtype=_I32), shape, "csr"
    )


def vstack_csr(top: SmallCompressed, bottom: SmallCompressed) -> SmallCompressed:
    """scipy's `vstack([top, bottom]).tocsr()` of two CSR blocks: the arrays one after the other."""
    indptr = np.concatenate([top.indptr[:-1], bottom.indptr + top.indptr[-1]]).astype(_I32)
    return SmallCompressed(
        np.concatenate([top.data, bottom.data]),
        np.concatenate([top.indices, bottom.indices]).astype(_I32),
        indptr,
        (top.shape[0] + bottom.shape[0], top.shape[1]),
        "csr",
    )


def pattern_of(rel: Any) -> Any:
    """`csr_matrix((ones(nnz), indices, indptr), shape)`: the relations' 0/1 incidence."""
    if isinstance(rel, SmallCompressed):
        return SmallCompressed(np.ones(rel.nnz), rel.indices, rel.indptr, rel.shape, "csr")
    sparse = scipy_sparse.load()
    return sparse.csr_matrix((np.ones(rel.nnz), rel.indices, rel.indptr), shape=rel.shape)


def as_float_csr(rel: Any) -> Any:
    """`csr_matrix(rel, dtype=float)`: shares the arrays when they are float CSR already."""
    if isinstance(rel, SmallCompressed):
        csr = rel.tocsr()
        data = csr.data.astype(float, copy=False)
        return SmallCompressed(data, csr.indices, csr.indptr, csr.shape, "csr")
    sparse = scipy_sparse.load()
    return sparse.csr_matrix(rel, dtype=float)


def scipy_of(rel: Any) -> sp.csr_matrix:
    """The scipy matrix whatever `rel` is (for code that needs scipy's whole API)."""
    return rel.to_scipy() if isinstance(rel, SmallCompressed) else rel


def _delegate(name: str) -> Any:
    """An operator scipy's matrix answers: the same arrays as a scipy matrix, asked."""

    def method(self: SmallCompressed, *args: Any) -> Any:
        args = tuple(a.to_scipy() if isinstance(a, SmallCompressed) else a for a in args)
        return getattr(self.to_scipy(), name)(*args)

    method.__name__ = name
    return method


for _name in (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__neg__",
    "__pos__",
    "__pow__",
    "__rmatmul__",
    "__lt__",
    "__gt__",
    "__le__",
    "__ge__",
    "__ne__",
    "__iter__",
    "__eq__",
    "__len__",
    "__bool__",
    "__round__",
):
    setattr(SmallCompressed, _name, _delegate(_name))


def compressed(
    data: np.ndarray,
    indices: np.ndarray,
    indptr: np.ndarray,
    shape: tuple[int, int],
    fmt: str,
    like: Any,
) -> Any:
    """scipy's `csr_matrix`/`csc_matrix((data, indices, indptr), shape)`, a SmallCompressed
    when `like` is one (scipy keeps int32 indices when they fit, as they do here)."""
    if isinstance(like, SmallCompressed):
        return SmallCompressed(
            np.asarray(data),
            np.asarray(indices, dtype=_I32),
            np.asarray(indptr, dtype=_I32),
            shape,
            fmt,
        )
    sparse = scipy_sparse.load()
    make = sparse.csr_matrix if fmt == "csr" else sparse.csc_matrix
    return make((data, indices, indptr), shape=shape)
