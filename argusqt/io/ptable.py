"""Read, check and write perturbation tables (ptables) of the cell key method
(argusqt/docs/formats.md §13).

A ptable that does not say what the method needs (p adding up to 1 per row, `p_int_ub` their
running sum, v = j − i) is refused with its file and line: a wrong ptable would silently
publish other noise than the one the user chose.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from argusqt.errors import InputError
from argusqt.io.atomic import atomic_write_text
from argusqt.io.text import read_lines
from argusqt.model.ptable import PRow, PTable, PTableKind

if TYPE_CHECKING:
    import pandas as pd

#: tolerance of the sums of p and of p_int_ub (the examples print 8 decimals)
TOLERANCE = 1e-6
ROW_TYPES = ("all", "even", "odd")
COLUMNS = ("i", "j", "p", "v", "p_int_ub")


# ------------------------------------------------------------------------------ reading
def _fail(where: str | Path, line: int | None, message: str) -> InputError:
    return InputError(message, file=where, line=line)


def _number(text: str, what: str, where: str | Path, line: int) -> float:
    try:
        value = float(text.strip().strip('"'))
    except ValueError:
        raise _fail(where, line, f"expected a number for {what}, got '{text.strip()}'") from None
    if not np.isfinite(value):
        raise _fail(where, line, f"expected a finite number for {what}, got '{text.strip()}'")
    return value


def read_ptable(path: str | Path, kind: PTableKind = "freq") -> PTable:
    """Read a ptable file `i;j;p;v;p_int_ub[;type]`; InputError with file and line on a fault."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            "the ptable file does not exist (named by <PFILE>, <PFILE_CONT>, <PFILE_SEP> or "
            "the batch CKM command)",
            file=path,
        )
    lines = read_lines(path)
    records: list[tuple[int, list[str]]] = []
    for no, line in enumerate(lines, start=1):
        if no == 1 or not line.strip():
            continue  # the first line names the columns (τ-Argus skips it unread)
        records.append((no, line.rstrip("\r\n").split(";")))
    if not records:
        raise InputError(
            "the ptable has no transitions: expected a line of column names, then lines "
            "i;j;p;v;p_int_ub",
            file=path,
        )
    return _build(records, kind, str(path), path)


def ptable_from_frame(frame: pd.DataFrame, kind: PTableKind = "freq") -> PTable:
    """A ptable given as a DataFrame with columns i, j, p, v, p_int_ub (and type)."""
    cols = {str(c).lower(): c for c in frame.columns}
    if "p_int_ub" not in cols and "p_ij_ub" in cols:
        cols["p_int_ub"] = cols["p_ij_ub"]
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        raise InputError(
            f"the ptable DataFrame lacks the column(s) {', '.join(missing)}; expected "
            f"{', '.join(COLUMNS)} (and type for magnitude ptables)"
        )
    records: list[tuple[int, list[str]]] = []
    has_type = "type" in cols
    for n, row in enumerate(frame.itertuples(index=False), start=2):
        values = dict(zip(frame.columns, row, strict=True))
        fields = [repr(float(values[cols[c]])) for c in COLUMNS]
        if has_type:
            fields.append(str(values[cols["type"]]))
        records.append((n, fields))
    if not records:
        raise InputError("the ptable DataFrame has no rows")
    return _build(records, kind, "DataFrame", "ptable DataFrame")


