"""τ-Argus's "CKM format" (output type 7, argusqt/docs/formats.md §10.11): per cell its codes,
the perturbed value and, asked for, the original value, the difference and the cell key.

With the original, the difference or the cell key it undoes the perturbation, so argusqt
writes it only as a CONFIDENTIAL file (a sidecar marks it, as for the other CSV formats).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argusqt.errors import SpecificationError
from argusqt.io.confidential import write_marked
from argusqt.model.status import Status
from argusqt.model.table import Table


def write_ckm_format(
    table: Table,
    path: str | Path,
    *,
    add_original: bool = False,
    add_difference: bool = False,
    add_cell_key: bool = False,
    suppress_empty: bool = False,
    quotes: bool = True,
    tau_exact: bool = False,
) -> list[Path]:
    """Write the CKM file (`;` between fields, as τ-Argus) and its CONFIDENTIAL sidecar."""
    from argusqt.export.codevalue import code_columns, fmt_numbers, join_columns
    from argusqt.model.cellkey import cell_keys_of

    protection = table.protection
    if protection is None or protection.method != "CKM" or table.published is None:
        raise SpecificationError(
            "the CKM output (type 7) needs a table protected by the cell key method "
            "(τ-Argus refuses it otherwise too)"
        )
    published = np.asarray(table.published, dtype=float)
    cols = code_columns(table, quotes, tau_exact=tau_exact)
    cols.append(fmt_numbers(published, table.decimals))
    if add_original:
        cols.append(fmt_numbers(table.value, table.decimals))
    if add_difference:
        cols.append(fmt_numbers(published - np.asarray(table.value, float), table.decimals))
    if add_cell_key:
        cells = cell_keys_of(table)
        if cells is None:
            raise SpecificationError("the table has no cell keys to write (AC+)")
        ckm = getattr(table.source[0].cellkey, "ckm", None)
        nonzero = not table.spec.is_frequency and not (ckm is not None and ckm.include_zeros)
        units = cells.key_nonzero_units if nonzero else cells.key_units
        d = cells.decimals
        cols.append(np.array([f"0.{int(u):0{d}d}" if d else "0" for u in units], dtype=object))
    lines = join_columns(cols, ";")
    if suppress_empty:
        lines = lines[np.asarray(table.status) != Status.EMPTY]
    text = "".join(line + "\n" for line in lines.tolist())
    what = "perturbed values of a CKM table" + (
        " with the original values, differences or cell keys that undo the perturbation"
        if add_original or add_difference or add_cell_key
        else ""
    )
    return write_marked(path, text, what)
