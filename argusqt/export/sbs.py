"""SBS (type 4): Eurostat transmission lines with flags and dominance numbers
(argusqt/docs/formats.md §10.5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argusqt.export.codevalue import code_columns, fmt_ints, fmt_numbers, join_columns
from argusqt.io.confidential import write_marked
from argusqt.model.status import Status
from argusqt.model.table import Table


def sbs_flags(table: Table) -> np.ndarray:
    """Flag letter per cell: V, A, B, C, F, D or - (argusqt/docs/formats.md §10.5)."""
    status = np.asarray(table.status, dtype=np.int64)
    top = _top(table)
    kept = 0 if top is None else top.shape[1]
    has_p = table.spec.rules.has_p_rule
    flags = np.full(status.shape, "V", dtype="<U1")
    flags[status == Status.UNSAFE_FREQ] = "A"
    flags[
        np.isin(
            status,
            (
                Status.UNSAFE_REQUEST,
                Status.UNSAFE_ZERO,
                Status.UNSAFE_SINGLETON,
                Status.UNSAFE_SINGLETON_MANUAL,
                Status.UNSAFE_MANUAL,
            ),
        )
    ] = "B"
    rule = status == Status.UNSAFE_RULE
    if has_p:
        flags[rule] = "F"
    elif kept >= 2:
        flags[rule] = "C"
    else:
        flags[rule] = "B"
    flags[np.isin(status, (Status.SECONDARY, Status.SECONDARY_MANUAL))] = "D"
    flags[status == Status.EMPTY] = "-"
    return flags


def _top(table: Table) -> np.ndarray | None:
    top = table.htop if table.spec.use_holdings and table.htop is not None else table.top
    if top is None or top.ndim != 2 or top.shape[1] == 0:
        return None
    return np.abs(np.asarray(top, dtype=float))


def sbs_lines(
    table: Table, *, quotes: bool = True, levels: bool = False, tau_exact: bool = False
) -> list[str]:
    """Lines of the SBS file; empty cells omitted, unsafe values printed."""
    status = np.asarray(table.status, dtype=np.int64)
    flags = sbs_flags(table)
    use_h = table.spec.use_holdings and table.hfreq is not None
    freq = np.asarray(table.hfreq if use_h else table.freq, dtype=float)
    cols = code_columns(table, quotes, levels=levels, tau_exact=tau_exact)
    cols.append(fmt_numbers(table.value, table.decimals))
    cols.append(fmt_ints(np.rint(freq)))
    cols.append(flags)
    body = join_columns(cols)
    # dominance numbers after B, C, F
    top = _top(table)
    has_p = table.spec.rules.has_p_rule
    total = np.abs(np.asarray(table.shadow, dtype=float))
    safe_total = np.where(total == 0, 1.0, total)
    if top is None:
        x1 = np.zeros(table.n_cells)
        x2 = np.zeros(table.n_cells)
    else:
        x1 = top[:, 0]
        x2 = top[:, 1] if top.shape[1] > 1 else np.zeros(table.n_cells)
    big = x1 if (has_p or top is None or top.shape[1] < 2) else x1 + x2
    dom1 = np.where(total == 0, 0.0, 100.0 * big / safe_total)
    dom2 = np.where(total == 0, 0.0, 100.0 * x2 / safe_total)
    with_dom = np.isin(flags, ("B", "C", "F"))
    extra = "," + fmt_numbers(dom1, 1)
    if has_p:
        extra = extra + "," + fmt_numbers(dom2, 1)
    body = np.where(with_dom, body + extra, body)
    return body[status != Status.EMPTY].tolist()


def write_sbs(
    table: Table,
    path: str | Path,
    *,
    quotes: bool = True,
    levels: bool = False,
    tau_exact: bool = False,
) -> list[Path]:
    """Write the SBS file and its CONFIDENTIAL sidecar atomically (`levels` = `HL+`): it
    holds true values of unsafe cells, their flags and dominance. Returns both files."""
    lines = sbs_lines(table, quotes=quotes, levels=levels, tau_exact=tau_exact)
    what = "true values, flags and dominance of unsafe cells"
    from argusqt.export.causes import cause_lines

    text = "".join(line + "\n" for line in lines)
    return write_marked(path, text, what, cause_lines(table))
