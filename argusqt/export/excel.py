"""Excel export of a protected table (openpyxl): the safe table as on screen, cells, report.

What is shown follows formats.md §10.1: statuses 3–9, 11, 12 as the suppressed text
(`x`), 14 as the empty text (`-`), others their value; rounded/CTA tables show their
published values. True values and protection levels of suppressed cells are confidential
and are only written with `ExcelOptions.confidential` (the sheet then says so).
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

import argusqt
from argusqt.errors import ArgusError
from argusqt.export.report import (
    audit_text,
    rules_in_words,
    secondary_figures,
    status_summary,
    table_structure,
)
from argusqt.io.atomic import atomic_write_bytes
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table
from argusqt.rules.status import STATUS_LABELS, is_suppressed

#: Fill colours per status (RGB hex), used with `status_colours`.
STATUS_COLOURS: dict[int, str] = {
    1: "FFFFFF",
    2: "E2EFDA",
    **{s: "FFC7CE" for s in range(3, 10)},
    10: "C6EFCE",
    11: "FFEB9C",
    12: "FFD966",
    13: "F2F2F2",
    14: "D9D9D9",
}

_MAX_OUTLINE = 7  # Excel's deepest outline level
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_RISKY = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class ExcelOptions:
    """How the workbook looks; defaults give a publishable workbook."""

    suppressed_text: str = "x"
    empty_text: str = "-"
    status_colours: bool = False
    labels: bool = True  # a label row/column next to the codes
    thousands: bool = True  # thousands separators in the number format
    row_dim: int = 0  # explanatory variable down the rows
    col_dim: int = 1  # explanatory variable across (other variables → one sheet per layer)
    cells_sheet: bool = True
    report_sheet: bool = True
    confidential: bool = False  # add true values and protection levels (NOT for publication)


# ---------------------------------------------------------------------------- helpers
def put_text(cell, text: str) -> None:
    """Store text as an explicit string (never a formula); risky leading characters quoted."""
    cell.value = text
    cell.data_type = "s"
    if text.startswith(_RISKY):
        cell.quotePrefix = True


def _put(cell, value: Any, number_format: str | None = None) -> None:
    if isinstance(value, str):
        put_text(cell, value)
    else:
        cell.value = value
        if number_format is not None:
            cell.number_format = number_format


def number_format(decimals: int, thousands: bool) -> str:
    """Excel number format with the response's decimals (e.g. '#,##0.00')."""
    base = "#,##0" if thousands else "0"
    return base + ("." + "0" * decimals if decimals > 0 else "")


