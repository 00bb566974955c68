"""Who alone makes up which cells: the knowledge of the insider attacker (docs/design.md).

A respondent (a record, or a holding when the table uses holdings) that is the only
contributor of a cell knows that cell's value exactly. Only those respondents know more
than an outsider about the published table, so only they are kept: one row each, with
the cells it alone makes up. Cells' respondent counts come from the Table (freq/hfreq);
which holding is alone in which cell comes from the fine cells the table was built from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

if TYPE_CHECKING:
    from argusqt.model.table import Table


def expand_to_cells(
    nodes: Sequence[np.ndarray], dims: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """model.tabulate's expand_to_cells, imported at the first call: a table file's batch
    builds its respondents from no microdata and never tabulates (D-111)."""
    # lazy: tabulating (a table file's batch never tabulates microdata; D-111)
    from argusqt.model.tabulate import expand_to_cells as expand

    return expand(nodes, dims)


@dataclass(eq=False)
class Respondents:
    """Respondents that alone make up at least one cell, and what they may learn freely.

    `known` is respondents × cells (1 where the respondent alone makes up the cell); rows
    are disjoint because a cell made up by one respondent has exactly one. `exempt` adds
    the cells whose protection is meant for the respondent itself: those where it is the
    largest contributor (the one the dominance and p% rules protect). Narrowing such a
    cell only tells the respondent what it already knows best, its own share.
    """

    known: sp.csr_matrix
    exempt: sp.csr_matrix
    unit: str  # "record" or "holding"
    #: how the respondents were identified when not exactly (said in the verdict)
    note: str = ""
    #: each row's respondent id in the microdata (holdings), None when not known; rows of
    #: tables built from the same microdata with the same id are the same respondent
    ids: np.ndarray | None = None
    #: rows of other holdings (ids) over this table's cells, for a linked set (D-51)
    rows_of: Callable[[np.ndarray], Respondents] | None = None

    @property
    def count(self) -> int:
        return int(self.known.shape[0])

    def padded(self, n_cells: int) -> Respondents:
        """The same respondents over a problem with more cells (virtual cells appended)."""
        if self.known.shape[1] == n_cells:
            return self
        return replace(self, known=_wider(self.known, n_cells), exempt=_wider(self.exempt, n_cells))


def _wider(m: sp.csr_matrix, n_cells: int) -> sp.csr_matrix:
    """`m` over more cells, the new ones empty: the same rows over virtual cells appended."""
    m = m.tocsr()
    return sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], n_cells))


def _sole(freq: np.ndarray) -> np.ndarray:
    return np.isclose(np.asarray(freq, dtype=float), 1.0)


def _binary(m: Any) -> sp.csr_matrix:
    m = sp.csr_matrix(m)
    m.eliminate_zeros()
    m.data[:] = 1.0
    return m


def diagonal(mask: np.ndarray) -> sp.csr_matrix:
    """The 0/1 diagonal of `mask` as scipy's `diags(mask.astype(float)).tocsr()` holds it
    (its zeros left out), without `diags`: its DIA constructor calls `np.unique`, which
    imports numpy.ma (≈ 12 ms) on a small table's run (docs/design.md, D-107)."""
    at = np.flatnonzero(mask)
    return sp.csr_matrix((np.ones(at.size), (at, at)), shape=(mask.size, mask.size))


def _closure(start: sp.csr_matrix, up: sp.csr_matrix) -> sp.csr_matrix:
    """Rows of `start` extended with every cell reachable through `up` (child → parent)."""
    reach = _binary(start)
    frontier = reach
    while frontier.nnz:
        nxt = _binary(frontier @ up)
        new = _binary(nxt - nxt.multiply(reach))
        reach = _binary(reach + new)
        frontier = new
    return reach


