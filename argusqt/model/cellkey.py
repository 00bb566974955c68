"""Cell keys and the per-cell inputs of the cell key method (argusqt/docs/methods.md §16.1).

Record keys are summed exactly, as whole numbers of 10^-decimals modulo 10^decimals, so a
cell's key does not depend on the order of its records (the consistency CKM promises).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import InputError
from argusqt.model.codelist import CodeList

#: CKM types of a numeric variable (`<CKM>`): none, top-k, mean, range, value
CKM_TYPES = ("N", "T", "M", "D", "V")
#: largest record key decimals summed exactly (τ-Argus rounds its sums to 15 decimals)
MAX_KEY_DECIMALS = 15
#: a contribution counts as zero for the no-zeros key below this (τ-Argus: 1E-8)
ZERO = 1e-8
_LO = 10**8  # keys are split in two halves below 10^8 so float sums of each stay exact


@dataclass
class RecordKeyFiles:
    """The ptables named on the `<RECORDKEY>` variable (argusqt/docs/formats.md §1.5)."""

    pfile: str | None = None  # frequency tables (`<PFILE>` / `<PFILE_FREQ>`)
    pfile_cont: str | None = None  # magnitude tables
    pfile_sep: str | None = None  # small magnitude values (`<SEPARATION> Y`)


@dataclass
class MagnitudeCKM:
    """The `<CKM>` options of one numeric variable (argusqt/docs/formats.md §1.5)."""

    type: str = "N"  # N (no CKM), T, M, D, V
    top_k: int = 1
    scaling: str = ""  # "F" (flex function) or "N" (constant σ1); "" not given
    sigma0: float = -1.0
    sigma1: float = -1.0
    xstar: float = -1.0
    q: float = -1.0
    #: ε_1 … ε_k (ε_1 = 1): the weights of the 1st … k-th largest contribution
    epsilon: list[float] = field(default_factory=lambda: [1.0])
    include_zeros: bool = False
    parity: bool = False
    separation: bool = False

    @property
    def enabled(self) -> bool:
        return self.type != "N"

    def scaling_text(self) -> str:
        """`F(σ0,σ1,x*,q,ε2…)` or `N(σ1,ε2…)` as τ-Argus writes `<SCALING>`."""
        eps = [_num(e) for e in self.epsilon[1:]]
        if self.scaling == "F":
            parts = [_num(self.sigma0), _num(self.sigma1), _num(self.xstar), _num(self.q), *eps]
        else:
            parts = [_num(self.sigma1), *eps]
        return f"{self.scaling}({','.join(parts)})"

    def type_text(self) -> str:
        return f"T({self.top_k})" if self.type == "T" else self.type


def _num(x: float) -> str:
    """A number as short as it reads back exactly."""
    return repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x))


# ------------------------------------------------------------------------------ keys
def key_units(keys: np.ndarray, decimals: int, where: str = "") -> np.ndarray:
    """Record keys as whole numbers of 10^-decimals (int64); InputError on a missing key or
    one outside [0, 1)."""
    if not 0 <= decimals <= MAX_KEY_DECIMALS:
        raise InputError(
            f"the record key has {decimals} decimals; argusqt sums keys of 0 to "
            f"{MAX_KEY_DECIMALS} decimals exactly (<DECIMALS> of the <RECORDKEY> variable)",
            file=where or None,
        )
    x = np.asarray(keys, dtype=float)
    bad = np.flatnonzero(~np.isfinite(x) | (x < 0) | (x >= 1))
    if bad.size:
        i = int(bad[0])
        raise InputError(
            f"record {i + 1} has the record key {x[i]!r}; every record needs a key in [0, 1) "
            f"({bad.size} record(s) without one)",
            file=where or None,
        )
    units = np.rint(x * 10.0**decimals).astype(np.int64)
    return np.minimum(units, 10**decimals - 1)  # 0.99999999999999999 rounds up to 1


def sum_keys(groups: np.ndarray, units: np.ndarray, n_groups: int, decimals: int) -> np.ndarray:
    """Σ units per group modulo 10^decimals, exactly (two halves summed as exact floats)."""
    g = np.asarray(groups, dtype=np.int64)
    u = np.asarray(units, dtype=np.int64)
    lo = np.rint(np.bincount(g, weights=(u % _LO).astype(float), minlength=n_groups))
    hi = np.rint(np.bincount(g, weights=(u // _LO).astype(float), minlength=n_groups))
    modulus = 10**decimals
    lo_i = lo.astype(np.int64) % modulus
    if decimals <= 8:
        return lo_i
    hi_i = hi.astype(np.int64) % (10 ** (decimals - 8))
    return (hi_i * _LO + lo_i) % modulus


# ------------------------------------------------------------------------------ fine cells
@dataclass(eq=False)
class FineCellKeys:
    """CKM inputs per fine cell: key sums and the contributions the magnitude variants need."""

    decimals: int
    key: np.ndarray  # Σ keys of all records, in units, mod 10^decimals
    key_nonzero: np.ndarray  # Σ keys of records with |x| > ZERO
    count: np.ndarray  # records (unweighted)
    weight: np.ndarray  # Σ weights (= count unweighted)
    top: np.ndarray  # (n_fine, k) largest contributions x (unweighted), decreasing
    top_weight: np.ndarray  # (n_fine, k) the weight of each (1 unweighted, 0 absent)
    xmax: np.ndarray  # largest contribution (unweighted)
    xmin: np.ndarray  # smallest contribution (unweighted)
    #: what the method needs besides the numbers (set by attach_cell_keys)
    files: RecordKeyFiles = field(default_factory=RecordKeyFiles)
    ckm: MagnitudeCKM | None = None  # the response's `<CKM>` options
    response: str = "Freq"
    weighted: bool = False
    holdings: bool = False  # the table uses holdings (τ-Argus refuses CKM then)
    #: reads a ptable file (name, "freq" | "cont") → model.ptable.PTable; io.ptable.read_ptable
    #: passed in by the session, since reading files belongs to io, above the model
    reader: Callable[..., Any] | None = None


def fine_cell_keys(
    inv: np.ndarray,
    n_fine: int,
    units: np.ndarray,
    decimals: int,
    response: np.ndarray | None,
    weights: np.ndarray | None,
    k: int,
    contributions: bool = True,
) -> FineCellKeys:
    """Key sums and top-k contributions per fine cell; `inv`: the fine cell of each record.
    `contributions` False skips the largest/smallest contributions (only `<CKM>` T and D
    need them: a sort of every record)."""
    inv = np.asarray(inv, dtype=np.int64)
    key = sum_keys(inv, units, n_fine, decimals)
    if response is None:
        x = np.ones(inv.shape[0])
        key_nz = key.copy()
    else:
        x = np.asarray(response, dtype=float)
        nz = np.abs(x) > ZERO
        key_nz = sum_keys(inv[nz], units[nz], n_fine, decimals)
    count = np.bincount(inv, minlength=n_fine).astype(float)
    weight = count.copy() if weights is None else np.bincount(inv, weights, minlength=n_fine)
    if not contributions:
        zeros = np.zeros((n_fine, 1))
        return FineCellKeys(decimals, key, key_nz, count, weight, zeros, zeros.copy(),
                            np.zeros(n_fine), np.zeros(n_fine))  # fmt: skip
    w = np.ones(inv.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    top, top_w = _top_with_weights(inv, x, w, n_fine, max(k, 1))
    xmax = np.full(n_fine, -np.inf)
    xmin = np.full(n_fine, np.inf)
    np.maximum.at(xmax, inv, x)
    np.minimum.at(xmin, inv, x)
    xmax[~np.isfinite(xmax)] = 0.0
    xmin[~np.isfinite(xmin)] = 0.0
    return FineCellKeys(decimals, key, key_nz, count, weight, top, top_w, xmax, xmin)


def _top_with_weights(
    groups: np.ndarray, x: np.ndarray, w: np.ndarray, n_groups: int, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """(n_groups, k) largest x per group, decreasing, with their weights (0 where absent).

    k passes of a group maximum (O(n) each) instead of a sort of every record: ten times
    fewer seconds on 10 million records; of equal values the first record is taken."""
    top = np.zeros((n_groups, k))
    top_w = np.zeros((n_groups, k))
    if groups.size == 0:
        return top, top_w
    g = np.asarray(groups, dtype=np.int64)
    left = np.array(x, dtype=float)
    for j in range(k):
        col = np.full(n_groups, -np.inf)
        np.maximum.at(col, g, left)
        hit = np.flatnonzero((left == col[g]) & np.isfinite(left))
        if hit.size == 0:
            break
        _, first = np.unique(g[hit], return_index=True)
        idx = hit[first]
        top[g[idx], j] = x[idx]
        top_w[g[idx], j] = w[idx]
        left[idx] = -np.inf  # taken: never a maximum again
    return top, top_w


# ------------------------------------------------------------------------------ table cells
@dataclass(eq=False)
class CellKeys:
    """CKM inputs per table cell (row-major, as Table's arrays)."""

    decimals: int
    key_units: np.ndarray  # cell key in units of 10^-decimals, all records
    key_nonzero_units: np.ndarray  # the same over the records with a non-zero value
    count: np.ndarray  # records (unweighted)
    weight: np.ndarray  # Σ weights (= count unweighted)
    top: np.ndarray  # (n_cells, k) largest contributions, decreasing
    top_weight: np.ndarray  # (n_cells, k) their weights, 0 where absent
    xmax: np.ndarray
    xmin: np.ndarray

    @property
    def key(self) -> np.ndarray:
        """The cell key in [0, 1) (all records)."""
        return self.key_units / 10.0**self.decimals

    @property
    def key_nonzero(self) -> np.ndarray:
        return self.key_nonzero_units / 10.0**self.decimals


def table_cell_keys(
    fine: FineCellKeys,
    fine_keys: np.ndarray,
    dims: Sequence[CodeList],
    leaf_maps: Sequence[np.ndarray],
) -> CellKeys:
    """Expand fine-cell inputs to every cell of a table (totals included)."""
    from argusqt.model.tabulate import expand_to_cells

    shape = tuple(len(d) for d in dims)
    n_cells = int(np.prod(shape)) if shape else 1
    nodes = [np.asarray(leaf_maps[d])[fine_keys[:, d]] for d in range(len(dims))]
    cells, items = expand_to_cells(nodes, list(dims))
    key = sum_keys(cells, fine.key[items], n_cells, fine.decimals)
    key_nz = sum_keys(cells, fine.key_nonzero[items], n_cells, fine.decimals)
    k = fine.top.shape[1]
    present = fine.top_weight[items] > 0
    flat_cells = np.repeat(cells, k)[present.ravel()]
    flat_x = fine.top[items].ravel()[present.ravel()]
    flat_w = fine.top_weight[items].ravel()[present.ravel()]
    top, top_w = _top_with_weights(flat_cells, flat_x, flat_w, n_cells, k)
    xmax = np.full(n_cells, -np.inf)
    xmin = np.full(n_cells, np.inf)
    np.maximum.at(xmax, cells, fine.xmax[items])
    np.minimum.at(xmin, cells, fine.xmin[items])
    xmax[~np.isfinite(xmax)] = 0.0
    xmin[~np.isfinite(xmin)] = 0.0
    count = np.bincount(cells, weights=fine.count[items], minlength=n_cells)
    weight = np.bincount(cells, weights=fine.weight[items], minlength=n_cells)
    return CellKeys(fine.decimals, key, key_nz, count, weight, top, top_w, xmax, xmin)


def records_to_fine(
    codes: Sequence[np.ndarray], sizes: Sequence[int], fine_keys: np.ndarray
) -> np.ndarray:
    """The fine cell of each record: its category ids looked up among the fine cells' keys
    (both row-major over `sizes`, as model.tabulate.build_fine numbers them)."""
    flat = np.asarray(codes[0]).astype(np.int64)
    for c, size in zip(codes[1:], sizes[1:], strict=True):
        flat = flat * int(size) + np.asarray(c)
    fine_flat = np.ravel_multi_index(tuple(np.asarray(fine_keys).T), tuple(int(s) for s in sizes))
    order = np.argsort(fine_flat, kind="stable")
    pos = np.searchsorted(fine_flat[order], flat)
    pos = np.minimum(pos, order.shape[0] - 1)
    inv = order[pos]
    if not np.array_equal(fine_flat[inv], flat):
        raise ValueError("records and fine cells disagree (the table was built from other data)")
    return inv


def attach_cell_keys(table, meta, data, reader: Callable[..., Any] | None = None) -> bool:
    """Compute the fine-cell CKM inputs of a table built from microdata with a record key and
    keep them with its fine cells (recoding reuses them); False when there is no key."""
    key_var = meta.record_key if meta is not None else None
    source = getattr(table, "source", None)
    if key_var is None or source is None or not hasattr(data, "codes"):
        return False
    fine = source[0]
    spec = table.spec
    cats = [data.codes(meta.variable(name).name) for name in spec.explanatory]
    sizes = [max(len(c.categories), 1) for c in cats]
    inv = records_to_fine([c.codes for c in cats], sizes, fine.keys)
    where = str(getattr(data, "path", "") or "")
    units = key_units(data.values(key_var.name), int(key_var.decimals), where)
    response = None
    k = 1
    options: MagnitudeCKM | None = None
    if spec.response is not None:
        rvar = meta.variable(spec.response)
        response = data.values(rvar.name)
        options = rvar.ckm
        if options is not None and options.type == "T":
            k = options.top_k
    weights = None
    if spec.use_weights and meta.weight is not None:
        weights = data.values(meta.weight.name)
    needed = options is not None and options.type in ("T", "D")
    ck = fine_cell_keys(
        inv, fine.n_fine, units, int(key_var.decimals), response, weights, k, needed
    )
    base = getattr(meta, "path", None)
    ck.files = _resolved(key_var.pfiles or RecordKeyFiles(), base.parent if base else None)
    ck.ckm = options
    ck.response = spec.response or "Freq"
    ck.weighted = weights is not None
    ck.holdings = bool(spec.use_holdings)
    ck.reader = reader
    fine.cellkey = ck
    return True


def _resolved(files: RecordKeyFiles, folder) -> RecordKeyFiles:
    """The ptable names relative to the metadata's folder made absolute."""
    from pathlib import Path

    def where(name: str | None) -> str | None:
        if not name:
            return None
        p = Path(name)
        return str(p if p.is_absolute() or folder is None else Path(folder) / p)

    return RecordKeyFiles(where(files.pfile), where(files.pfile_cont), where(files.pfile_sep))


@dataclass
class CellKeyInputs:
    """What CKM needs of a table besides its values: cell keys, options and ptables."""

    cells: CellKeys
    frequency: bool  # a count table (else magnitudes)
    weighted: bool
    response: str  # the response's name, "Freq" for counts, for messages
    ckm: MagnitudeCKM | None  # the response's `<CKM>` options (magnitudes)
    #: ptables: a file name or a model.ptable.PTable given in memory (API)
    pfile: Any = None
    pfile_cont: Any = None
    pfile_sep: Any = None
    reader: Callable[..., Any] | None = None  # reads a ptable file by name
    holdings: bool = False


def cell_keys_of(table) -> CellKeys | None:
    """The CKM inputs of every cell of a table, or None when its data had no record keys."""
    source = getattr(table, "source", None)
    if source is None:
        return None
    fine, leaf_maps = source
    ck = getattr(fine, "cellkey", None)
    if ck is None:
        return None
    return table_cell_keys(ck, fine.keys, table.dims, leaf_maps)


def cell_key_inputs(table) -> CellKeyInputs | None:
    """Cell keys and the ptables of a table (CKM's input), or None without record keys."""
    cells = cell_keys_of(table)
    if cells is None:
        return None
    fine = table.source[0].cellkey
    return CellKeyInputs(
        cells=cells,
        frequency=table.spec.is_frequency,
        weighted=fine.weighted,
        response=fine.response,
        ckm=fine.ckm,
        pfile=fine.files.pfile,
        pfile_cont=fine.files.pfile_cont,
        pfile_sep=fine.files.pfile_sep,
        reader=fine.reader,
        holdings=fine.holdings,
    )


def set_ptables(table, pfile: Any = None, pfile_cont: Any = None, pfile_sep: Any = None) -> bool:
    """Use other ptables (a file name or a PTable) for this table's CKM, as the batch command
    `CKM(t) "ptable"` does; None keeps the current one. False when the table has no keys."""
    source = getattr(table, "source", None)
    fine = getattr(source[0], "cellkey", None) if source is not None else None
    if fine is None:
        return False
    files = fine.files
    fine.files = RecordKeyFiles(
        files.pfile if pfile is None else pfile,
        files.pfile_cont if pfile_cont is None else pfile_cont,
        files.pfile_sep if pfile_sep is None else pfile_sep,
    )
    return True


def generated_record_keys(n: int, seed: int, decimals: int = MAX_KEY_DECIMALS) -> np.ndarray:
    """n record keys in [0, 1) with `decimals` decimals, drawn from `seed` (the same seed gives
    the same keys). Keep them with the data: other keys give other noise (argusqt/docs/formats.md §1.5)."""
    rng = np.random.default_rng(seed)
    units = rng.integers(0, 10**decimals, size=int(n), dtype=np.int64)
    return units / 10.0**decimals


def shift_first_digit_units(units: np.ndarray, decimals: int) -> np.ndarray:
    """A key (in units of 10^-decimals) with its first decimal moved to the end: τ-Argus's
    ShiftFirstDigit, which gives each contribution of a magnitude cell its own key."""
    if decimals < 1:
        return np.asarray(units)
    top = 10 ** (decimals - 1)
    u = np.asarray(units, dtype=np.int64)
    return (u % top) * 10 + u // top
