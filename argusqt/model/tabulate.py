"""Tabulation: records → fine cells → every cell of a table (docs/design.md, D-5).

Step 1 (`build_fine`) aggregates records per combination of data codes of the table's
explanatory variables; step 2 (`table_from_fine`) expands each fine cell to all the table
cells above it (its ancestor chain in every dimension). Recoding re-runs step 2 only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import InputError, SpecificationError
from argusqt.model.codelist import CodeList
from argusqt.model.table import MAX_DIMENSIONS, Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

#: Builds a variable's codelist from its metadata and observed codes (io.codelists.codelist_for):
#: passed in, because reading `.hrc`/`.cdl` files belongs to io, above the model.
CodelistFor = Callable[[Any, Any, Iterable[str] | None, list[str]], CodeList]

#: (cell, fine cell) pairs expanded at once in `table_from_fine`
_CHUNK_PAIRS = 1_000_000


@dataclass(eq=False)
class FineCells:
    """Aggregates per combination of data codes; enough to rebuild any recoding of the table."""

    fine_codes: list[list[str]]  # per dimension: the distinct data codes (category id = index)
    keys: np.ndarray  # (n_fine, k) category id per dimension
    value: np.ndarray  # Σ (weighted) response
    freq: np.ndarray  # number of records
    shadow: np.ndarray  # Σ (weighted) shadow
    cost_raw: np.ndarray  # Σ (weighted) cost variable / freq / 1
    weight_sum: np.ndarray  # Σ weights (= freq when unweighted)
    top: np.ndarray  # (n_fine, K) largest |shadow| (unit) contributions, decreasing
    hold_fine: np.ndarray | None = None  # (n_pairs,) fine cell of each (fine, holding) pair
    hold_id: np.ndarray | None = None  # (n_pairs,) holding id
    hold_sum: np.ndarray | None = None  # (n_pairs,) Σ shadow of the holding in the fine cell
    request_top: np.ndarray | None = None  # (n_fine, 2) largest |shadow| of requesters c1 / c2
    request_freq: np.ndarray | None = None  # (n_fine,) number of requesting records
    #: chunked weighted tables: the records that may hold a top "unit" (fine id, |x|, w); the
    #: unit contributions of a union cannot be merged from those of its parts
    units: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    #: cell key method inputs (model.cellkey.FineCellKeys) when the data has record keys
    cellkey: Any = None
    #: (n_fine, K) largest (weighted) response contributions w·x, decreasing: what a record
    #: knows of a cell it shares (D-91); negatives count 0 (no floors then, see `low`)
    floor_top: np.ndarray | None = None
    #: the smallest record value of the response in the file: ≥ 0 means nobody's share of a
    #: cell can be negative, the condition for a contribution to bound a cell from below
    low: float = 0.0
    #: (n_pairs,) Σ (weighted) response of the holding in the fine cell (hold_sum: shadow)
    hold_value: np.ndarray | None = None

    @property
    def n_fine(self) -> int:
        return int(self.keys.shape[0])

    @property
    def k(self) -> int:
        return int(self.top.shape[1])


# ---------------------------------------------------------------------------- helpers
def top_k_by_group(
    groups: np.ndarray, values: np.ndarray, n_groups: int, k: int, overwrite: bool = False
) -> np.ndarray:
    """(n_groups, k) array of the k largest non-negative `values` per group, decreasing, 0 if absent.

    K passes of an unbuffered group maximum (`np.maximum.at`, O(n) each) instead of a sort of
    all entries: K is small (2–4) and a lexsort of millions of entries was the bottleneck.
    """
    out = np.zeros((n_groups, k), dtype=float)
    if groups.size == 0 or k == 0:
        return out
    # `overwrite`: the caller hands over a scratch array (saves a copy of millions of values)
    v = np.asarray(values, dtype=float) if overwrite else np.array(values, dtype=float)
    g = np.asarray(groups, dtype=np.int64)
    for j in range(k):
        col = np.zeros(n_groups)
        np.maximum.at(col, g, v)
        out[:, j] = col
        if j + 1 == k:
            break
        # remove exactly one entry equal to the maximum of each group (ties stay for later)
        hit = np.flatnonzero(v == col[g])
        _, first = np.unique(g[hit], return_index=True)
        v[hit[first]] = -1.0  # below every value: never a maximum again (groups start at 0)
    return out


def _unit_top(
    groups: np.ndarray, x: np.ndarray, w: np.ndarray, n_groups: int, k: int
) -> np.ndarray:
    """Largest "unit" contributions with weights (argusqt/docs/rules.md §3.9): record i = w_i units
    of x_i.

    Unit j of a group is ∫_j^{j+1} of the decreasing step function of its records, so the
    cumulative sum of the first m units equals top_m of the rules.
    """
    out = np.zeros((n_groups, k), dtype=float)
    if groups.size == 0:
        return out
    order = np.lexsort((-x, groups))
    g, xs, ws = groups[order], x[order], w[order]
    starts = np.r_[True, g[1:] != g[:-1]]
    run_id = np.cumsum(starts) - 1
    cw = np.cumsum(ws)
    base = (cw - ws)[np.flatnonzero(starts)][run_id]  # cumulative weight before each group
    hi = cw - base  # cumulative weight up to and including the record, within its group
    lo = hi - ws
    relevant = lo < k
    g, xs, lo, hi = g[relevant], xs[relevant], lo[relevant], hi[relevant]
    cum = np.zeros((n_groups, k + 1))
    for m in range(1, k + 1):
        share = np.clip(np.minimum(hi, m) - lo, 0.0, None)
        cum[:, m] = np.bincount(g, weights=xs * share, minlength=n_groups)
    return np.diff(cum, axis=1)


def _ancestor_csr(codelist: CodeList) -> tuple[np.ndarray, np.ndarray]:
    """Ancestor chains (node itself … total) of every node, as CSR pointer/index arrays."""
    chains = codelist.ancestors
    lengths = np.fromiter((len(c) for c in chains), dtype=np.int64, count=len(chains))
    ptr = np.r_[0, np.cumsum(lengths)]
    idx = np.fromiter((n for c in chains for n in c), dtype=np.int64, count=int(ptr[-1]))
    return ptr, idx


def expand_to_cells(
    nodes: Sequence[np.ndarray], dims: Sequence[CodeList]
) -> tuple[np.ndarray, np.ndarray]:
    """For items at leaf nodes (one array per dimension), every (cell, item) pair above them."""
    n_items = nodes[0].shape[0] if nodes else 1
    items = np.arange(n_items, dtype=np.int64)
    cells = np.zeros(n_items, dtype=np.int64)
    for node_d, dim in zip(nodes, dims, strict=True):
        ptr, idx = _ancestor_csr(dim)
        leaf = node_d[items]
        counts = ptr[leaf + 1] - ptr[leaf]
        items = np.repeat(items, counts)
        first = np.repeat(ptr[leaf], counts)
        offset = np.arange(items.shape[0], dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        cells = np.repeat(cells, counts) * len(dim) + idx[first + offset]
    return cells, items


# ---------------------------------------------------------------------------- step 2
def table_from_fine(
    fine: FineCells,
    dims: list[CodeList],
    leaf_maps: list[np.ndarray],
    spec: TableSpec,
    decimals: int,
) -> Table:
    """All cells of a table (totals and subtotals included) from fine cells and leaf maps."""
    if len(dims) != fine.keys.shape[1]:
        raise SpecificationError(
            f"table has {len(dims)} dimensions but the fine cells have {fine.keys.shape[1]}"
        )
    shape = tuple(len(d) for d in dims)
    n_cells = int(np.prod(shape))
    nodes = [leaf_maps[d][fine.keys[:, d]] for d in range(len(dims))]
    k = fine.k
    value = np.zeros(n_cells)
    freq = np.zeros(n_cells)
    shadow = np.zeros(n_cells)
    cost_raw = np.zeros(n_cells)
    weight_sum = np.zeros(n_cells)
    top = np.zeros((n_cells, k))
    request_top = request_freq = None
    if fine.request_top is not None:
        request_top = np.zeros((n_cells, 2))
        request_freq = np.zeros(n_cells)
    # Fine cells are expanded in chunks so the (cell, fine cell) pairs never all exist at
    # once: sums accumulate, top-K lists merge (the K largest of a union are among the K
    # largest of its parts). Peak memory then scales with the chunk, not with the data.
    fan_out = int(np.prod([max(len(c) for c in d.ancestors) for d in dims]))
    step = max(1, _CHUNK_PAIRS // max(fan_out, 1))
    for start in range(0, fine.n_fine, step):
        part = [n[start : start + step] for n in nodes]
        cells, items = expand_to_cells(part, dims)
        items += start
        value += np.bincount(cells, weights=fine.value[items], minlength=n_cells)
        freq += np.bincount(cells, weights=fine.freq[items], minlength=n_cells)
        shadow += np.bincount(cells, weights=fine.shadow[items], minlength=n_cells)
        cost_raw += np.bincount(cells, weights=fine.cost_raw[items], minlength=n_cells)
        weight_sum += np.bincount(cells, weights=fine.weight_sum[items], minlength=n_cells)
        part_top = top_k_by_group(
            np.repeat(cells, k), fine.top[items].ravel(), n_cells, k, overwrite=True
        )
        top = part_top if start == 0 else _merge_top(top, part_top)
        if request_top is not None and request_freq is not None:
            assert fine.request_top is not None and fine.request_freq is not None
            for c in range(2):
                np.maximum.at(request_top[:, c], cells, fine.request_top[items, c])
            request_freq += np.bincount(cells, weights=fine.request_freq[items], minlength=n_cells)
    hfreq = htop = None
    if fine.hold_fine is not None:
        # holding sums need every pair of a cell together: one expansion of all fine cells
        cells, items = expand_to_cells(nodes, dims)
        hfreq, htop = _holding_cells(fine, cells, items, n_cells, k)
    table = Table(
        spec=spec,
        dims=dims,
        value=value,
        freq=freq,
        shadow=shadow,
        cost_raw=cost_raw,
        top=top,
        hfreq=hfreq,
        htop=htop,
        weight_sum=weight_sum if spec.use_weights else None,
        request_top=request_top,
        request_freq=request_freq,
        decimals=decimals,
    )
    table.source = (fine, [np.asarray(m) for m in leaf_maps])
    return table


def _merge_top(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise K largest of two (n, K) decreasing lists."""
    both = np.concatenate([a, b], axis=1)
    both.sort(axis=1)
    return both[:, : -a.shape[1] - 1 : -1].copy()


