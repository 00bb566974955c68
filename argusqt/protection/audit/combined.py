"""The audit's part of US#160: a determined sum of suppressed cells that a dominance or p%
rule makes unsafe is a disclosure of the primaries in it (reason "combined"); the cells and
rules come from rules.combined, the one place that finds such sums."""

from __future__ import annotations

import numpy as np

from argusqt.model.status import is_primary
from argusqt.model.table import Table
from argusqt.protection.audit.publication import Disclosure, PublicationVerdict
from argusqt.rules.combined import combined_disclosures


def combined_findings(table: Table, suppressed: np.ndarray) -> list[Disclosure]:
    """One disclosure per primary in each unsafe determined sum: the attacker knows the
    sum exactly (lower = upper = the sum), the other cells of the sum in `known_cells`."""
    status = np.asarray(table.status)
    out: list[Disclosure] = []
    for found in combined_disclosures(table, suppressed):
        for c in found.cells:
            if is_primary(status[c]):
                others = tuple(x for x in found.cells if x != c)
                out.append(Disclosure(c, "combined", found.value, found.value, others))
    return out


def with_combined(verdict: PublicationVerdict, table: Table, suppressed: np.ndarray) -> None:
    """Add the combined-cell disclosures of a suppression pattern to its verdict."""
    verdict.disclosures.extend(combined_findings(table, suppressed))