def from_frequencies(
    relations: Any,
    freq: np.ndarray,
    unit: str = "record",
    note: str = "",
    shadow: np.ndarray | None = None,
    top: np.ndarray | None = None,
) -> Respondents:
    """Respondents of cells with one contributor, each followed up its chain of cells.

    A cell with one record has exactly one child (in every dimension where it has
    children) with one record: the same record. So a respondent is anchored at a
    one-contributor cell none of whose children has one contributor; it alone makes up
    every one-contributor ancestor of the anchor and contributes to every ancestor
    (parent = −1, children = +1 in M). Its contribution is the anchor's `shadow`; where a
    cell's largest contribution `top` is that large the cell is exempt. Without `top`
    every cell it contributes to is exempt.
    """
    rel = sp.csr_matrix(relations)
    n = rel.shape[1]
    single = _sole(freq)
    child = _binary(rel.multiply(rel > 0))
    parent = _binary((-rel).multiply(rel < 0))
    row_has_single_child = (child @ single.astype(float)) > 0
    has_single_child = (parent.T @ row_has_single_child.astype(float)) > 0
    anchors = np.flatnonzero(single & ~has_single_child)
    up = _binary(child.T @ parent)  # child → parent, cells × cells
    k = anchors.size
    start = sp.csr_matrix((np.ones(k), (np.arange(k), anchors)), shape=(k, n))
    known = _closure(start, _binary(up @ diagonal(single)))
    own = _closure(start, up)
    if top is None or shadow is None:
        exempt = own
    else:
        share = unit_share(shadow, top, anchors)
        exempt = _largest(own, share[own.tocoo().row], top)
    return Respondents(known, _binary(exempt + known), unit, note)


def unit_share(shadow: np.ndarray, top: np.ndarray | None, cells: np.ndarray) -> np.ndarray:
    """The contribution of the one record of each of `cells`, on the scale of `top` (unit
    contributions, argusqt/docs/rules.md §3.9): its cell's largest unit. The cell's sum
    would be its weight times that, and a weight above 1 would make it look the largest
    of cells where it is not (docs/design.md, D-90)."""
    t = np.asarray(top, dtype=float) if top is not None else None
    if t is None or t.ndim != 2 or not t.shape[1]:
        return np.abs(np.asarray(shadow, dtype=float))[cells]
    return t[cells, 0]


def _largest(own: sp.csr_matrix, share: np.ndarray, top: np.ndarray) -> sp.csr_matrix:
    """Entries of `own` (respondent, cell) where the respondent's |share| is the cell's largest.

    `share` is aligned with own.tocoo(); a cell without top-n information (0) counts as
    the respondent's: we cannot tell who the rule protects there.
    """
    coo = own.tocoo()
    largest = np.asarray(top, dtype=float)
    if largest.ndim == 2:
        largest = largest[:, 0] if largest.shape[1] else np.zeros(largest.shape[0])
    biggest = largest[coo.col]
    hit = (biggest <= 0) | (share >= biggest * (1 - 1e-9) - 1e-9)
    return sp.csr_matrix((np.ones(int(hit.sum())), (coo.row[hit], coo.col[hit])), shape=own.shape)


def from_table(table: Table, relations: sp.spmatrix) -> Respondents:
    """Respondents of a Table: holdings when it uses holdings, else records."""
    use_h = bool(table.spec.use_holdings) and table.hfreq is not None
    if not use_h:
        return from_frequencies(relations, table.freq, "record", shadow=table.shadow, top=table.top)
    source = getattr(table, "source", None)
    fine = source[0] if source is not None else None
    if fine is None or getattr(fine, "hold_fine", None) is None:
        # without the microdata a holding alone in two unrelated cells looks like two
        # holdings: the attacker is weaker than the real one, which the verdict says
        assert table.hfreq is not None  # use_h
        return from_frequencies(
            relations,
            table.hfreq,
            "holding",
            note="holdings identified per cell chain only (no microdata)",
        )
    assert source is not None  # fine came from it
    return _from_holdings(table, fine, source[1])


