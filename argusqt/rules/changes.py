"""Manual status changes (GUI, a-priori files) with τ-Argus's allowed transitions
(argusqt/docs/rules.md §7.2).

Each function checks every named cell first and changes nothing if one is illegal, so a
refused change never leaves the table half-modified.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from argusqt.errors import ArgusError
from argusqt.model.status import STATUS_LABELS, Status, is_primary, is_secondary
from argusqt.model.table import Table
from argusqt.rules.classify import classify, manual_levels

if TYPE_CHECKING:  # annotations only: numpy.typing is not imported at run time (D-92)
    from numpy.typing import ArrayLike


class StatusChangeError(ArgusError):
    """A status, cost or protection-level change that τ-Argus does not allow for this cell."""


def _cells(table: Table, cells: ArrayLike) -> np.ndarray:
    idx = np.atleast_1d(np.asarray(cells, dtype=np.int64))
    if idx.size and (idx.min() < 0 or idx.max() >= table.n_cells):
        raise StatusChangeError(f"cell index out of range 0..{table.n_cells - 1}")
    return np.unique(idx)


def _require(table: Table, idx: np.ndarray, allowed: np.ndarray, action: str, rule: str) -> None:
    bad = idx[~allowed]
    if bad.size:
        c = int(bad[0])
        s = int(table.status[c])
        more = (
            f" (and {bad.size - 1} more cell{'s' if bad.size > 2 else ''})" if bad.size > 1 else ""
        )
        where = f"cell ({', '.join(x.strip() or x for x in table.cell_codes(c))})"
        if s in (Status.SECONDARY, Status.SECONDARY_MANUAL):  # what the user can do instead
            raise StatusChangeError(
                f"cannot {action} {where}{more}: it is a secondary suppression (status {s}), "
                "chosen by the protection method to protect the unsafe cells. Undo the "
                "table's suppression first (the Undo suppression button beside the table), "
                "then change the cell and protect the table again"
            )
        if s in (Status.EMPTY, Status.EMPTY_NONSTRUCTURAL):
            raise StatusChangeError(
                f"cannot {action} {where}: it is empty (status {s}, no contributions), so "
                f"there is nothing to protect or publish in it; allowed only {rule}{more}"
            )
        raise StatusChangeError(
            f"cannot {action} {where} with status {s} {STATUS_LABELS.get(s, '')}: allowed "
            f"only {rule}{more}"
        )


def _apply(table: Table, idx, status, lpl=None, upl=None) -> int:
    old = table.status[idx].copy()
    table.status[idx] = np.asarray(status, dtype=table.status.dtype)
    if lpl is not None:
        table.lpl[idx] = lpl
        table.upl[idx] = upl
    return int(np.count_nonzero(old != table.status[idx]))


def set_safe(table: Table, cells: ArrayLike) -> int:
    """Statuses 1–10 → 1 if the rules say safe, else 2 (safe manual). Returns cells changed."""
    idx = _cells(table, cells)
    s = table.status[idx]
    _require(
        table, idx, (s >= Status.SAFE) & (s <= Status.PROTECTED), "set safe", "for statuses 1-10"
    )
    rule = classify(table, idx)
    new = np.where(rule.status == Status.SAFE, Status.SAFE, Status.SAFE_MANUAL)
    minpl = np.full(idx.shape, table.min_protection)
    return _apply(table, idx, new, minpl, minpl)


def set_unsafe(table: Table, cells: ArrayLike) -> int:
    """Statuses 1–9 → the rule status if the rules say unsafe, else 9; levels recomputed."""
    idx = _cells(table, cells)
    s = table.status[idx]
    _require(
        table,
        idx,
        (s >= Status.SAFE) & (s <= Status.UNSAFE_MANUAL),
        "set unsafe",
        "for statuses 1-9",
    )
    rule = classify(table, idx)
    by_rule = (rule.status >= Status.UNSAFE_RULE) & (rule.status <= Status.UNSAFE_ZERO)
    mlpl, mupl = manual_levels(table, idx)
    new = np.where(by_rule, rule.status, 9)
    return _apply(
        table, idx, new, np.where(by_rule, rule.lpl, mlpl), np.where(by_rule, rule.upl, mupl)
    )


def set_protected(table: Table, cells: ArrayLike) -> int:
    """Statuses 1–2 → 10 protected (never suppressed)."""
    idx = _cells(table, cells)
    s = table.status[idx]
    _require(
        table,
        idx,
        (s == Status.SAFE) | (s == Status.SAFE_MANUAL),
        "protect",
        "for safe statuses 1-2",
    )
    return _apply(table, idx, np.full(idx.shape, 10))


def set_secondary(table: Table, cells: ArrayLike, manual: bool) -> int:
    """Statuses 1–2 → 12 (a-priori `M`, manual=True) or 11 (`ML`, manual=False)."""
    idx = _cells(table, cells)
    s = table.status[idx]
    _require(
        table,
        idx,
        (s == Status.SAFE) | (s == Status.SAFE_MANUAL),
        "make secondary",
        "for safe statuses 1-2",
    )
    return _apply(table, idx, np.full(idx.shape, 12 if manual else 11))


def set_cost(table: Table, cells: ArrayLike, cost: float) -> int:
    """New (effective) cost of non-empty cells; 0 becomes 1, negative is refused."""
    idx = _cells(table, cells)
    if not np.isfinite(cost) or cost < 0:
        raise StatusChangeError(f"expected a cost ≥ 0, got {cost}")
    c = 1.0 if cost == 0 else float(cost)
    _require(
        table, idx, table.status[idx] != Status.EMPTY, "change the cost of", "for non-empty cells"
    )
    changed = int(np.count_nonzero(table.cost[idx] != c))
    table.cost = np.asarray(table.cost, dtype=float)
    table.cost[idx] = c
    return changed


def set_protection_levels(table: Table, cells: ArrayLike, lpl: float, upl: float) -> int:
    """New lower/upper protection levels (distances ≥ 0) of primary cells (3–9)."""
    idx = _cells(table, cells)
    if not (np.isfinite(lpl) and np.isfinite(upl)) or lpl < 0 or upl < 0:
        raise StatusChangeError(f"expected protection levels ≥ 0, got {lpl} and {upl}")
    s = table.status[idx]
    _require(table, idx, is_primary(s), "set protection levels of", "for unsafe cells 3-9")
    changed = int(np.count_nonzero((table.lpl[idx] != lpl) | (table.upl[idx] != upl)))
    table.lpl[idx] = lpl
    table.upl[idx] = upl
    return changed


def undo_secondary(table: Table) -> int:
    """Undo suppression: 11 → 1 (13 if the cell has no records), 12 → 2."""
    s = table.status
    new = _without_secondaries(s, np.asarray(table.freq))
    changed = int(np.count_nonzero(new != s))
    table.status = new
    table.suppressed_from = None
    return changed


def posed_status(table: Table) -> np.ndarray:
    """The statuses of the problem the user posed: the table's, with the secondaries of the
    protection method on it put back as they were; primaries, manual and a-priori statuses stay.

    A table holding a method's pattern whose origin is unknown (an older session file) gets
    all its secondaries put back, as Undo suppression does."""
    s = np.asarray(table.status)
    prior = table.suppressed_from
    if prior is not None and prior.shape == s.shape:
        return np.where((prior > 0) & is_secondary(s), prior, s).astype(s.dtype)
    if table.protection is not None and is_secondary(s).any():
        return _without_secondaries(s, np.asarray(table.freq))
    return s.copy()


def keep_pattern(table: Table, start: np.ndarray, status: np.ndarray) -> None:
    """Copy a method's statuses onto the table, remembering the secondaries it added to `start`
    (the posed statuses it solved from) so that the next Protect starts from `start` again."""
    new = np.asarray(status).astype(np.int8)
    added = is_secondary(new) & ~is_secondary(start)
    table.suppressed_from = np.where(added, np.asarray(start), 0).astype(np.int8)
    table.status = new


def _without_secondaries(s: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """11 → 1 (13 if the cell has no records), 12 → 2."""
    return np.where(
        s == Status.SECONDARY_MANUAL,
        Status.SAFE_MANUAL,
        np.where(
            s == Status.SECONDARY, np.where(freq > 0, Status.SAFE, Status.EMPTY_NONSTRUCTURAL), s
        ),
    ).astype(s.dtype)


def _trivial_chain(dim, node: int) -> list[int]:
    """Nodes equal to `node` through single-child links (up and down the hierarchy)."""
    top = node
    while dim.parent[top] >= 0 and len(dim.children[int(dim.parent[top])]) == 1:
        top = int(dim.parent[top])
    chain = [top]
    while len(dim.children[chain[-1]]) == 1:
        chain.append(dim.children[chain[-1]][0])
    return chain


def trivial_equivalents(table: Table, cell: int) -> list[int]:
    """Cells identical to `cell` through chains of single-child nodes in every dimension."""
    nodes = table.cell_nodes(int(cell))
    chains = [_trivial_chain(d, n) for d, n in zip(table.dims, nodes, strict=True)]
    return sorted(table.cell_index(combo) for combo in itertools.product(*chains))
