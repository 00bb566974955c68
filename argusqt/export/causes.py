"""Cause codes (US#174) beside τ-Argus's formats: the lines that list, for every primary
cell, why it is unsafe, where a τ-Argus-format file has room for them without breaking its
readers (the sidecar of types 2–4, `//` comment lines of type 5)."""

from __future__ import annotations

import numpy as np

from argusqt.model.status import is_primary
from argusqt.model.table import Table

#: the heading of the list (argusqt/docs/formats.md §10.9)
CAUSE_HEADING = "Causes of the primary cells (argusqt/docs/rules.md §7.5): codes;status;cause"


def cause_lines(table: Table) -> list[str]:
    """`code1;…;codeK;status;cause` for every primary cell, after a heading; [] without
    primaries."""
    from argusqt.rules.cause import cause_codes

    status = np.asarray(table.status)
    prim = np.flatnonzero(is_primary(status))
    if prim.size == 0:
        return []
    causes = cause_codes(table)
    out = [CAUSE_HEADING]
    for c in prim.tolist():
        codes = ";".join(code.strip() for code in table.cell_codes(c))
        out.append(f"{codes};{int(status[c])};{causes[c]}")
    return out