def _from_holdings(table: Any, fine: Any, leaf_maps: Any) -> Respondents:
    """One row per holding that is the only holding of some cell, from the fine cells."""
    per_fine = np.bincount(fine.hold_fine, minlength=fine.n_fine)
    # a fine cell under a one-holding cell has that holding only
    lone_pairs = np.flatnonzero(per_fine[fine.hold_fine] == 1)
    candidates = np.unique(fine.hold_id[lone_pairs])
    out = _holding_rows(table, fine, leaf_maps, candidates, alone_only=True)
    # another table of a linked set may need this table's cells of other holdings (D-51)
    out.rows_of = partial(_holding_rows, table, fine, leaf_maps, alone_only=False)
    return out


def _holding_rows(
    table: Any, fine: Any, leaf_maps: Any, candidates: np.ndarray, *, alone_only: bool
) -> Respondents:
    """Rows of the holdings `candidates` (only those alone in some cell with `alone_only`):
    the cells each alone makes up and those where it is the largest contributor."""
    n = table.n_cells
    hfreq = np.asarray(table.hfreq, dtype=float)
    empty = sp.csr_matrix((0, n))
    if candidates.size == 0:
        return Respondents(empty, empty, "holding", ids=np.zeros(0, dtype=np.int64))
    # every (fine cell, holding) pair of those holdings, expanded to the table's cells
    pairs = np.flatnonzero(np.isin(fine.hold_id, candidates))
    if pairs.size == 0:
        return Respondents(empty, empty, "holding", ids=np.zeros(0, dtype=np.int64))
    f = fine.hold_fine[pairs]
    nodes = [np.asarray(leaf_maps[d])[fine.keys[f, d]] for d in range(len(table.dims))]
    cells, items = expand_to_cells(nodes, table.dims)
    hold = fine.hold_id[pairs][items]
    key = hold * n + cells
    uniq, inv = np.unique(key, return_inverse=True)
    share = np.abs(np.bincount(inv, weights=fine.hold_sum[pairs][items]))
    u_hold, u_cell = uniq // n, uniq % n
    alone = _sole(hfreq[u_cell])
    ids, row = np.unique(u_hold, return_inverse=True)
    # holdings alone in some cell
    keep = np.isin(ids, np.unique(u_hold[alone])) if alone_only else np.ones(ids.size, bool)
    new_row = np.cumsum(keep) - 1
    sel = keep[row]
    r, c, sh = new_row[row[sel]], u_cell[sel], share[sel]
    k = int(keep.sum())
    own = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(k, n))
    known = _binary(sp.csr_matrix((alone[sel].astype(float), (r, c)), shape=(k, n)))
    coo = own.tocoo()
    # own was built from unique (r, c) pairs in order: its COO order matches sorted keys
    order = np.lexsort((c, r))
    exempt = _largest(own, sh[order], table.htop)
    assert np.array_equal(coo.row, r[order]) and np.array_equal(coo.col, c[order])
    return Respondents(known, _binary(exempt + known), "holding", ids=ids[keep])