def shown_values(table: Table, options: ExcelOptions) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, text) per cell: text is '' where the number is shown (formats.md §10.1)."""
    status = np.asarray(table.status)
    numbers = np.asarray(
        table.published if table.published is not None else table.value, dtype=float
    )
    text = np.full(status.shape, "", dtype=object)
    if table.published is None:
        text[is_suppressed(status)] = options.suppressed_text
    text[status == 14] = options.empty_text
    return numbers, text


def _sheet_name(wanted: str, used: set[str]) -> str:
    base = _BAD_SHEET_CHARS.sub("_", wanted).strip("'") or "sheet"
    base = base[:31]
    name, k = base, 2
    while name.lower() in used:
        suffix = f"~{k}"
        name = base[: 31 - len(suffix)] + suffix
        k += 1
    used.add(name.lower())
    return name


def _round(x: float, decimals: int) -> float:
    return float(round(x, decimals))


# ---------------------------------------------------------------------------- table sheets
def _layout(table: Table, options: ExcelOptions) -> tuple[int, int | None, list[int]]:
    k = table.ndim
    if k == 1:
        return 0, None, []
    r, c = options.row_dim, options.col_dim
    if not (0 <= r < k and 0 <= c < k and r != c):
        raise ArgusError(
            f"Excel layout: row variable {r} and column variable {c} must be two different "
            f"explanatory variables of the {k}-dimensional table (0..{k - 1})"
        )
    return r, c, [d for d in range(k) if d not in (r, c)]


def _write_grid(
    ws: Worksheet,
    table: Table,
    options: ExcelOptions,
    numbers: np.ndarray,
    text: np.ndarray,
    fixed: dict[int, int],
    layer_title: str,
) -> None:
    """One sheet: rows = row variable, columns = column variable, other dims fixed."""
    r_dim, c_dim, _ = _layout(table, options)
    rows_cl = table.dims[r_dim]
    cols_cl: CodeList | None = table.dims[c_dim] if c_dim is not None else None
    shape = table.shape
    fmt = number_format(table.decimals, options.thousands)
    bold = Font(bold=True)
    put_text(ws.cell(1, 1), table.name or " × ".join(table.spec.explanatory))
    ws.cell(1, 1).font = Font(bold=True, size=12)
    if layer_title:
        put_text(ws.cell(2, 1), layer_title)
    header = 4
    first_col = 3 if options.labels else 2
    n_head = 2 if (options.labels and cols_cl is not None) else 1
    first_row = header + n_head
    row_name = table.spec.explanatory[r_dim]
    put_text(ws.cell(header, 1), row_name)
    ws.cell(header, 1).font = bold
    if options.labels:
        put_text(ws.cell(header, 2), "label")
        ws.cell(header, 2).font = bold
    if cols_cl is None:
        col_nodes = [None]
        put_text(ws.cell(header, first_col), table.spec.response or "Freq")
        ws.cell(header, first_col).font = bold
    else:
        col_nodes = list(range(len(cols_cl)))
        depth_c = cols_cl.depth
        for j in col_nodes:
            cell = ws.cell(header, first_col + j)
            put_text(cell, cols_cl.codes[j])
            cell.font = bold
            cell.alignment = Alignment(horizontal="right")
            if options.labels:
                put_text(ws.cell(header + 1, first_col + j), cols_cl.label(j))
                ws.cell(header + 1, first_col + j).alignment = Alignment(
                    horizontal="right", wrap_text=True
                )
            level = min(int(depth_c[j]), _MAX_OUTLINE)
            if level:
                ws.column_dimensions[get_column_letter(first_col + j)].outline_level = level
    depth_r = rows_cl.depth
    fills = (
        {s: PatternFill("solid", fgColor=c) for s, c in STATUS_COLOURS.items()}
        if options.status_colours
        else {}
    )
    status = np.asarray(table.status)
    idx = [0] * table.ndim
    for d, node in fixed.items():
        idx[d] = node
    for i in range(len(rows_cl)):
        row = first_row + i
        depth = int(depth_r[i])
        code_cell = ws.cell(row, 1)
        put_text(code_cell, rows_cl.codes[i])
        code_cell.alignment = Alignment(horizontal="left", indent=depth)
        if options.labels:
            put_text(ws.cell(row, 2), rows_cl.label(i))
            ws.cell(row, 2).alignment = Alignment(horizontal="left", indent=depth)
        if depth:
            ws.row_dimensions[row].outline_level = min(depth, _MAX_OUTLINE)
        for j, node_c in enumerate(col_nodes):
            idx[r_dim] = i
            if c_dim is not None:
                idx[c_dim] = node_c
            cell_no = int(np.ravel_multi_index(idx, shape))
            cell = ws.cell(row, first_col + j)
            t = text[cell_no]
            if t:
                put_text(cell, t)
                cell.alignment = Alignment(horizontal="right")
            else:
                cell.value = _round(numbers[cell_no], table.decimals)
                cell.number_format = fmt
            if fills:
                cell.fill = fills[int(status[cell_no])]
    ws.freeze_panes = ws.cell(first_row, first_col)
    _print_setup(ws, first_row, first_col)
    ws.sheet_properties.outlinePr.summaryBelow = False
    ws.sheet_properties.outlinePr.summaryRight = False
    ws.column_dimensions["A"].width = max(8, min(40, max(len(c) for c in rows_cl.codes) + 4))
    if options.labels:
        labels = [rows_cl.label(i) for i in range(len(rows_cl))]
        ws.column_dimensions["B"].width = max(8, min(50, max(len(s) for s in labels) + 4))
    for j in range(len(col_nodes)):
        letter = get_column_letter(first_col + j)
        ws.column_dimensions[letter].width = 14
    if fills:
        _legend(ws, first_row + len(rows_cl) + 2, fills, status)


def _print_setup(ws: Worksheet, first_row: int, first_col: int) -> None:
    """Landscape, one page wide, header rows and code columns repeated on every page."""
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.print_title_rows = f"4:{first_row - 1}"
    ws.print_title_cols = f"A:{get_column_letter(first_col - 1)}"


def _legend(ws: Worksheet, row: int, fills: dict[int, PatternFill], status: np.ndarray) -> None:
    put_text(ws.cell(row, 1), "Legend")
    ws.cell(row, 1).font = Font(bold=True)
    present = np.unique(status)
    for k, s in enumerate(int(x) for x in present):
        c = ws.cell(row + 1 + k, 1)
        put_text(c, str(s))
        c.fill = fills[s]
        put_text(ws.cell(row + 1 + k, 2), STATUS_LABELS[s])


def _layer_title(table: Table, fixed: dict[int, int]) -> str:
    parts = []
    for d, node in fixed.items():
        dim = table.dims[d]
        code = dim.codes[node]
        label = dim.label(node)
        parts.append(
            f"{table.spec.explanatory[d]}: {code.strip()}"
            + (f" ({label})" if label != code else "")
        )
    return "; ".join(parts)


# ---------------------------------------------------------------------------- cells sheet
def _write_cells(
    ws: Worksheet,
    table: Table,
    options: ExcelOptions,
    numbers: np.ndarray,
    text: np.ndarray,
    audit: Any,
) -> None:
    """Long format: one row per cell in table order (totals first)."""
    names = table.spec.explanatory
    head: list[str] = []
    for n in names:
        head += [n, f"{n} label"]
    resp = table.spec.response or "Freq"
    if table.published is not None:
        resp += " (published)"
    head += [resp, "Status", "Status text"]
    if audit is not None:
        head += ["Audit lower", "Audit upper"]
    if options.confidential:
        head += ["True value", "LPL", "UPL"]
    for j, h in enumerate(head, start=1):
        put_text(ws.cell(1, j), h)
        ws.cell(1, j).font = Font(bold=True)
    ws.freeze_panes = "A2"
    for j, h in enumerate(head, start=1):
        ws.column_dimensions[get_column_letter(j)].width = 26 if h == "Status text" else 16
    fmt = number_format(table.decimals, options.thousands)
    status = np.asarray(table.status).astype(int)
    value = np.asarray(table.value, dtype=float)
    lower = upper = None
    if audit is not None:
        lower = np.asarray(audit.lower, dtype=float)
        upper = np.asarray(audit.upper, dtype=float)
    codes = [d.codes for d in table.dims]
    labels = [[d.label(i) for i in range(len(d))] for d in table.dims]
    ranges = [range(len(d)) for d in table.dims]
    for cell_no, nodes in enumerate(itertools.product(*ranges)):
        row: list[Any] = []
        for d, node in enumerate(nodes):
            row += [codes[d][node], labels[d][node]]
        t = text[cell_no]
        row.append(t or _round(numbers[cell_no], table.decimals))
        row += [int(status[cell_no]), STATUS_LABELS[int(status[cell_no])]]
        if lower is not None and upper is not None:
            lo, hi = lower[cell_no], upper[cell_no]
            row += [None if np.isnan(lo) else float(lo), None if np.isnan(hi) else float(hi)]
        if options.confidential:
            row += [
                _round(value[cell_no], table.decimals),
                float(table.lpl[cell_no]),
                float(table.upl[cell_no]),
            ]
        r = cell_no + 2
        for j, v in enumerate(row, start=1):
            _put(ws.cell(r, j), v, fmt if isinstance(v, float) else None)


# ---------------------------------------------------------------------------- report sheet
def _write_report(
    ws: Worksheet,
    table: Table,
    options: ExcelOptions,
    audit: Any,
    info: Mapping[str, Any],
) -> None:
    rows: list[tuple[str, Any]] = [
        ("Software", f"argusqt {argusqt.__version__}"),
        ("Date", info.get("time") or datetime.now().strftime("%d-%b-%Y %H:%M:%S")),
    ]
    files = info.get("files") or {}
    items = files.items() if isinstance(files, Mapping) else (("file", f) for f in files)
    for role, f in items:
        rows.append((f"File ({role})", str(f)))
    rows.append(("Table", table.name or " × ".join(table.spec.explanatory)))
    for r in table_structure(table):
        desc = f"{r['codes']} codes" + (f", {r['levels']} levels" if r["hierarchical"] else "")
        rows.append((f"Variable {r['variable']}", desc))
    rows.append(("Response", table.spec.response or "frequency"))
    for k, sentence in enumerate(rules_in_words(table.spec.rules)):
        rows.append(("Rules" if k == 0 else "", sentence))
    recodes = [(r["variable"], r["recode"]) for r in table_structure(table) if r["recode"]]
    rows.append(("Recodes", "; ".join(f"{v}: {d}" for v, d in recodes) or "none"))
    rows.append(("Method", str(info.get("method") or "none (primary suppression only)")))
    n_sec, cost_sec = secondary_figures(table)
    rows.append(("Secondary suppressions", n_sec))
    rows.append(("Secondary cost", round(cost_sec, 2)))
    rows.append(("Audit", audit_text(audit if audit is not None else info.get("audit"))))
    if options.confidential:
        rows.append(("WARNING", "contains true values of suppressed cells: do not publish"))
    bold = Font(bold=True)
    for i, (k, v) in enumerate(rows, start=1):
        put_text(ws.cell(i, 1), k)
        ws.cell(i, 1).font = bold
        _put(ws.cell(i, 2), v)
    r0 = len(rows) + 2
    head = ["Status", "Description", "Cells", "Records", "Value", "Cost"]
    for j, h in enumerate(head, start=1):
        put_text(ws.cell(r0, j), h)
        ws.cell(r0, j).font = bold
    fmt = number_format(table.decimals, options.thousands)
    for i, s in enumerate(status_summary(table), start=r0 + 1):
        _put(ws.cell(i, 1), s["status"] if s["status"] is not None else "")
        _put(ws.cell(i, 2), s["label"])
        _put(ws.cell(i, 3), s["cells"])
        _put(ws.cell(i, 4), s["records"], number_format(0, options.thousands))
        _put(ws.cell(i, 5), round(s["value"], table.decimals), fmt)
        _put(ws.cell(i, 6), round(s["cost"], 2), number_format(2, options.thousands))
    ws.column_dimensions["A"].width = 24
    ws.column_dimensions["B"].width = 70


# ---------------------------------------------------------------------------- entry point
def build_workbook(
    table: Table,
    options: ExcelOptions | None = None,
    audit: Any = None,
    report_info: Mapping[str, Any] | None = None,
) -> Workbook:
    """The workbook in memory (tests and the GUI preview use it; `write_excel` saves it)."""
    options = options or ExcelOptions()
    numbers, text = shown_values(table, options)
    wb = Workbook()
    used: set[str] = set()
    _, _, others = _layout(table, options)
    first = True
    layers = itertools.product(*[range(len(table.dims[d])) for d in others]) if others else [()]
    for combo in layers:
        fixed = dict(zip(others, combo, strict=True))
        if others:
            wanted = " ".join(table.dims[d].codes[n].strip() for d, n in fixed.items())
        else:
            wanted = "table"
        name = _sheet_name(wanted, used)
        ws = wb.active if first else wb.create_sheet()
        ws.title = name
        first = False
        _write_grid(ws, table, options, numbers, text, fixed, _layer_title(table, fixed))
    if options.cells_sheet:
        _write_cells(
            wb.create_sheet(_sheet_name("cells", used)), table, options, numbers, text, audit
        )
    if options.report_sheet:
        _write_report(
            wb.create_sheet(_sheet_name("report", used)), table, options, audit, report_info or {}
        )
    return wb


def write_excel(
    table: Table,
    path: str | Path,
    options: ExcelOptions | None = None,
    audit: Any = None,
    report_info: Mapping[str, Any] | None = None,
) -> None:
    """Save the protected table as an .xlsx workbook (atomic write)."""
    wb = build_workbook(table, options, audit, report_info)
    buf = io.BytesIO()
    wb.save(buf)
    atomic_write_bytes(path, buf.getvalue())