def _build(
    records: list[tuple[int, list[str]]], kind: PTableKind, source: str, where: str | Path
) -> PTable:
    """Group the transitions into rows per type and check them."""
    grouped: dict[str, dict[int, list[tuple[int, float, float, float, float]]]] = {}
    order: dict[str, list[int]] = {}
    for no, fields in records:
        if len(fields) < 5:
            raise _fail(
                where, no, f"expected 5 fields i;j;p;v;p_int_ub (and a type), got {len(fields)}"
            )
        i_f = _number(fields[0], "i", where, no)
        if not i_f.is_integer() or i_f < 0:
            raise _fail(where, no, f"expected a whole number ≥ 0 for i, got '{fields[0]}'")
        i = int(i_f)
        j = _number(fields[1], "j", where, no)
        p = _number(fields[2], "p", where, no)
        v = _number(fields[3], "v", where, no)
        ub = _number(fields[4], "p_int_ub", where, no)
        row_type = "all"
        if len(fields) > 5 and fields[5].strip():
            row_type = fields[5].strip().strip('"').lower()
            if row_type not in ROW_TYPES:
                raise _fail(
                    where, no, f"expected the type all, even or odd, got '{fields[5].strip()}'"
                )
        if not 0.0 <= p <= 1.0:
            raise _fail(where, no, f"p must be in [0, 1], got {p}")
        if abs((j - i) - v) > TOLERANCE:
            raise _fail(where, no, f"v must be j − i = {j - i:g}, got {v:g}")
        if kind == "freq" and (not j.is_integer() or j < 0):
            raise _fail(where, no, f"j of a frequency ptable must be a whole number ≥ 0, got {j:g}")
        rows = grouped.setdefault(row_type, {})
        seen = order.setdefault(row_type, [])
        if i not in rows:
            if seen and (i <= seen[-1] or (kind == "freq" and i != seen[-1] + 1)):
                gaps = " without gaps" if kind == "freq" else ""
                raise _fail(
                    where,
                    no,
                    f"rows must ascend{gaps}: row i = {i} follows i = {seen[-1]} (type {row_type})",
                )
            if not seen and i != 0:
                raise _fail(where, no, f"the first row must be i = 0, got i = {i}")
            seen.append(i)
            rows[i] = []
        elif seen[-1] != i:
            raise _fail(where, no, f"row i = {i} continues after row i = {seen[-1]} began")
        rows[i].append((no, j, p, v, ub))
    table = PTable(kind=kind, source=source)
    for row_type, rows in grouped.items():
        out: list[PRow] = []
        for i, items in rows.items():
            arr = np.array([t[1:] for t in items], dtype=float)
            js, ps, vs, ubs = arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]
            run = np.cumsum(ps)
            off = np.flatnonzero(np.abs(run - ubs) > TOLERANCE)
            if off.size:
                k = int(off[0])
                raise _fail(
                    where,
                    items[k][0],
                    f"p_int_ub must be the running sum of p in row i = {i}: expected "
                    f"{run[k]:.8f}, got {ubs[k]:.8f}",
                )
            if abs(run[-1] - 1.0) > TOLERANCE:
                raise _fail(
                    where, items[-1][0], f"the p of row i = {i} add up to {run[-1]:.8f}, not 1"
                )
            if kind == "cont" and np.any(np.diff(js) <= 0):  # τ-Argus keys them by j
                raise _fail(where, items[0][0], f"the j of row i = {i} must ascend")
            out.append(PRow(i, js, ps, vs, ubs, items[0][0]))
        table.rows[row_type] = out
    return table


# ------------------------------------------------------------------------------ writing
def ptable_text(table: PTable, decimals: int = 8) -> str:
    """The file form of a ptable (τ-Argus's column names; `type` only for magnitude ptables)."""
    cont = table.kind == "cont"
    out = ["i;j;p;v;p_int_ub" + (";type" if cont else "")]
    for row_type, rows in table.rows.items():
        for r in rows:
            for j, p, v, ub in zip(r.j, r.p, r.v, r.ub, strict=True):
                line = f"{r.i};{_g(j)};{p:.{decimals}f};{_g(v)};{ub:.{decimals}f}"
                out.append(line + (f";{row_type}" if cont else ""))
    return "\n".join(out) + "\n"


def _g(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def write_ptable(table: PTable, path: str | Path) -> Path:
    """Write a ptable atomically (never over an input: the caller checks outputs)."""
    atomic_write_text(path, ptable_text(table))
    return Path(path)


__all__ = ["PRow", "PTable", "PTableKind", "ptable_from_frame", "ptable_text", "read_ptable",
           "write_ptable"]  # fmt: skip
