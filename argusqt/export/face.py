"""What a protected table publishes: its kind of face and its printed adjusted values.

Its own module because the writers and the publication gate both read it (the gate must
not import a writer, nor a writer the gate's reader)."""

from __future__ import annotations

import numpy as np

from argusqt.errors import AuditError
from argusqt.model.table import Table


def protection_kind(table: Table) -> str:
    """'suppress', 'round', 'cta' or 'interval': how the table's published face was made."""
    if table.interval_lower is not None:
        return "interval"
    if table.published is None:
        return "suppress"
    face = table.protection.face if table.protection is not None else "round"
    return face if face in ("round", "cta") else "round"


def published_values(table: Table) -> np.ndarray:
    """The rounded / adjusted values, checked to lie on the grid of the decimals they are
    printed with (off the grid, the printed table would not add up: AuditError)."""
    x = np.asarray(table.published, dtype=float)
    units = x * 10.0 ** max(int(table.decimals), 0)
    off = np.abs(units - np.rint(units)) > 1e-6 * np.maximum(1.0, np.abs(units))
    if off.any():
        k = int(np.flatnonzero(off)[0])
        raise AuditError(
            f"published value {x[k]!r} of cell {k} has more than {table.decimals} decimals: "
            "the table would not add up as printed; protect it again"
        )
    return x