def joined(
    parts: list[Respondents],
    local: list[np.ndarray],
    n_cells: int,
    same: sp.csr_matrix | None = None,
    largest: sp.csr_matrix | None = None,
) -> Respondents:
    """The respondents of tables published together, over their joint cells (`local[k]`:
    joint cell of each cell of table k): one row per respondent, rows of the same
    respondent merged — same holding id (among the tables that have ids), alone in a
    common cell (a cell made up by one respondent has exactly one), or alone in two cells
    that `same` (joint cells × joint cells) says one record makes up, so that a respondent
    is never split into two attackers that each "recompute" the other's cells; `largest`
    (cell alone made up → cell) adds the cells of other tables a record is the largest
    contributor of to its exempt ones. Record-level
    rows (no id) of tables that share none of their cells and have no `same` pair stay
    apart (docs/design.md, D-51, D-90)."""
    every = [p.ids for p in parts if p.ids is not None]
    if every:  # tables without ids (record level) do not stop the others' merging by id
        wanted = np.unique(np.concatenate(every))
        parts = [_completed(p, wanted) if p.ids is not None else p for p in parts]
    rows, known, exempt = [], [], []
    offset = 0
    for part, loc in zip(parts, local, strict=True):
        loc = np.asarray(loc, dtype=np.int64)
        remap = sp.csr_matrix(
            (np.ones(loc.size), (np.arange(loc.size), loc)), shape=(loc.size, n_cells)
        )
        known.append(_binary(part.known[:, : loc.size] @ remap))
        exempt.append(_binary(part.exempt[:, : loc.size] @ remap))
        rows.append(np.arange(part.count) + offset)
        offset += part.count
    k = offset
    all_known = sp.vstack(known).tocsr() if k else sp.csr_matrix((0, n_cells))
    all_exempt = sp.vstack(exempt).tocsr() if k else sp.csr_matrix((0, n_cells))
    if k and largest is not None:
        all_exempt = _binary(all_exempt + all_known @ largest)
    # a graph of rows: rows sharing a known cell, rows sharing an id
    links = [_binary(all_known @ all_known.T)] if k else []
    if k and same is not None:
        links.append(_binary(all_known @ same @ all_known.T))
    ids = [p.ids for p in parts]
    if k and any(i is not None for i in ids):  # rows without an id are linked by cells only
        id_rows = np.concatenate([r for r, i in zip(rows, ids, strict=True) if i is not None])
        flat = np.concatenate([np.asarray(i, dtype=np.int64) for i in ids if i is not None])
        _, inv = np.unique(flat, return_inverse=True)
        by_id = sp.csr_matrix(
            (np.ones(id_rows.size), (id_rows, inv)), shape=(k, int(inv.max()) + 1)
        )
        links.append(_binary(by_id @ by_id.T))
    if not k:
        empty = sp.csr_matrix((0, n_cells))
        return Respondents(empty, empty, parts[0].unit if parts else "record")
    # lazy: scipy.sparse.csgraph imports scipy.linalg (0.3 s): only linked tables need it
    from scipy.sparse.csgraph import connected_components

    n_comp, comp = connected_components(sum(links[1:], links[0]), directed=False)
    merge = sp.csr_matrix((np.ones(k), (comp, np.arange(k))), shape=(n_comp, k))
    notes = "; ".join(sorted({p.note for p in parts if p.note}))
    units = {p.unit for p in parts}
    return Respondents(
        _binary(merge @ all_known),
        _binary(merge @ all_exempt),
        units.pop() if len(units) == 1 else "respondent",
        notes,
    )


def _completed(part: Respondents, wanted: np.ndarray) -> Respondents:
    """`part` with rows for the holdings of `wanted` it lacks (alone in no cell of its
    table, yet the largest contributor of some): a holding alone in a cell of another
    linked table keeps its exemptions in this one."""
    assert part.ids is not None
    missing = np.setdiff1d(wanted, part.ids)
    if part.rows_of is None or missing.size == 0:
        return part
    more = part.rows_of(missing)
    if more.count == 0 or more.ids is None:
        return part
    n = part.known.shape[1]
    return Respondents(
        sp.vstack([part.known, more.known[:, :n]]).tocsr(),
        sp.vstack([part.exempt, more.exempt[:, :n]]).tocsr(),
        part.unit,
        part.note,
        np.concatenate([part.ids, more.ids]),
    )


