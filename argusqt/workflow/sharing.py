"""Which tables of a session an attacker combines (docs/design.md, D-81): tables of the same
data whose cells coincide, so that the publication gate judges them together.

"The same data": in a microdata session every table is computed from the one microdata
file, so two tables share cells when they have the same response variable (or are both
frequency tables) and the same weighting; their grand totals (and every cell whose codes
coincide, variables a table does not span at their total) are then the same numbers. In a
tabular session each table comes from its own file: two tables with the same response are
taken to be of the same data when their grand totals agree (files of two years or two
populations differ there and share nothing). The sets are the connected groups of that
relation (an attacker chains table 1 with 2 and 2 with 3). Tables protected together
(`Session.linked`) keep their own joint audit (export.gate.linked_audit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from argusqt.model.table import Table

if TYPE_CHECKING:
    from argusqt.session import Session


def _same_numbers(a: Table, b: Table) -> bool:
    """Same response (or both frequencies), same weighting and the same grand total."""
    if a.spec.response != b.spec.response or a.spec.use_weights != b.spec.use_weights:
        return False
    if a.value.size == 0 or b.value.size == 0:
        return False
    tol = 0.5 * 10.0 ** (-max(a.decimals, b.decimals, 0))
    return bool(abs(float(a.value.flat[0]) - float(b.value.flat[0])) <= tol)


def sharing_sets(s: Session) -> list[list[int]]:
    """The session's tables grouped by what an attacker combines (numbers from 1)."""
    n = len(s.tables)
    group = list(range(n))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i in range(n):  # a handful of tables: pairs of specs, no cell is touched
        for j in range(i + 1, n):
            if root(i) != root(j) and _same_numbers(s.tables[i], s.tables[j]):
                group[root(j)] = root(i)
    sets: dict[int, list[int]] = {}
    for i in range(n):
        sets.setdefault(root(i), []).append(i + 1)
    return list(sets.values())


def sharing_set(s: Session, table_no: int) -> list[int]:
    """Table `table_no` and every table of the session an attacker can combine with it
    (numbers in order); [table_no] alone when no other table shares a cell with it."""
    if len(s.tables) < 2:
        return [table_no]
    return next((g for g in sharing_sets(s) if table_no in g), [table_no])
