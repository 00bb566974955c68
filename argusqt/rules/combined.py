"""Approximate disclosure of combined suppressed cells (US#160): the primary rules applied
to a sum of suppressed cells that the published table determines
(argusqt/docs/rules.md §3.11).

Three NACE divisions suppressed by a dominance rule and a fourth as secondary: when their
section total is published, an attacker knows the sum of the four exactly; if one
enterprise still makes up most of that sum, it is disclosed approximately although every
cell on its own is protected. This module is the one piece of code that finds such sums:
the audit reports them and every suppression method's result is repaired with it.

Covered: per relation (a total and its parts), the sum of the suppressed parts when the
total is published — the sums the published table gives by one subtraction. Not covered:
sums only the combination of several relations determines (in a 2-D table, a block of
suppressed cells whose sum follows from row and column totals together).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.model.rulespec import SafetyRules
from argusqt.model.table import Table

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix


@dataclass(frozen=True)
class CombinedSum:
    """A sum of suppressed cells the published table determines and a rule makes unsafe."""

    cells: tuple[int, ...]  # the suppressed parts whose sum is known
    total_cell: int  # the published total of their relation
    value: float  # their sum (the response)
    causes: tuple[str, ...]  # failing rules, cause codes as rules.cause (D2, P1, HP1…)
    #: the protection the sum would need (as a cell's d, argusqt/docs/rules.md §4.1)
    need: float


def combined_on(rules: SafetyRules) -> bool:
    """The option: on by default when the table has a dominance or p% rule (US#160)."""
    has_rules = bool(rules.nk_individual or rules.nk_holding or rules.p_individual
                     or rules.p_holding)  # fmt: skip
    return has_rules and rules.combined is not False


def _merged_top(top: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The largest contributions of the union of disjoint cells (every cell's own largest,
    merged): exact for records, which belong to one part of a relation each.

    OPT's lifted and forced cuts (D-55) rest on this being monotone: a part added to the
    union only adds entries (absolute values, each part's holdings taken as other holdings),
    so the top contributions never fall. Merging one holding's signed entries across parts
    would break that, and with it the cuts' validity."""
    k = top.shape[1]
    merged = np.sort(np.abs(np.asarray(top[cells], dtype=float)).ravel())[::-1]
    out = np.zeros(k)
    out[: min(k, merged.size)] = merged[:k]
    return out


def sum_failures(table: Table, cells: np.ndarray) -> tuple[list[str], float]:
    """The dominance and p% rules the union of `cells` fails (cause codes) and the largest
    protection it would need (0 when safe)."""
    from argusqt.rules.classify import REL_TOL

    rules = table.spec.rules
    t = float(np.abs(np.asarray(table.shadow, dtype=float)[cells]).sum())
    if t <= 0:
        return [], 0.0
    causes: list[str] = []
    need = 0.0
    levels = []
    if table.top is not None and (rules.nk_individual or rules.p_individual):
        levels.append(("", _merged_top(table.top, cells), rules.nk_individual, rules.p_individual))
    if table.htop is not None and (rules.nk_holding or rules.p_holding):
        # holdings may span parts: merging their largest per part is a lower bound on the
        # concentration (argusqt/docs/rules.md §3.11)
        levels.append(("H", _merged_top(table.htop, cells), rules.nk_holding, rules.p_holding))
    for prefix, top, nks, ps in levels:
        for r in nks:
            topn = float(top[: r.n].sum())
            if 100.0 * topn - r.k * t > REL_TOL * max(100.0 * topn, r.k * t):
                causes.append(f"{prefix}D{r.n}")
                need = max(need, 100.0 * topn / r.k - t)
        for rp in ps:
            x1 = float(top[0])
            rem = t - float(top[: rp.n + 1].sum())
            if rp.p * x1 - rp.q * rem > REL_TOL * max(rp.p * x1, rp.q * abs(rem)):
                causes.append(f"{prefix}P{rp.n}")
                need = max(need, rp.p / rp.q * x1 - rem)
    return causes, need


#: sum_failures of the groups (sorted cells) judged before on one table's rule data (its
#: shadow, largest contributions and rules), shared by calls on patterns of that table
SumMemo = dict[tuple[int, ...], tuple[list[str], float]]


def judged(table: Table, cells: np.ndarray, memo: SumMemo | None) -> tuple[list[str], float]:
    """sum_failures of the sorted `cells`, from `memo` when judged before (D-71, D-80)."""
    if memo is None:
        return sum_failures(table, cells)
    key = tuple(cells.tolist())
    found = memo.get(key)
    if found is None:
        found = memo[key] = sum_failures(table, cells)
    return found


def rule_margin(table: Table, cells: np.ndarray) -> float:
    """How much (in absolute shadow) other parts may add to the union of `cells` with one
    dominance or p% rule still failing whatever they are (> 0 only when the union fails):
    added parts only raise its largest contributions, so its total is what they can cure.
    Stricter than sum_failures by its tolerance, so that a failure here is one there."""
    from argusqt.rules.classify import REL_TOL

    rules = table.spec.rules
    t = float(np.abs(np.asarray(table.shadow, dtype=float)[cells]).sum())
    if t <= 0:
        return 0.0
    shrink = 1.0 - 4.0 * REL_TOL
    margin = 0.0
    levels = []
    if table.top is not None and (rules.nk_individual or rules.p_individual):
        levels.append((_merged_top(table.top, cells), rules.nk_individual, rules.p_individual))
    if table.htop is not None and (rules.nk_holding or rules.p_holding):
        levels.append((_merged_top(table.htop, cells), rules.nk_holding, rules.p_holding))
    for top, nks, ps in levels:
        for r in nks:
            # 100·top_n(1 − tol) > k·(t + added) ⇒ the (n,k) rule fails with them
            margin = max(margin, 100.0 * float(top[: r.n].sum()) * shrink / r.k - t)
        for rp in ps:
            # p·x1(1 − tol) > q·(rem + added) ⇒ the p% rule fails with them
            rem = t - float(top[: rp.n + 1].sum())
            margin = max(margin, rp.p * float(top[0]) * shrink / rp.q - rem)
    return margin * (1.0 - 1e-12) - 1e-12 * t


def lifted_nogood(
    table: Table, group: np.ndarray, others: np.ndarray, free: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(core, cure): a relation's total published, `core` suppressed and `cure` published is
    unsafe whatever its other parts are, so the no-good of that configuration holds for every
    pattern the rule accepts and names fewer cells than the whole relation's. `group` is an
    unsafe determined sum (unsafe_relations), `others` its published parts, `free` the cells
    a pattern may change (a published cell not free stays published: it needs no term)."""
    shadow = np.abs(np.asarray(table.shadow, dtype=float))
    core = [int(c) for c in group]
    used = 0.0  # shadow of the parts the cut no longer names (they may be suppressed or not)
    for c in sorted((int(c) for c in group if free[c]), key=lambda c: (shadow[c], c)):
        if len(core) <= 2:
            break
        rest = [g for g in core if g != c]
        if rule_margin(table, np.asarray(rest)) > used + shadow[c]:
            core, used = rest, used + shadow[c]
    margin = rule_margin(table, np.asarray(core))
    others = np.asarray(others, dtype=np.int64)
    cure = _cure(table, others[np.asarray(free, dtype=bool)[others]], used, margin)
    return np.asarray(sorted(core), dtype=np.int64), cure


def _cure(table: Table, cells: np.ndarray, used: float, margin: float) -> np.ndarray:
    """The parts among `cells` a cut must name: the smallest the margin can take are left
    out (their sum with `used` stays under it, so the sum stays unsafe whatever they are)."""
    shadow = np.abs(np.asarray(table.shadow, dtype=float))
    cure = []
    for c in sorted((int(c) for c in cells), key=lambda c: (shadow[c], c)):
        if used + shadow[c] < margin:
            used += shadow[c]
        else:
            cure.append(c)
    return np.asarray(sorted(cure), dtype=np.int64)


def _forced(
    table: Table,
    always: np.ndarray,
    free: np.ndarray,
    memo: SumMemo | None = None,
) -> Iterator[tuple[int, np.ndarray, np.ndarray, float]]:
    """(total, core, free parts, margin) per relation whose parts suppressed in every pattern
    (`always`, two or more) have an unsafe sum and whose total may be published. `memo`:
    as unsafe_relations's."""
    if not combined_on(table.spec.rules) or table.spec.is_frequency:
        return
    always = np.asarray(always, dtype=bool)
    free = np.asarray(free, dtype=bool)
    # the relations with one total outside `always` and two or more parts in it, picked by
    # counts over all of them at once (the loop over every relation: D-80)
    rel, _, keep, total_of = _determined_relations(table, always)
    cols, coef, ptr = rel.indices, rel.data, rel.indptr
    for r in np.flatnonzero(keep).tolist():
        lo, hi = ptr[r], ptr[r + 1]
        parts = cols[lo:hi][coef[lo:hi] > 0]
        core = np.sort(parts[always[parts]])
        if not judged(table, core, memo)[0]:
            continue
        yield int(total_of[r]), core, np.sort(parts[free[parts]]), rule_margin(table, core)


def forced_nogoods(
    table: Table,
    always: np.ndarray,
    free: np.ndarray,
    memo: SumMemo | None = None,
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(total, core, cure) per relation whose parts suppressed in every pattern (`always`:
    the primaries; two or more) have an unsafe sum: when its total is published a part of
    `cure` must be suppressed as well, whatever the pattern (the rule forces it). `free` are
    the cells a pattern may change."""
    return [
        (t, core, _cure(table, parts, 0.0, m))
        for t, core, parts, m in _forced(table, always, free, memo)
    ]


def forced_capacities(
    table: Table,
    always: np.ndarray,
    free: np.ndarray,
    memo: SumMemo | None = None,
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(total, free parts, weights) per relation of forced_nogoods with a positive margin m:
    x_total + Σ min(|shadow|/m, 1)·x ≥ 1 over its free parts, for with the total published
    the suppressed free parts must add at least m to the primaries' sum (less leaves it
    unsafe, rule_margin), and then their weights add up to 1 at least."""
    shadow = np.abs(np.asarray(table.shadow, dtype=float))
    out = []
    for total, _, parts, m in _forced(table, always, free, memo):
        if m > 0 and parts.size:
            out.append((total, parts, np.minimum(shadow[parts] / m, 1.0)))
    return out


def _full_groups(
    table: Table, x: np.ndarray, group_at: float, total_below: float
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(total, group, rest) per relation with one total at x < `total_below` and two or more
    parts at x ≥ `group_at` (the group, sorted; the other parts, sorted, are the rest): where
    the rule's cuts at a fractional master point look for an unsafe sum (D-60, D-66)."""
    if not combined_on(table.spec.rules) or table.spec.is_frequency:
        return
    x = np.asarray(x, dtype=float)[: table.n_cells]
    rel = table.relations.tocsr()
    for r in range(rel.shape[0]):
        lo, hi = rel.indptr[r], rel.indptr[r + 1]
        cols, coef = rel.indices[lo:hi], rel.data[lo:hi]
        totals, parts = cols[coef < 0], cols[coef > 0]
        if totals.size != 1 or x[totals[0]] >= total_below:
            continue
        inside = x[parts] >= group_at
        if np.count_nonzero(inside) < 2:
            continue
        yield int(totals[0]), np.sort(parts[inside]), np.sort(parts[~inside])


def fractional_nogoods(
    table: Table, x: np.ndarray, free: np.ndarray, full: float = 1.0 - 1e-6
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(total, core, cure) per relation whose parts suppressed in full at a fractional master
    point x (x ≥ `full`, two or more) have an unsafe sum: lifted_nogood of that group, so the
    cut holds for every pattern the rule accepts whatever x is (D-60); the caller keeps those
    x violates. Separates D-55's lifted family where SCIP's LP point lies, not only at 0/1."""
    free = np.asarray(free, dtype=bool)[: table.n_cells]
    out = []
    for total, group, rest in _full_groups(table, x, full, full):
        if sum_failures(table, group)[0]:
            core, cure = lifted_nogood(table, group, rest, free)
            out.append((total, core, cure))
    return out


def fractional_capacities(
    table: Table, x: np.ndarray, free: np.ndarray, full: float = 0.5
) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """(total, group, others, weights) per relation whose parts at x ≥ `full` (two or more:
    the group) have an unsafe union, with margin m > 0: x_total + Σ_others w·x + Σ_group
    (1 − x) ≥ 1, w = min(|shadow|/m, 1) over the other free parts. With the total published
    and the group suppressed, the other suppressed parts must add m at least (less leaves
    the sum unsafe, rule_margin), so their weights reach 1: the row holds for every pattern
    the rule accepts whatever x is (D-66); the caller keeps those x violates."""
    free = np.asarray(free, dtype=bool)[: table.n_cells]
    shadow = np.abs(np.asarray(table.shadow, dtype=float))
    out = []
    for total, group, rest in _full_groups(table, x, full, 1.0 - 1e-6):
        m = rule_margin(table, group)
        if m > 0:
            others = rest[free[rest]]
            out.append((total, group, others, np.minimum(shadow[others] / m, 1.0)))
    return out


def _determined_relations(
    table: Table, sup: np.ndarray
) -> tuple[csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """The relations one subtraction settles, picked by counts over all of them at once:
    one total, published, and at least two suppressed parts (a loop over every relation
    cost 2.4 ms a pattern on b520 and half of the rule's check on b97768: D-71, D-72).
    Returns the CSR relations, each entry's row, the picked rows (a mask) and each
    picked row's total."""
    rel = table.relations.tocsr()
    n_rows = rel.shape[0]
    row_of = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(rel.indptr))
    cols, coef = rel.indices, rel.data
    neg = coef < 0
    n_totals = np.bincount(row_of[neg], minlength=n_rows)
    n_suppressed_totals = np.bincount(row_of[neg & sup[cols]], minlength=n_rows)
    n_inside = np.bincount(row_of[(coef > 0) & sup[cols]], minlength=n_rows)
    keep = (n_totals == 1) & (n_suppressed_totals == 0) & (n_inside >= 2)
    total_of = np.full(n_rows, -1, dtype=np.int64)
    at_total = neg & keep[row_of]
    total_of[row_of[at_total]] = cols[at_total]
    return rel, row_of, keep, total_of


def _relation_sums(table: Table, sup: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(published total, its suppressed parts, its published parts) per relation with one
    total, published, and at least two suppressed parts: the sums one subtraction gives."""
    rel, _, keep, total_of = _determined_relations(table, sup)
    cols, coef, ptr = rel.indices, rel.data, rel.indptr
    for r in np.flatnonzero(keep).tolist():
        lo, hi = ptr[r], ptr[r + 1]
        parts = cols[lo:hi][coef[lo:hi] > 0]
        ins = sup[parts]
        yield int(total_of[r]), np.sort(parts[ins]), np.sort(parts[~ins])


def determined_sums(table: Table, suppressed: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(published total, its suppressed parts) per relation with at least two suppressed
    parts and a published total: the sums one subtraction gives."""
    out: list[tuple[int, np.ndarray]] = []
    seen: set[tuple[int, ...]] = set()
    for total, group in _suppressed_parts(table, np.asarray(suppressed, dtype=bool)):
        key = tuple(group.tolist())
        if key not in seen:
            seen.add(key)
            out.append((total, group))
    return out


def _suppressed_parts(table: Table, sup: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """_relation_sums's (total, suppressed parts), the same relations in the same order,
    sorted for all relations at once (b97768 has thousands: D-71)."""
    rel, row_of, keep, total_of = _determined_relations(table, sup)
    cols = rel.indices
    take = (rel.data > 0) & sup[cols] & keep[row_of]
    rows, parts = row_of[take], cols[take]
    order = np.lexsort((parts, rows))
    rows, parts = rows[order], parts[order]
    if rows.size == 0:
        return
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    ends = np.r_[starts[1:], rows.size]
    for r, a, b in zip(rows[starts].tolist(), starts.tolist(), ends.tolist(), strict=True):
        yield int(total_of[r]), parts[a:b]


def unsafe_relations(
    table: Table, suppressed: np.ndarray, memo: SumMemo | None = None
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(published total, suppressed parts, published parts) of each relation whose
    determined sum of suppressed parts fails a dominance or p% rule: the local configuration
    no protected pattern may have (a no-good on the relation's cells alone, so it is valid
    whatever the other cells are). `memo`: sum_failures of the groups judged before on this
    table's rule data, as combined_disclosures takes it (D-71, D-80)."""
    if not combined_on(table.spec.rules) or table.spec.is_frequency:
        return []
    unsafe: dict[tuple[int, ...], bool] = {}
    out: list[tuple[int, np.ndarray, np.ndarray]] = []
    for total, group, others in _relation_sums(table, np.asarray(suppressed, dtype=bool)):
        key = tuple(group.tolist())
        if key not in unsafe:
            unsafe[key] = bool(judged(table, group, memo)[0])
        if unsafe[key]:
            out.append((total, group, others))
    return out


def combined_disclosures(
    table: Table, suppressed: np.ndarray, memo: SumMemo | None = None
) -> list[CombinedSum]:
    """The determined sums of suppressed cells that a dominance or p% rule makes unsafe
    ([] when the option is off or the table has no such rule). `memo`: sum_failures of the
    groups judged before on this table's rule data (its shadow, largest contributions and
    rules; D-71), shared by calls on patterns of the same table."""
    if not combined_on(table.spec.rules) or table.spec.is_frequency:
        return []
    values = np.asarray(table.value, dtype=float)
    found = []
    for total, group in determined_sums(table, suppressed):
        causes, need = judged(table, group, memo)
        if causes:
            found.append(
                CombinedSum(
                    tuple(int(c) for c in group),
                    total,
                    float(values[group].sum()),
                    tuple(causes),
                    need,
                )
            )
    return found


def repair_choice(table: Table, found: CombinedSum, suppressed: np.ndarray) -> int | None:
    """The published part to suppress as well so that the sum is safe: the cheapest part
    that alone makes it safe, else the part adding most to the sum (another round follows);
    None when the relation has no part left to suppress."""
    from argusqt.model.status import is_candidate

    rel = table.relations.tocsr()
    status = np.asarray(table.status)
    cost = np.asarray(table.cost, dtype=float)
    shadow = np.abs(np.asarray(table.shadow, dtype=float))
    sup = np.asarray(suppressed, dtype=bool)
    group = np.asarray(found.cells, dtype=np.int64)
    rows = np.unique(rel[:, found.total_cell].nonzero()[0])
    free: set[int] = set()
    for r in rows.tolist():
        lo, hi = rel.indptr[r], rel.indptr[r + 1]
        cols, coef = rel.indices[lo:hi], rel.data[lo:hi]
        if found.total_cell not in cols[coef < 0] or not np.isin(group, cols).all():
            continue
        parts = cols[coef > 0]
        free |= {int(c) for c in parts[~sup[parts] & is_candidate(status[parts])]}
    if not free:
        return None
    fixing = [c for c in sorted(free) if not sum_failures(table, np.r_[group, c])[0]]
    if fixing:
        return min(fixing, key=lambda c: (cost[c], c))
    return max(sorted(free), key=lambda c: (shadow[c], -c))