def _one_record_cells(t: Table) -> tuple[np.ndarray, np.ndarray]:
    """(cell, fine cell) for each cell of a microdata table made up by one record: that
    record's fine cell (the only one under the cell, since fine cells hold records)."""
    fine, maps = t.source
    one = np.flatnonzero(np.isclose(np.asarray(fine.freq, dtype=float), 1.0))
    nodes = [np.asarray(maps[d], dtype=np.int64)[fine.keys[one, d]] for d in range(t.ndim)]
    mapped = np.logical_and.reduce([nd >= 0 for nd in nodes])
    cells, items = expand_to_cells([nd[mapped] for nd in nodes], t.dims)
    alone = np.isclose(np.asarray(t.freq, dtype=float)[cells], 1.0)
    return cells[alone], one[mapped][items[alone]]


def record_links(
    tables: list[Table], local: list[np.ndarray], n: int
) -> tuple[sp.csr_matrix | None, sp.csr_matrix | None]:
    """A record alone in a cell of one record-level microdata table, found in the others
    (joint cells × joint cells): `same`, the cells it alone makes up there too; `largest`,
    the cells it is the largest contributor of (docs/design.md, D-90)."""
    # For tables A and B whose variables A's are among B's, the record alone in a cell b
    # of B lies in the one fine cell of A with its codes, and so in every cell of A over
    # it. Tables of one data set hold the same records (as export.shared assumes).
    usable = [
        k for k, t in enumerate(tables)
        if t.source is not None and t.ndim and not t.spec.use_holdings
    ]  # fmt: skip
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    top_rows: list[np.ndarray] = []
    top_cols: list[np.ndarray] = []
    for b in usable:
        tb = tables[b]
        names_b = [tb.variable(d) for d in range(tb.ndim)]
        cells_b, fine_b = _one_record_cells(tb)
        if not cells_b.size:
            continue
        fb = tb.source[0]
        for a in usable:
            ta = tables[a]
            names_a = [ta.variable(d) for d in range(ta.ndim)]
            if a == b or not set(names_a) <= set(names_b):
                continue
            fa, maps_a = ta.source
            sizes = [len(fa.fine_codes[d]) for d in range(ta.ndim)]
            if float(np.prod(sizes, dtype=float)) >= 2.0**62:
                continue  # the codes do not fit one integer key: no pair found (safe side)
            ids = np.empty((cells_b.size, ta.ndim), dtype=np.int64)
            for da, v in enumerate(names_a):  # a variable's codes: a few thousand at most
                db = names_b.index(v)
                at = {c: i for i, c in enumerate(fa.fine_codes[da])}
                trans = np.array([at.get(c, -1) for c in fb.fine_codes[db]], dtype=np.int64)
                ids[:, da] = trans[fb.keys[fine_b, db]]
            found = np.flatnonzero((ids >= 0).all(axis=1))
            if not found.size:
                continue
            key_a = np.ravel_multi_index(tuple(np.asarray(fa.keys, dtype=np.int64).T), sizes)
            key_q = np.ravel_multi_index(tuple(ids[found].T), sizes)
            order = np.argsort(key_a, kind="stable")
            pos = np.minimum(np.searchsorted(key_a[order], key_q), order.size - 1)
            located = key_a[order][pos] == key_q
            f_a, q = order[pos[located]], found[located]
            nodes = [np.asarray(maps_a[d], dtype=np.int64)[fa.keys[f_a, d]] for d in range(ta.ndim)]
            mapped = np.logical_and.reduce([nd >= 0 for nd in nodes])
            cells_a, items = expand_to_cells([nd[mapped] for nd in nodes], ta.dims)
            of_b = cells_b[q[mapped][items]]  # the cell of B the record is alone in
            alone = np.isclose(np.asarray(ta.freq, dtype=float)[cells_a], 1.0)
            rows.append(local[a][cells_a[alone]])
            cols.append(local[b][of_b[alone]])
            if _scale(ta) != _scale(tb) or ta.spec.use_weights:
                # another shadow: its share in B says nothing of its rank in A; weights:
                # `top` holds units, which fractional weights blur (no exemption: safe side)
                continue
            share = unit_share(tb.shadow, tb.top, of_b)
            top = np.asarray(ta.top, dtype=float)
            biggest = top[cells_a, 0] if top.ndim == 2 and top.shape[1] else np.zeros(of_b.size)
            first = (biggest <= 0) | (share >= biggest * (1 - 1e-9) - 1e-9)  # as _largest
            top_rows.append(local[b][of_b[first]])
            top_cols.append(local[a][cells_a[first]])

    def matrix(r: list[np.ndarray], c: list[np.ndarray]) -> sp.csr_matrix | None:
        if not r:
            return None
        i, j = np.concatenate(r), np.concatenate(c)
        return sp.csr_matrix((np.ones(i.size), (i, j)), shape=(n, n))

    same = matrix(rows, cols)
    return (same + same.T if same is not None else None), matrix(top_rows, top_cols)