def _holding_cells(
    fine: FineCells, cells: np.ndarray, items: np.ndarray, n_cells: int, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Holding frequency and top-K holding contributions per cell from (fine, holding) sums."""
    assert fine.hold_fine is not None and fine.hold_id is not None and fine.hold_sum is not None
    order = np.argsort(fine.hold_fine, kind="stable")
    hf, hid, hs = fine.hold_fine[order], fine.hold_id[order], fine.hold_sum[order]
    per_fine = np.bincount(hf, minlength=fine.n_fine)
    first = np.r_[0, np.cumsum(per_fine)][:-1]
    # join every (cell, fine) pair with the holding pairs of that fine cell
    counts = per_fine[items]
    pair_cell = np.repeat(cells, counts)
    offset = np.arange(pair_cell.shape[0], dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    src = np.repeat(first[items], counts) + offset
    n_hold = int(hid.max()) + 1 if hid.size else 1
    key = pair_cell * n_hold + hid[src]
    uniq, inv = np.unique(key, return_inverse=True)
    sums = np.abs(np.bincount(inv, weights=hs[src]))
    ucell = uniq // n_hold
    hfreq = np.bincount(ucell, minlength=n_cells).astype(float)
    htop = top_k_by_group(ucell, sums, n_cells, k)
    return hfreq, htop


# ---------------------------------------------------------------------------- step 1
def _floor_top_as_top(
    top: np.ndarray,
    resp: np.ndarray | None,
    sh: np.ndarray | None,
    w: np.ndarray | None,
    units: Any,
    n: int,
) -> tuple[np.ndarray | None, float]:
    """(floor_top, low) read off `top` when they are the same lists (no weights, the shadow
    is the response, nothing negative; or an unweighted count): one top-K pass, not two."""
    if w is not None or units is not None:
        return None, 0.0
    if resp is None:
        return (top.copy(), 1.0 if n else 0.0) if sh is None else (None, 0.0)
    low = float(resp.min()) if n else 0.0
    if sh is None or low < 0 or not (sh is resp or np.array_equal(sh, resp)):
        return None, 0.0
    return top.copy(), low


def build_fine(
    categorical: Sequence[tuple[np.ndarray, list[str]]],
    response: np.ndarray | None,
    shadow: np.ndarray | None,
    cost: np.ndarray | None,
    k: int,
    weights: np.ndarray | None = None,
    holding: np.ndarray | None = None,
    request: np.ndarray | None = None,
    keep_units: bool = False,
) -> FineCells:
    """Aggregate records per combination of data codes.

    `categorical` holds (codes, categories) per explanatory variable; `response` None means a
    frequency table; `shadow`/`cost` None mean the response (cost: see `cost_kind` handling
    by the caller); `holding` is an integer holding id per record; `request` is 0 (no
    request), 1 or 2 per record.
    """
    n = categorical[0][0].shape[0]
    sizes = [max(len(cats), 1) for _, cats in categorical]
    # row-major key built in place: one int64 array per record, not one per variable
    flat = np.asarray(categorical[0][0]).astype(np.int64)
    for (codes, _), size in zip(categorical[1:], sizes[1:], strict=True):
        flat *= size
        flat += codes
    space = int(np.prod(sizes))
    if space <= max(4 * n, 1 << 20):
        # dense key space: O(n) compaction instead of a sort of all records
        present = np.bincount(flat, minlength=space) > 0
        uniq = np.flatnonzero(present)
        lookup = np.cumsum(present) - 1
        inv = lookup[flat]
        del present, lookup
    else:
        uniq, inv = np.unique(flat, return_inverse=True)
    n_fine = uniq.shape[0]
    keys = np.stack(np.unravel_index(uniq, sizes), axis=1).astype(np.int64)
    del flat
    w = None if weights is None else np.asarray(weights, dtype=float)
    resp = None if response is None else np.asarray(response, dtype=float)
    sh = resp if shadow is None else np.asarray(shadow, dtype=float)
    co = resp if cost is None else np.asarray(cost, dtype=float)
    freq = np.bincount(inv, minlength=n_fine).astype(float)

    def total(x: np.ndarray | None) -> np.ndarray:
        """Σ (weighted) x per fine cell; x None = 1 per record (no array of ones is made)."""
        if x is None:
            return freq.copy() if w is None else np.bincount(inv, weights=w, minlength=n_fine)
        return np.bincount(inv, weights=x if w is None else x * w, minlength=n_fine)

    units = None
    if w is not None and keep_units:  # chunked: top units once every chunk is in
        x = np.ones(n) if sh is None else np.abs(sh)
        units = _unit_candidates(inv.astype(np.int64), x, w, k)
        top = np.zeros((n_fine, k))
    elif sh is None:  # frequency table: every contribution is one unit
        if w is None:
            top = top_k_by_group(inv, np.ones(n), n_fine, k, overwrite=True)
        else:
            top = _unit_top(inv, np.ones(n), w, n_fine, k)
    elif w is None:
        top = top_k_by_group(inv, np.abs(sh), n_fine, k, overwrite=True)
    else:
        top = _unit_top(inv, np.abs(sh), w, n_fine, k)
    # each record's own published contribution (D-91): w·x, or w (1) in a frequency table
    floor_top, low = _floor_top_as_top(top, resp, sh, w, units, n)
    if floor_top is None:
        if resp is None:
            own = np.ones(n) if w is None else w.copy()
        else:
            own = resp.copy() if w is None else resp * w
        low = float(own.min()) if n else 0.0
        floor_top = top_k_by_group(inv, np.clip(own, 0.0, None, out=own), n_fine, k, overwrite=True)
    fine = FineCells(
        fine_codes=[list(cats) for _, cats in categorical],
        keys=keys,
        value=total(resp),
        freq=freq,
        shadow=total(sh),
        cost_raw=total(co),
        weight_sum=total(None),
        top=top,
        units=units,
        floor_top=floor_top,
        low=low,
    )
    if holding is not None:
        hid = np.asarray(holding, dtype=np.int64)
        n_hold = int(hid.max()) + 1 if n else 1
        pair = inv.astype(np.int64) * n_hold + hid
        upair, pinv = np.unique(pair, return_inverse=True)
        fine.hold_fine = upair // n_hold
        fine.hold_id = upair % n_hold
        fine.hold_sum = (
            np.bincount(pinv, weights=sh) if sh is not None else np.bincount(pinv).astype(float)
        )
        fine.hold_value = (
            np.bincount(pinv, weights=resp) if resp is not None else np.bincount(pinv).astype(float)
        )
    if request is not None:
        req = np.asarray(request)
        fine.request_top = np.zeros((n_fine, 2))
        for c in (1, 2):
            m = req == c
            if m.any():
                x = np.ones(int(m.sum())) if sh is None else np.abs(sh[m])
                np.maximum.at(fine.request_top[:, c - 1], inv[m], x)
        fine.request_freq = np.bincount(inv, weights=(req > 0).astype(float), minlength=n_fine)
    return fine


def leaf_map_for(
    dim: CodeList,
    fine_codes: list[str],
    used: np.ndarray,
    counts: np.ndarray,
    where: str,
    line_of_code=None,
    source: str = "",
) -> np.ndarray:
    """Map each data code to its leaf node; unknown codes → one error listing them all.

    `line_of_code(j)` gives the data line of the first record with code j (the error points
    at it); `source` names the hierarchy (file) the codes were looked up in.
    """
    index = dim.leaf_index
    out = np.full(len(fine_codes), -1, dtype=np.int64)
    unknown: list[tuple[int, str, int]] = []
    for j, code in enumerate(fine_codes):
        node = index.get(code)
        if node is None:
            if used[j]:
                unknown.append((j, code, int(counts[j])))
        else:
            out[j] = node
    if unknown:
        lines = {j: line_of_code(j) for j, _, _ in unknown[:20]} if line_of_code else {}
        listed = ", ".join(
            f"{c!r} ({n} records" + (f", first on line {lines[j]})" if j in lines else ")")
            for j, c, n in unknown[:20]
        )
        more = f" and {len(unknown) - 20} more" if len(unknown) > 20 else ""
        first_line = min(lines.values()) if lines else None
        raise InputError(
            f"variable {dim.name}: {len(unknown)} code(s) in the data are not leaves of its "
            f"{source or 'hierarchy/code list'}: {listed}{more}. "
            + _unknown_code_hint(dim, [c for _, c, _ in unknown], source),
            file=where,
            line=first_line,
        )
    return out


def _unknown_code_hint(dim: CodeList, unknown: list[str], source: str) -> str:
    """What most likely went wrong, for the codes a hierarchy does not know."""
    for code in unknown:
        for node in dim.codes[1:]:
            prefix = node[: len(node) - len(code)]
            lead = prefix.strip() and len(set(prefix)) == 1 and not prefix.isalnum()
            if node.endswith(code) and lead:
                return (
                    f"The hierarchy has the code {node!r}: its lines seem to use the lead "
                    f"string {prefix[0]!r}; check <HIERLEADSTRING> in the metadata."
                )
    if any(not c.strip() for c in unknown):
        return (
            "A blank code comes from a line too short for the field or an empty field; "
            f"fix the data, or the {source or 'hierarchy'}."
        )
    return f"Fix the data or the {source or 'hierarchy'}, or recode the variable."


def check_dimensions(spec: TableSpec) -> None:
    if not 1 <= len(spec.explanatory) <= MAX_DIMENSIONS:
        raise SpecificationError(
            f"a table needs 1 to {MAX_DIMENSIONS} explanatory variables, "
            f"got {len(spec.explanatory)} ({', '.join(spec.explanatory)})"
        )


def build_tables(
    meta,
    data,
    specs: Sequence[TableSpec],
    log: list[str] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    *,
    codelist_for: CodelistFor,
) -> list[Table]:
    """Every specified table from loaded microdata columns (rules are applied by the caller)."""
    log = log if log is not None else []
    if hasattr(data, "iter_chunks"):
        return build_tables_chunked(
            meta, data, specs, log, progress, cancel, codelist_for=codelist_for
        )
    tables: list[Table] = []
    for t, spec in enumerate(specs):
        if cancel is not None and cancel.cancelled:
            break
        progress(ProgressEvent(f"Computing table {t + 1} of {len(specs)}", fraction=t / len(specs)))
        tables.append(build_table(meta, data, spec, log, codelist_for=codelist_for))
    progress(ProgressEvent("Tables computed", fraction=1.0))
    return tables


def _warn_lone_leaves(dim: CodeList, used_nodes: np.ndarray, source: str, log: list[str]) -> None:
    """A code without sub-codes or records among siblings that all have sub-codes is the
    trace of a damaged hierarchy line (a code split in two, a line inserted); legal, so only
    logged."""
    children = dim.children
    has_data = np.zeros(len(dim.codes), dtype=bool)
    has_data[used_nodes[used_nodes >= 0]] = True
    lone = []
    for kids in children:
        if len(kids) < 2:
            continue
        leaves = [k for k in kids if not children[k] and not dim.is_missing[k]]
        if len(leaves) == 1 and not has_data[leaves[0]]:
            lone.append(dim.codes[leaves[0]])
    if lone:
        listed = ", ".join(repr(c) for c in lone[:5])
        log.append(
            f"warning: {dim.name}: code(s) {listed} of the {source} have no sub-codes and no "
            "records while every other code beside them has sub-codes; is a line of the "
            "hierarchy damaged?"
        )


def _check_finite_cells(table: Table, spec: TableSpec, where: str) -> None:
    """Cell sums must be finite numbers: an overflow (huge values, weights) reaching the rules
    or a solver gives wrong statuses or solver errors instead of a clear message."""
    for what, arr, name in (
        ("response", table.value, spec.response),
        ("shadow", table.shadow, spec.shadow or spec.response),
        ("cost", table.cost_raw, spec.cost.variable or spec.response),
    ):
        if arr is not None and not np.isfinite(arr).all():
            weighted = " (weighted)" if spec.use_weights else ""
            raise InputError(
                f"the cell sums of {name or what}{weighted} overflow: some cell is beyond the "
                "largest number a computer can hold (about 1.8e308); the values are too large "
                "for this table. Rescale the variable (e.g. thousands)",
                file=where,
            )


def _first_line_of(data, codes: np.ndarray):
    """category id → data line of its first record (None when the data has no lines)."""
    line_of = getattr(data, "line_of", None)
    if line_of is None:
        return None

    def first(j: int) -> int:
        return int(line_of(int(np.argmax(codes == j))))

    return first


def _hierarchy_source(var, meta) -> str:
    """How the codes of a variable are defined, with the file name where there is one."""
    from pathlib import PureWindowsPath

    if getattr(var, "hierarchical", False) and getattr(var, "hier_file", None):
        name = PureWindowsPath(var.hier_file).name
        rda = getattr(getattr(meta, "path", None), "name", None)
        named = f" (named in {rda})" if rda else ""
        return f"hierarchy file {name}{named}"
    if getattr(var, "hierarchical", False) and getattr(var, "tree", None) is not None:
        return "hierarchy (given as parent/child pairs)"
    if getattr(var, "hierarchical", False):
        return "digit-level hierarchy (<HIERLEVELS>)"
    return "code list"


def _column(data, name: str):
    """A categorical column of the loaded microdata: (codes, categories)."""
    return data.codes(name) if hasattr(data, "codes") else data.column(name)


def _numbers(data, name: str) -> np.ndarray:
    """A numeric column (a <RECODEABLE> <NUMERIC> variable has both kinds: take the numbers)."""
    col = data.values(name) if hasattr(data, "values") else data.column(name)
    return np.asarray(col, dtype=float)


@dataclass
class _TableInputs:
    """The per-record arrays one table needs from the loaded columns (or one chunk of them)."""

    variables: list
    cats: list[tuple[np.ndarray, list[str]]]
    response: np.ndarray | None
    shadow: np.ndarray | None
    cost: np.ndarray
    weights: np.ndarray | None
    holding: np.ndarray | None
    request: np.ndarray | None
    decimals: int


def _table_inputs(meta, data, spec: TableSpec) -> _TableInputs:
    """Columns, weights, holdings, requests and costs of a table's records, checked."""
    check_dimensions(spec)
    cats: list[tuple[np.ndarray, list[str]]] = []
    variables = []
    for name in spec.explanatory:
        var = meta.variable(name)
        if not var.recodeable:
            raise SpecificationError(
                f"variable {var.name} is not an explanatory (<RECODEABLE>) variable",
                file=getattr(meta, "path", None),
            )
        codes, categories = _column(data, var.name)
        cats.append((np.asarray(codes), list(categories)))
        variables.append(var)
    response = shadow = cost = None
    decimals = 0
    if spec.response is not None:
        rvar = meta.variable(spec.response)
        response = _numbers(data, rvar.name)
        decimals = int(rvar.decimals)
    if spec.shadow is not None:
        shadow = _numbers(data, meta.variable(spec.shadow).name)
    weights = None
    if spec.use_weights:
        wvar = meta.weight
        if wvar is None:
            raise SpecificationError("WGT(1) asks for weights but the metadata has no <WEIGHT>")
        weights = _numbers(data, wvar.name)
    holding = None
    if spec.use_holdings:
        hvar = meta.holding
        if hvar is None:
            raise SpecificationError(
                "holding-level rules need a <HOLDING> variable in the metadata",
                file=getattr(meta, "path", None),
            )
        if weights is not None:
            raise SpecificationError("weights and holdings cannot be used together")
        # argusqt/docs/formats.md §2.3: a new holding starts wherever the holding code changes
        if hasattr(data, "holding_runs"):
            holding = data.holding_runs(hvar.name)
        else:
            holding = np.asarray(_column(data, hvar.name)[0], dtype=np.int64)
    request = None
    rq = getattr(meta, "request", None)
    if rq is not None and (spec.rules.req_individual or spec.rules.req_holding):
        rcodes, rcats = _column(data, rq.name)
        wanted = [c.strip() for c in rq.request_codes]
        lut = np.zeros(len(rcats) + 1, dtype=np.int8)
        for j, c in enumerate(rcats):
            s = c.strip()
            if wanted and s == wanted[0]:
                lut[j] = 1
            elif len(wanted) > 1 and s == wanted[1]:
                lut[j] = 2
        request = lut[np.asarray(rcodes)]
    n = cats[0][0].shape[0]
    kind = spec.cost.kind
    if kind == "variable":
        cost_var = spec.cost.variable or spec.response
        if cost_var is None:
            cost = np.ones(n)  # frequency table with variable cost: cost = frequency
        else:
            cost = _numbers(data, meta.variable(cost_var).name)
    else:  # frequency; unity and distance are computed per cell later (rules.cost)
        cost = np.ones(n)
    if weights is not None and kind == "frequency":
        cost = 1.0 / np.where(weights == 0, 1.0, weights)  # Σ w·(1/w) = record count
    return _TableInputs(
        variables, cats, response, shadow, cost, weights, holding, request, decimals
    )


def needed_variables(meta, spec: TableSpec) -> list[str]:
    """The microdata variables a table reads (those `_table_inputs` takes): a streamed file
    parses only these."""
    names = list(spec.explanatory)
    names += [n for n in (spec.response, spec.shadow) if n is not None]
    if spec.use_weights and meta.weight is not None:
        names.append(meta.weight.name)
    if spec.use_holdings and meta.holding is not None:
        names.append(meta.holding.name)
    rq = getattr(meta, "request", None)
    if rq is not None and (spec.rules.req_individual or spec.rules.req_holding):
        names.append(rq.name)
    if spec.cost.kind == "variable" and spec.cost.variable is not None:
        names.append(spec.cost.variable)
    return names


def _fine_of(inputs: _TableInputs, spec: TableSpec, *, keep_units: bool = False) -> FineCells:
    return build_fine(
        inputs.cats,
        inputs.response,
        inputs.shadow,
        inputs.cost,
        spec.rules.top_n_needed(),
        weights=inputs.weights,
        holding=inputs.holding,
        request=inputs.request,
        keep_units=keep_units,
    )


def build_table(meta, data, spec: TableSpec, log: list[str], *, codelist_for: CodelistFor) -> Table:
    """One table: fine cells from the loaded columns, codelists, then all cells."""
    if hasattr(data, "iter_chunks"):
        return build_tables_chunked(meta, data, [spec], log, codelist_for=codelist_for)[0]
    inputs = _table_inputs(meta, data, spec)
    fine = _fine_of(inputs, spec)
    counts = [np.bincount(c, minlength=len(cats)) for c, cats in inputs.cats]
    first_lines = [_first_line_of(data, c) for c, _ in inputs.cats]
    where = str(getattr(data, "path", "") or getattr(meta, "path", ""))
    return _table_from(meta, spec, fine, inputs.variables, counts, first_lines, where, log,
                       inputs.decimals, codelist_for)  # fmt: skip


def _table_from(
    meta,
    spec: TableSpec,
    fine: FineCells,
    variables: list,
    counts: list[np.ndarray],
    first_lines: list,
    where: str,
    log: list[str],
    decimals: int,
    codelist_for: CodelistFor,
) -> Table:
    """Codelists, leaf maps and every cell of a table from its fine cells."""
    dims: list[CodeList] = []
    leaf_maps: list[np.ndarray] = []
    for d, var in enumerate(variables):
        categories = fine.fine_codes[d]
        used = counts[d] > 0
        observed = [c for c, u in zip(categories, used, strict=True) if u]
        dim = codelist_for(var, meta, observed, log)
        dims.append(dim)
        leaf_maps.append(
            leaf_map_for(
                dim,
                categories,
                used,
                counts[d],
                where,
                first_lines[d],
                _hierarchy_source(var, meta),
            )  # fmt: skip
        )
    for d, var in enumerate(variables):
        if dims[d].hierarchical:
            used_nodes = leaf_maps[d][counts[d] > 0]
            _warn_lone_leaves(dims[d], used_nodes, _hierarchy_source(var, meta), log)
    table = table_from_fine(fine, dims, leaf_maps, spec, decimals)
    _check_finite_cells(table, spec, where)
    table.name = " × ".join(spec.explanatory) + (
        f" | {spec.response}" if spec.response else " | frequency"
    )
    return table


# ---------------------------------------------------------------------------- chunked
def _merged_top(
    inv: np.ndarray, a: np.ndarray | None, b: np.ndarray | None, n: int, k: int
) -> np.ndarray | None:
    """The K largest of two fine cells' top-K lists merged (None when one side lacks them)."""
    if a is None or b is None:
        return None
    both = np.concatenate([a, b]).ravel()
    return top_k_by_group(np.repeat(inv, k), both, n, k, overwrite=True)


def merge_fine(a: FineCells, b: FineCells) -> FineCells:
    """The fine cells of the union of two record sets whose category ids agree (`b`'s code
    lists extend `a`'s): sums add, top-K lists merge, holding sums add per (fine, holding)."""
    k = a.k
    sizes = [max(len(cb), len(ca), 1) for ca, cb in zip(a.fine_codes, b.fine_codes, strict=True)]
    keys = np.concatenate([a.keys, b.keys])
    flat = np.ravel_multi_index(tuple(keys.T), sizes) if keys.size else np.zeros(0, np.int64)
    uniq, inv = np.unique(flat, return_inverse=True)
    n = uniq.shape[0]
    inv = inv.ravel()

    def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.bincount(inv, weights=np.concatenate([x, y]), minlength=n)

    if a.units is not None and b.units is not None:
        g = np.concatenate([inv[a.units[0]], inv[a.n_fine + b.units[0]]])
        x = np.concatenate([a.units[1], b.units[1]])
        w = np.concatenate([a.units[2], b.units[2]])
        units = _unit_candidates(g, x, w, k)
        top = np.zeros((n, k))
    else:
        units = None
        top = top_k_by_group(
            np.repeat(inv, k), np.concatenate([a.top, b.top]).ravel(), n, k, overwrite=True
        )
    fine = FineCells(
        fine_codes=[list(cb) if len(cb) >= len(ca) else list(ca)
                    for ca, cb in zip(a.fine_codes, b.fine_codes, strict=True)],
        keys=np.stack(np.unravel_index(uniq, sizes), axis=1).astype(np.int64),
        value=add(a.value, b.value),
        freq=add(a.freq, b.freq),
        shadow=add(a.shadow, b.shadow),
        cost_raw=add(a.cost_raw, b.cost_raw),
        weight_sum=add(a.weight_sum, b.weight_sum),
        top=top,
        units=units,
        floor_top=_merged_top(inv, a.floor_top, b.floor_top, n, k),
        low=min(a.low, b.low),
    )  # fmt: skip
    if a.hold_fine is not None and b.hold_fine is not None:
        assert a.hold_id is not None and b.hold_id is not None
        assert a.hold_sum is not None and b.hold_sum is not None
        hf = np.concatenate([inv[a.hold_fine], inv[a.n_fine + b.hold_fine]])
        hid = np.concatenate([a.hold_id, b.hold_id])
        n_hold = int(hid.max()) + 1 if hid.size else 1
        upair, pinv = np.unique(hf * n_hold + hid, return_inverse=True)
        fine.hold_fine, fine.hold_id = upair // n_hold, upair % n_hold
        fine.hold_sum = np.bincount(pinv.ravel(), weights=np.concatenate([a.hold_sum, b.hold_sum]))
        if a.hold_value is not None and b.hold_value is not None:
            both = np.concatenate([a.hold_value, b.hold_value])
            fine.hold_value = np.bincount(pinv.ravel(), weights=both)
    if a.request_top is not None and b.request_top is not None:
        assert a.request_freq is not None and b.request_freq is not None
        fine.request_top = np.zeros((n, 2))
        for c in range(2):
            np.maximum.at(fine.request_top[:, c], inv,
                          np.concatenate([a.request_top[:, c], b.request_top[:, c]]))  # fmt: skip
        fine.request_freq = add(a.request_freq, b.request_freq)
    return fine


def _unit_candidates(
    g: np.ndarray, x: np.ndarray, w: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records (group, |x|, weight) that can hold one of the K largest "units" of their
    group: those whose cumulative weight before them, largest first, is below K."""
    if g.size == 0:
        return g, x, w
    # cheap first cut: a group whose K largest records weigh ≥ K in all needs no record
    # below its K-th largest x; only the other groups keep every record for the exact cut
    n_groups = int(g.max()) + 1
    kth = top_k_by_group(g, x, n_groups, k)[:, k - 1]
    keep = x >= kth[g]
    covered = np.bincount(g[keep], weights=w[keep], minlength=n_groups)
    keep |= (covered < k)[g]
    g, x, w = g[keep], x[keep], w[keep]
    order = np.lexsort((-x, g))
    g, x, w = g[order], x[order], w[order]
    starts = np.r_[True, g[1:] != g[:-1]]
    cw = np.cumsum(w)
    base = (cw - w)[np.flatnonzero(starts)][np.cumsum(starts) - 1]
    keep = (cw - w - base) < k
    return g[keep], x[keep], w[keep]


def build_tables_chunked(
    meta,
    data,
    specs: Sequence[TableSpec],
    log: list[str] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    *,
    codelist_for: CodelistFor,
) -> list[Table]:
    """Every table from microdata read in chunks (`data.iter_chunks`): each chunk's fine
    cells are merged into the table's running fine cells, so memory holds one chunk of the
    needed columns plus the fine cells, never all records (docs/design.md, D-30).
    Cancelled: an empty list (there is no partial table)."""
    log = log if log is not None else []
    for spec in specs:
        check_dimensions(spec)
    acc: list[FineCells | None] = [None] * len(specs)
    variables: list[list] = [[] for _ in specs]
    decimals = [0] * len(specs)
    names = list(dict.fromkeys(n for spec in specs for n in needed_variables(meta, spec)))
    for chunk in data.iter_chunks(progress, cancel, names):
        if cancel is not None and cancel.cancelled:
            return []
        for t, spec in enumerate(specs):
            inputs = _table_inputs(meta, chunk, spec)
            fine = _fine_of(inputs, spec, keep_units=inputs.weights is not None)
            prev = acc[t]
            acc[t] = fine if prev is None else merge_fine(prev, fine)
            variables[t], decimals[t] = inputs.variables, inputs.decimals
    log.extend(getattr(data, "pass_log", ()))  # a streamed file's warnings, read per compute
    first_line = getattr(data, "first_line_of", None)
    tables = []
    where = str(getattr(data, "path", "") or getattr(meta, "path", ""))
    for t, spec in enumerate(specs):
        merged = acc[t]
        if merged is None:  # no records at all: one empty chunk gives the structure
            inputs = _table_inputs(meta, data.empty_chunk(), spec)
            merged, variables[t] = _fine_of(inputs, spec), inputs.variables
        fine = merged
        if fine.units is not None:
            g, x, w = fine.units
            order = np.argsort(g, kind="stable")
            fine.top = _unit_top(g[order], x[order], w[order], fine.n_fine, fine.k)
            fine.units = None
        fine.fine_codes = [data.final_categories(v.name) for v in variables[t]]
        counts = [
            np.bincount(fine.keys[:, d], weights=fine.freq, minlength=len(fine.fine_codes[d]))
            for d in range(len(variables[t]))
        ]
        lines = [first_line(v.name) if first_line else None for v in variables[t]]
        tables.append(_table_from(meta, spec, fine, variables[t], counts, lines, where, log,
                                  decimals[t], codelist_for))  # fmt: skip
    return tables