def _scale(t: Table) -> tuple[str | None, bool]:
    """What a table's contributions (`shadow`, `top`) measure: its shadow, weighted or not."""
    return (t.spec.shadow or t.spec.response, bool(t.spec.use_weights))


@dataclass(eq=False)
class Floors:
    """What every respondent knows of the cells it shares (docs/design.md, D-91): with
    non-negative data a cell is at least any one (weighted) contribution to it.

    `amount` is attackers × cells: the attacker's contribution in each cell it is in (an
    upper estimate where it stands for several records: a stronger attacker, so a pass
    stays true); `exempt` the cells whose rule protects the attacker itself (it is the
    largest contributor); `alone` the cells with one respondent, known exactly by it.
    """

    amount: sp.csr_matrix
    exempt: sp.csr_matrix
    alone: np.ndarray
    note: str = ""
    #: tables judged together (`floors_over`): each attacker's table (`table_of`) and each
    #: table's cells (`cells_of`, tables × cells); an attacker attacks its own table's
    #: primaries only. Kept this small: as exempt entries it was attackers × other cells
    table_of: np.ndarray | None = None
    cells_of: np.ndarray | None = None

    @property
    def count(self) -> int:
        return int(self.amount.shape[0])

    def padded(self, n_cells: int) -> Floors:
        """The same attackers over a problem with more cells (virtual cells appended)."""
        n = self.amount.shape[1]
        if n == n_cells:
            return self
        more = n_cells - n
        return replace(
            self,
            amount=_wider(self.amount, n_cells),
            exempt=_wider(self.exempt, n_cells),
            alone=np.concatenate([self.alone, np.zeros(more, dtype=bool)]),
            cells_of=None if self.cells_of is None else np.pad(self.cells_of, ((0, 0), (0, more))),
        )

    def columns(self, cells: np.ndarray) -> Floors:
        """The same attackers over these cells only (a subtable's, the table part's)."""
        return replace(
            self,
            amount=self.amount.tocsr()[:, cells],
            exempt=self.exempt.tocsr()[:, cells],
            alone=np.asarray(self.alone)[cells],
            cells_of=None if self.cells_of is None else self.cells_of[:, cells],
        )

    def barred(self, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """rows × cells, True where the attacker does not attack the cell: its rule protects
        the attacker itself, or the cell is not in the attacker's own table."""
        out = self.exempt.tocsr()[rows][:, cells].toarray() > 0
        if self.table_of is not None and self.cells_of is not None:
            out |= ~self.cells_of[self.table_of[rows]][:, cells]
        return out


def beside(parts: list[Floors], note: str) -> Floors:
    """The same attackers over several cell sets side by side (subtables' own cells)."""
    scoped = [p.cells_of for p in parts if p.cells_of is not None]
    return Floors(
        sp.hstack([p.amount for p in parts], format="csr"),
        sp.hstack([p.exempt for p in parts], format="csr"),
        np.concatenate([p.alone for p in parts]),
        note,
        parts[0].table_of,
        np.hstack(scoped) if scoped else None,
    )


#: why a microdata table gets no floors (said in the verdict, argusqt/docs/methods.md §13)
NEGATIVE_NOTE = "the data has negative values, so sharing a cell tells a respondent nothing"

#: the floors of tables judged together: each table's respondents with that table's own
#: contributions (one record's contributions to several tables are not joined: D-91, F4)
TABLE_BY_TABLE_NOTE = "table by table: a record's contributions to several tables not joined"


def floors_over(parts: list[Floors | None], local: list[np.ndarray], n: int) -> Floors | None:
    """Each table's floors over the joint cells (`local[k]`: joint cell of each cell of
    table k), stacked: every respondent attacks its own table's primaries in the joint
    problem with what it knows in its table — at least as strong as that table's own floor
    audit (the same attackers and primaries, more relations)."""
    if not parts or any(p is None for p in parts):
        return None
    amounts, exempts, table_of = [], [], []
    alone = np.zeros(n, dtype=bool)
    # a table's respondents attack that table's primaries only: elsewhere their rank (the
    # largest contributor's exemption) is not known to this table (Floors.barred)
    cells_of = np.zeros((len(parts), n), dtype=bool)
    for t, (fl, loc) in enumerate(zip(parts, local, strict=True)):
        assert fl is not None
        m = fl.amount.shape[1]
        remap = sp.csr_matrix((np.ones(m), (np.arange(m), loc[:m])), shape=(m, n))
        amounts.append((fl.amount @ remap).tocsr())
        exempts.append((fl.exempt @ remap).tocsr())
        table_of.append(np.full(fl.count, t, dtype=np.int64))
        cells_of[t, loc[:m]] = True
        alone[loc[:m][np.asarray(fl.alone[:m], dtype=bool)]] = True
    negative = all(p is not None and p.note == NEGATIVE_NOTE for p in parts)
    note = NEGATIVE_NOTE if negative else TABLE_BY_TABLE_NOTE
    exempt = _binary(sp.vstack(exempts).tocsr())
    return Floors(
        sp.vstack(amounts).tocsr(), exempt, alone, note, np.concatenate(table_of), cells_of
    )


def floors_of(table: Table) -> Floors | None:
    """Every respondent's contribution in every cell it is in, from the fine cells; None for
    a table file (who shares which cell is unknown: only the respondents alone in a cell
    are attackers then, as the verdict's note says)."""
    source = getattr(table, "source", None)
    fine = source[0] if source is not None else None
    if source is None or fine is None or not table.dims:
        return None
    n = table.n_cells
    if float(getattr(fine, "low", 0.0)) < 0:
        # a contribution x bounds its cell from below only when the others' part is ≥ 0;
        # with a negative record in the file nobody knows that of anybody (D-91, fl18)
        empty = sp.csr_matrix((0, n))
        return Floors(empty, empty, _sole(table.freq), NEGATIVE_NOTE)
    maps = source[1]
    nd = len(table.dims)
    use_h = bool(table.spec.use_holdings) and table.hfreq is not None
    if use_h and getattr(fine, "hold_fine", None) is not None:
        f = fine.hold_fine
        nodes = [np.asarray(maps[d], dtype=np.int64)[fine.keys[f, d]] for d in range(nd)]
        mapped = np.logical_and.reduce([nd_ >= 0 for nd_ in nodes])
        cells, items = expand_to_cells([x[mapped] for x in nodes], table.dims)
        pair = np.flatnonzero(mapped)[items]
        key = fine.hold_id[pair].astype(np.int64) * n + cells
        uniq, inv = np.unique(key, return_inverse=True)
        # the rule ranks holdings by the shadow; the floor is in the published response
        share = np.abs(np.bincount(inv, weights=np.asarray(fine.hold_sum, float)[pair]))
        value = getattr(fine, "hold_value", None)
        amount = share if value is None else np.bincount(inv, weights=np.asarray(value)[pair])
        _, row = np.unique(uniq // n, return_inverse=True)
        col = uniq % n
        first = _first(table.htop, n)
        exempt = (first[col] <= 0) | (share >= first[col] * (1 - 1e-9) - 1e-9)
        alone = _sole(np.asarray(table.hfreq, dtype=float))
        return _floors(row, col, amount, exempt, alone, n, "")
    nodes = [np.asarray(maps[d], dtype=np.int64)[fine.keys[:, d]] for d in range(nd)]
    mapped = np.logical_and.reduce([x >= 0 for x in nodes])
    cells, items = expand_to_cells([x[mapped] for x in nodes], table.dims)
    fid = np.flatnonzero(mapped)[items]
    freq = np.asarray(fine.freq, dtype=np.int64)
    first = _first(table.top, n)
    alone = _sole(table.freq)
    unit_top = np.asarray(fine.top, dtype=float)
    own = getattr(fine, "floor_top", None)
    if own is None or unit_top.ndim != 2 or not unit_top.shape[1]:
        # fine cells without their records' own contributions: the fine cell's sum bounds
        # each of its records' (its records together: a stronger attacker, a pass stays true)
        amount = np.abs(np.asarray(fine.value, dtype=float))[fid]
        one = freq[fid] == 1
        share = unit_share(np.zeros(0), fine.top, fid) if unit_top.ndim == 2 else amount
        exempt = one & ((first[cells] <= 0) | (share >= first[cells] * (1 - 1e-9) - 1e-9))
        note = "each fine cell's sum stands for its records"
        return _floors(fid, cells, amount, exempt, alone, n, note)
    own = np.asarray(own, dtype=float)
    # the rule's ranking (`top`, the shadow's units) is the records' own ranking only
    # unweighted on the response; else a record is known the largest only when alone in
    # its fine cell (exempt elsewhere nowhere: a stronger attacker, a pass stays true)
    same_scale = not table.spec.use_weights and (
        not table.spec.shadow or table.spec.shadow == table.spec.response
    )
    rows, cols, amounts, exempts = [], [], [], []
    k_max = own.shape[1]
    for k in range(k_max):  # K ≤ 4 columns of the top contributions, never the records
        has = freq[fid] > k
        x = own[fid[has], k]
        c = cells[has]
        if same_scale:
            ex = (first[c] <= 0) | (x >= first[c] * (1 - 1e-9) - 1e-9)
        else:
            unit = unit_top[fid[has], 0]
            ex = (k == 0) & (freq[fid[has]] == 1)
            ex &= (first[c] <= 0) | (unit >= first[c] * (1 - 1e-9) - 1e-9)
        # the last row stands for the fine cell's smaller records too: exempt nowhere
        ex &= ~((k == k_max - 1) & (freq[fid[has]] > k_max))
        rows.append(fid[has] * k_max + k)
        cols.append(c)
        amounts.append(x)
        exempts.append(ex)
    row = np.concatenate(rows)
    _, row = np.unique(row, return_inverse=True)
    return _floors(
        row, np.concatenate(cols), np.concatenate(amounts), np.concatenate(exempts), alone, n, ""
    )


def _first(top: np.ndarray | None, n: int) -> np.ndarray:
    t = np.asarray(top, dtype=float) if top is not None else np.zeros((n, 0))
    return t[:, 0] if t.ndim == 2 and t.shape[1] else np.zeros(n)


def _floors(
    row: np.ndarray,
    col: np.ndarray,
    amount: np.ndarray,
    exempt: np.ndarray,
    alone: np.ndarray,
    n: int,
    note: str,
) -> Floors:
    k = int(row.max()) + 1 if row.size else 0
    amt = sp.csr_matrix((np.asarray(amount, float), (row, col)), shape=(k, n))
    ex = np.asarray(exempt, dtype=bool)
    exm = sp.csr_matrix((np.ones(int(ex.sum())), (row[ex], col[ex])), shape=(k, n))
    return Floors(amt, exm, np.asarray(alone, dtype=bool), note)
