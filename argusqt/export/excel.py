"""Excel export of a protected table (openpyxl): the published workbook, or the confidential one.

What is shown follows argusqt/docs/formats.md §10.1: statuses 3–9, 11, 12 as the suppressed text
(`x`), 14 as the empty text (`-`), others their value; rounded/CTA tables show their
published values; after interval protection a cell shows its published interval
(`lower – upper`, a distinct fill) or, when lower = upper, its value.

The default (published) workbook holds only that table, its labels and outline and a legend
of the symbols: nothing that tells a primary from a secondary cell, no sums, counts or costs
of suppressed cells. It is written only through the publication gate (export.gate). The
confidential workbook (`ExcelOptions(confidential=True)`) adds status colours, the cell list
with statuses, true values, protection levels and audit intervals, and the report; its file
name contains CONFIDENTIAL and every sheet starts with CONFIDENTIAL_BANNER.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

import argusqt
from argusqt.dataclass import dataclass
from argusqt.errors import ArgusError, Cancelled
from argusqt.export.face import published_values
from argusqt.export.gate import CONFIDENTIAL_BANNER
from argusqt.export.report import (
    audit_text,
    rules_in_words,
    secondary_figures,
    status_summary,
    table_structure,
)
from argusqt.io.atomic import atomic_write_bytes
from argusqt.io.confidential import confidential_path
from argusqt.io.textcells import formula_like
from argusqt.model.codelist import CodeList
from argusqt.model.status import STATUS_LABELS, Status, is_suppressed
from argusqt.model.table import Table
from argusqt.progress import (
    CancelToken,
    ProgressCallback,
    ProgressEvent,
    Stopwatch,
    no_progress,
)

#: What the published workbook's legend says about its symbols (no word on why a cell is hidden).
SUPPRESSED_LABEL = "not published (suppressed to protect confidentiality)"
EMPTY_LABEL = "empty cell (no contributions)"

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
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\\x00-\x1f]")
_RESERVED_SHEETS = {"history"}
#: Fill colour (RGB hex) of a cell published as a wide interval after interval protection.
INTERVAL_COLOUR = "BDD7EE"
INTERVAL_LABEL = "published interval"


@dataclass
class ExcelOptions:
    """How the workbook looks; defaults give the publishable workbook."""

    suppressed_text: str = "x"
    empty_text: str = "-"
    labels: bool = True  # a label row/column next to the codes
    thousands: bool = True  # thousands separators in the number format
    row_dim: int = 0  # explanatory variable down the rows
    col_dim: int = 1  # explanatory variable across (other variables → one sheet per layer)
    #: the internal workbook: status colours, cell list (statuses, true values, protection
    #: levels, audit intervals) and report - NOT for publication
    confidential: bool = False
    #: None: on in the confidential workbook; a published workbook never has them (they
    #: tell primary from secondary cells)
    status_colours: bool | None = None

    @property
    def colours(self) -> bool:
        return self.confidential if self.status_colours is None else bool(self.status_colours)


# ---------------------------------------------------------------------------- helpers
class _Ticker:
    """Counts written rows; reports progress and stops (no file is written) when cancelled."""

    def __init__(self, total: int, progress: ProgressCallback, cancel: CancelToken | None):
        self.total = max(total, 1)
        self.done = 0
        self.next_report = 0
        self.progress = progress
        self.cancel = cancel
        self.clock = Stopwatch()

    def tick(self, rows: int = 1) -> None:
        self.done += rows
        if self.done < self.next_report:
            return
        self.next_report = self.done + 2000
        if self.cancel is not None and self.cancel.cancelled:
            raise Cancelled("Excel export cancelled: no file was written")
        self.progress(
            ProgressEvent(
                "Writing the Excel workbook",
                fraction=min(self.done / self.total, 1.0),
                elapsed=self.clock.elapsed,
            )
        )


class _Cells:
    """Styled write-only cells, one per (column, style), reused row after row.

    Streaming sheets write a row as soon as it is appended, so a pre-styled cell can be
    refilled for the next row; this avoids building and hashing a style per cell.
    """

    def __init__(self, ws) -> None:
        self.ws = ws
        self.pool: dict[tuple, WriteOnlyCell] = {}

    def _cell(self, col: int, key: tuple, style: dict[str, Any]) -> WriteOnlyCell:
        k = (col, *key)
        cell = self.pool.get(k)
        if cell is None:
            cell = WriteOnlyCell(self.ws)
            for name, value in style.items():
                setattr(cell, name, value)
            self.pool[k] = cell
        return cell

    def text(self, col: int, text: str, key: tuple = (), **style: Any) -> WriteOnlyCell:
        """Explicit string (never a formula); risky leading characters get a quote prefix."""
        risky = formula_like(text)
        if risky:
            style = {**style, "quotePrefix": True}
        cell = self._cell(col, ("t", risky, *key), style)
        cell.value = text
        cell.data_type = "s"
        return cell

    def number(self, col: int, value: float | int, fmt: str, key: tuple = (), **style: Any):
        cell = self._cell(col, ("n", fmt, *key), {"number_format": fmt, **style})
        cell.value = value
        return cell

    def value(self, col: int, value: Any, fmt: str | None = None, **style: Any):
        """Text, a number (with `fmt`) or None."""
        if value is None:
            return None
        if isinstance(value, str):
            return self.text(col, value, tuple(sorted(style)), **style)
        if fmt is None:
            return value if not style else self._num_plain(col, value, style)
        return self.number(col, value, fmt, tuple(sorted(style)), **style)

    def _num_plain(self, col: int, value: Any, style: dict[str, Any]):
        cell = self._cell(col, ("p", *sorted(style)), style)
        cell.value = value
        return cell


def put_text(cell, text: str) -> None:
    """Store text in an ordinary (non-streaming) cell as an explicit string, never a formula."""
    cell.value = text
    cell.data_type = "s"
    if formula_like(text):
        cell.quotePrefix = True


def number_format(decimals: int, thousands: bool) -> str:
    """Excel number format with the response's decimals (e.g. '#,##0.00')."""
    base = "#,##0" if thousands else "0"
    return base + ("." + "0" * decimals if decimals > 0 else "")


def has_intervals(table: Table) -> bool:
    """True after interval protection (the table carries published intervals)."""
    return (
        getattr(table, "interval_lower", None) is not None
        and getattr(table, "interval_upper", None) is not None
    )


def format_number(x: float, decimals: int, thousands: bool) -> str:
    """`x` as text like the number format shows it (e.g. '1,234.50'); never '-0.00'."""
    x = round(float(x), decimals) + 0.0
    return f"{x:,.{decimals}f}" if thousands else f"{x:.{decimals}f}"


def interval_cells(table: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, wide) after interval protection: bounds rounded to the decimals and
    whether the cell is published as an interval (lower < upper; an empty cell never is)."""
    lo = np.round(np.asarray(table.interval_lower, dtype=float), table.decimals)
    hi = np.round(np.asarray(table.interval_upper, dtype=float), table.decimals)
    wide = ~(lo == hi) & (np.asarray(table.status) != 14)  # NaN bounds count as wide
    return lo, hi, wide


def shown_values(table: Table, options: ExcelOptions) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, text) per cell: text is '' where the number is shown
    (argusqt/docs/formats.md §10.1).

    After interval protection a cell with lower = upper shows that number and a wider one
    the text 'lower – upper' (the decimals and thousands separators of the number format).
    """
    status = np.asarray(table.status)
    text = np.full(status.shape, "", dtype=object)
    if has_intervals(table):
        lo, hi, wide = interval_cells(table)
        numbers = lo.copy()
        d, th = table.decimals, options.thousands
        for k in np.flatnonzero(wide).tolist():
            if np.isfinite(lo[k]) and np.isfinite(hi[k]):
                text[k] = f"{format_number(lo[k], d, th)} – {format_number(hi[k], d, th)}"
            else:  # no finite published interval: nothing can be shown
                text[k] = options.suppressed_text
    else:
        numbers = np.asarray(
            published_values(table) if table.published is not None else table.value, dtype=float
        )
        numbers = np.round(numbers, table.decimals)
        if table.published is None:
            text[is_suppressed(status)] = options.suppressed_text
    text[status == Status.EMPTY] = options.empty_text
    return numbers, text


def _sheet_name(wanted: str, used: set[str]) -> str:
    """A valid, unused sheet name: no []:*?/\\, no leading/trailing `'`, 1–31 characters,
    never `History` (Excel reserves it for change tracking and refuses the workbook)."""
    base = _BAD_SHEET_CHARS.sub("_", wanted).strip().strip("'").strip() or "sheet"
    base = base[:31].rstrip("'")
    name, k = base, 2
    while name.lower() in used or name.lower() in _RESERVED_SHEETS:
        suffix = f"~{k}"
        name = base[: 31 - len(suffix)] + suffix
        k += 1
    used.add(name.lower())
    return name


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


def _grid_cells(table: Table, r_dim: int, c_dim: int | None, fixed: dict[int, int]) -> np.ndarray:
    """Cell numbers of the sheet as a (rows × columns) array (vectorised index arithmetic)."""
    shape = table.shape
    strides = np.cumprod((*shape[1:], 1)[::-1])[::-1]
    base = sum(int(strides[d]) * n for d, n in fixed.items())
    rows = np.arange(shape[r_dim]) * strides[r_dim]
    if c_dim is None:
        return (base + rows)[:, None]
    cols = np.arange(shape[c_dim]) * strides[c_dim]
    return base + rows[:, None] + cols[None, :]


def _write_grid(
    ws,
    table: Table,
    options: ExcelOptions,
    numbers: np.ndarray,
    text: np.ndarray,
    fixed: dict[int, int],
    layer_title: str,
    ticker: _Ticker,
) -> None:
    """One sheet: rows = row variable, columns = column variable, other dims fixed."""
    r_dim, c_dim, _ = _layout(table, options)
    rows_cl = table.dims[r_dim]
    cols_cl: CodeList | None = table.dims[c_dim] if c_dim is not None else None
    fmt = number_format(table.decimals, options.thousands)
    cells = _Cells(ws)
    bold = Font(bold=True)
    right = Alignment(horizontal="right")
    first_col = 3 if options.labels else 2
    n_head = 2 if (options.labels and cols_cl is not None) else 1
    top = 1 if options.confidential else 0  # the banner row
    header = 4 + top
    first_row = header + n_head
    n_cols = len(cols_cl) if cols_cl is not None else 1
    # sheet-level settings must precede the rows of a streaming sheet
    depth_r = rows_cl.depth
    for i in range(len(rows_cl)):
        if depth_r[i]:
            ws.row_dimensions[first_row + i].outline_level = min(int(depth_r[i]), _MAX_OUTLINE)
    ws.column_dimensions["A"].width = max(8, min(40, max(len(c) for c in rows_cl.codes) + 4))
    row_labels = [rows_cl.label(i) for i in range(len(rows_cl))]
    if options.labels:
        ws.column_dimensions["B"].width = max(8, min(50, max(len(x) for x in row_labels) + 4))
    for j in range(n_cols):
        letter = get_column_letter(first_col + j)
        ws.column_dimensions[letter].width = 14
        if cols_cl is not None and cols_cl.depth[j]:
            ws.column_dimensions[letter].outline_level = min(int(cols_cl.depth[j]), _MAX_OUTLINE)
    ws.freeze_panes = f"{get_column_letter(first_col)}{first_row}"
    _print_setup(ws, header, first_row, first_col)
    ws.sheet_properties.outlinePr.summaryBelow = False
    ws.sheet_properties.outlinePr.summaryRight = False
    if top:
        ws.append([_banner(cells)])
    # title, layer, blank line
    ws.append(
        [
            cells.text(
                1,
                table.name or " × ".join(table.spec.explanatory),
                ("title",),
                font=Font(bold=True, size=12),
            )
        ]
    )
    ws.append([cells.text(1, layer_title)] if layer_title else [])
    ws.append([])
    head = [cells.text(1, table.spec.explanatory[r_dim], ("h",), font=bold)]
    if options.labels:
        head.append(cells.text(2, "label", ("h",), font=bold))
    if cols_cl is None:
        head.append(cells.text(first_col, table.spec.response or "Freq", ("h",), font=bold))
        ws.append(head)
    else:
        head += [
            cells.text(first_col + j, cols_cl.codes[j], ("hc",), font=bold, alignment=right)
            for j in range(n_cols)
        ]
        ws.append(head)
        if options.labels:
            wrap = Alignment(horizontal="right", wrap_text=True)
            ws.append(
                [None, None]
                + [
                    cells.text(first_col + j, cols_cl.label(j), ("hl",), alignment=wrap)
                    for j in range(n_cols)
                ]
            )
    grid = _grid_cells(table, r_dim, c_dim, fixed)
    status = np.asarray(table.status).astype(int)
    fills = (
        {s: PatternFill("solid", fgColor=c) for s, c in STATUS_COLOURS.items()}
        if options.colours
        else {}
    )
    wide = interval_cells(table)[2] if has_intervals(table) else None
    interval_fill = PatternFill("solid", fgColor=INTERVAL_COLOUR)
    indents = {d: Alignment(horizontal="left", indent=int(d)) for d in np.unique(depth_r)}
    for i in range(len(rows_cl)):
        d = int(depth_r[i])
        row: list[Any] = [cells.text(1, rows_cl.codes[i], ("code", d), alignment=indents[d])]
        if options.labels:
            row.append(cells.text(2, row_labels[i], ("code", d), alignment=indents[d]))
        for j, cell_no in enumerate(grid[i].tolist()):
            col = first_col + j
            st = int(status[cell_no])
            extra: dict[str, Any] = {"fill": fills[st]} if fills else {}
            key = (st,) if fills else ()
            t = text[cell_no]
            if wide is not None and wide[cell_no]:
                row.append(cells.text(col, t, ("iv",), alignment=right, fill=interval_fill))
            elif t:
                row.append(cells.text(col, t, ("v", *key), alignment=right, **extra))
            else:
                row.append(cells.number(col, float(numbers[cell_no]), fmt, key, **extra))
        ws.append(row)
        ticker.tick()
    ws.append([])
    shown = text[grid.ravel()]
    symbols = [
        (sym, label)
        for sym, label in (
            (options.suppressed_text, SUPPRESSED_LABEL),
            (options.empty_text, EMPTY_LABEL),
        )
        if (shown == sym).any()
    ]
    _legend(ws, cells, symbols, fills, status, interval_fill if wide is not None else None)


def _fit_width(ws) -> None:
    """Print landscape, one page wide, as many pages down as needed."""
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0


def _print_setup(ws, header: int, first_row: int, first_col: int) -> None:
    """Fit to width; header rows and code columns repeated on every page."""
    _fit_width(ws)
    ws.print_title_rows = f"{header}:{first_row - 1}"
    ws.print_title_cols = f"A:{get_column_letter(first_col - 1)}"


def _banner(cells: _Cells):
    return cells.text(1, CONFIDENTIAL_BANNER, ("banner",), font=Font(bold=True, color="C00000"))


def _legend(
    ws,
    cells: _Cells,
    symbols: list[tuple[str, str]],
    fills: dict[int, PatternFill],
    status: np.ndarray,
    interval_fill: PatternFill | None = None,
) -> None:
    """The symbols shown, status colours (confidential workbook only), the interval colour."""
    ws.append([cells.text(1, "Legend", ("h",), font=Font(bold=True))])
    for sym, label in symbols:
        ws.append([cells.text(1, sym, ("legend", "sym")), cells.text(2, label)])
    if fills:
        for s in np.unique(status).tolist():
            ws.append(
                [
                    cells.text(1, str(s), ("legend", s), fill=fills[s]),
                    cells.text(2, STATUS_LABELS[s]),
                ]
            )
    if interval_fill is not None:
        ws.append(
            [
                cells.text(1, "lower – upper", ("legend", "iv"), fill=interval_fill),
                cells.text(2, INTERVAL_LABEL),
            ]
        )


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
    ws,
    table: Table,
    options: ExcelOptions,
    numbers: np.ndarray,
    text: np.ndarray,
    audit: Any,
    ticker: _Ticker,
) -> None:
    """Long format: one row per cell in table order (totals first)."""
    cells = _Cells(ws)
    names = table.spec.explanatory
    head: list[str] = []
    for n in names:
        head += [n, f"{n} label"]
    resp = table.spec.response or "Freq"
    intervals = has_intervals(table)
    if table.published is not None or intervals:
        resp += " (published)"
    head += [resp, "Status", "Status text"]
    if intervals:
        head += ["Interval lower", "Interval upper"]
    if audit is not None:
        head += ["Audit lower", "Audit upper"]
    head += ["True value", "LPL", "UPL"]
    for j, h in enumerate(head, start=1):
        ws.column_dimensions[get_column_letter(j)].width = 26 if h == "Status text" else 16
    ws.freeze_panes = "A3"
    _fit_width(ws)
    ws.print_title_rows = "1:2"
    bold = Font(bold=True)
    ws.append([_banner(cells)])
    ws.append([cells.text(j, h, ("h",), font=bold) for j, h in enumerate(head, start=1)])
    fmt = number_format(table.decimals, options.thousands)
    status = np.asarray(table.status).astype(int).tolist()
    value = np.round(np.asarray(table.value, dtype=float), table.decimals).tolist()
    nums = numbers.tolist()
    iv_lo = iv_hi = None
    if intervals:
        iv_lo, iv_hi, _ = interval_cells(table)
        iv_lo, iv_hi = iv_lo.tolist(), iv_hi.tolist()
    lower = upper = None
    if audit is not None:
        lower = np.asarray(audit.lower, dtype=float).tolist()
        upper = np.asarray(audit.upper, dtype=float).tolist()
    from argusqt.protection.core.problem import protected_levels  # lazy: D-78's start-up

    lpl, upl = (pl.tolist() for pl in protected_levels(table))  # what is protected (D-94)
    codes = [d.codes for d in table.dims]
    labels = [[d.label(i) for i in range(len(d))] for d in table.dims]
    ranges = [range(len(d)) for d in table.dims]
    right = Alignment(horizontal="right")
    v_col = 2 * len(names) + 1
    for cell_no, nodes in enumerate(itertools.product(*ranges)):
        row: list[Any] = []
        for d, node in enumerate(nodes):
            row.append(cells.text(2 * d + 1, codes[d][node]))
            row.append(cells.text(2 * d + 2, labels[d][node]))
        t = text[cell_no]
        if t:
            row.append(cells.text(v_col, t, ("v",), alignment=right))
        else:
            row.append(cells.number(v_col, nums[cell_no], fmt))
        st = status[cell_no]
        row += [st, cells.text(v_col + 2, STATUS_LABELS[st])]
        if iv_lo is not None and iv_hi is not None:
            lo, hi = iv_lo[cell_no], iv_hi[cell_no]
            if st == Status.EMPTY or lo != lo or hi != hi:  # empty cell or no bound → blank
                row += [None, None]
            else:
                row += [cells.number(v_col + 3, lo, fmt), cells.number(v_col + 4, hi, fmt)]
        if lower is not None and upper is not None:
            lo, hi = lower[cell_no], upper[cell_no]
            row += [None if lo != lo else lo, None if hi != hi else hi]  # NaN → blank
        c = len(row) + 1
        row += [
            cells.number(c, value[cell_no], fmt),
            cells.number(c + 1, lpl[cell_no], fmt),
            cells.number(c + 2, upl[cell_no], fmt),
        ]
        ws.append(row)
        ticker.tick()


# ---------------------------------------------------------------------------- report sheet
def _write_report(
    ws,
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
    method = info.get("method") or (table.protection.method if table.protection else None)
    if has_intervals(table):
        name = "interval protection"
        shown = str(method) if method else ""
        rows.append(("Method", f"{name} ({shown})" if shown and shown.lower() != name else name))
        rows.append(("Published intervals", int(interval_cells(table)[2].sum())))
    else:
        rows.append(("Method", str(info.get("method") or "none (primary suppression only)")))
    n_sec, cost_sec = secondary_figures(table)
    rows.append(("Secondary suppressions", n_sec))
    rows.append(("Secondary cost", round(cost_sec, 2)))
    rows.append(("Audit", audit_text(audit if audit is not None else info.get("audit"))))
    rows.append(("WARNING", "contains true values of suppressed cells: do not publish"))
    ws.column_dimensions["A"].width = 24
    ws.column_dimensions["B"].width = 70
    for letter in "CDEF":
        ws.column_dimensions[letter].width = 16
    _fit_width(ws)
    cells = _Cells(ws)
    bold = Font(bold=True)
    ws.append([_banner(cells)])
    for label, v in rows:
        ws.append([cells.text(1, label, ("h",), font=bold), cells.value(2, v)])
    ws.append([])
    head = ["Status", "Description", "Cells", "Records", "Value", "Cost"]
    ws.append([cells.text(j, h, ("h",), font=bold) for j, h in enumerate(head, start=1)])
    fmt = number_format(table.decimals, options.thousands)
    f0 = number_format(0, options.thousands)
    f2 = number_format(2, options.thousands)
    for s in status_summary(table):
        ws.append(
            [
                s["status"],
                cells.text(2, s["label"]),
                s["cells"],
                cells.number(4, s["records"], f0),
                cells.number(5, round(s["value"], table.decimals), fmt),
                cells.number(6, round(s["cost"], 2), f2),
            ]
        )


# ---------------------------------------------------------------------------- entry point
def build_workbook(
    table: Table,
    options: ExcelOptions | None = None,
    audit: Any = None,
    report_info: Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Workbook:
    """A streaming workbook with every sheet written; `write_excel` saves it.

    Builds the content only: a file for publication goes through `write_excel`, which
    passes the publication gate first. Raises `Cancelled` when cancelled (an export has no
    partial safe result).
    """
    options = options or ExcelOptions()
    if not options.confidential and options.colours:
        raise ArgusError(
            "status colours tell primary from secondary cells: they are only available in the "
            "confidential workbook (ExcelOptions(confidential=True)), never in a published one"
        )
    numbers, text = shown_values(table, options)
    wb = Workbook(write_only=True)
    r_dim, _, others = _layout(table, options)
    n_layers = int(np.prod([len(table.dims[d]) for d in others])) if others else 1
    total = n_layers * len(table.dims[r_dim]) + (table.n_cells if options.confidential else 0)
    ticker = _Ticker(total, progress, cancel)
    try:
        _fill(wb, table, options, numbers, text, audit, report_info or {}, others, ticker)
    except BaseException:
        _discard(wb)
        raise
    return wb


def _discard(wb: Workbook) -> None:
    """Close the streaming sheets of an abandoned workbook and delete their temp files."""
    for ws in wb.worksheets:
        try:
            ws.close()
            ws._writer.cleanup()
        except Exception:  # best effort; openpyxl also removes them at exit
            pass


def _fill(
    wb: Workbook,
    table: Table,
    options: ExcelOptions,
    numbers: np.ndarray,
    text: np.ndarray,
    audit: Any,
    report_info: Mapping[str, Any],
    others: list[int],
    ticker: _Ticker,
) -> None:
    used: set[str] = set()
    layers = itertools.product(*[range(len(table.dims[d])) for d in others]) if others else [()]
    for combo in layers:
        fixed = dict(zip(others, combo, strict=True))
        if others:
            wanted = " ".join(table.dims[d].codes[n].strip() for d, n in fixed.items())
        else:
            wanted = "table"
        ws = wb.create_sheet(_sheet_name(wanted, used))
        title = _layer_title(table, fixed)
        _write_grid(ws, table, options, numbers, text, fixed, title, ticker)
    if options.confidential:  # the cell list and the report exist only here
        ws = wb.create_sheet(_sheet_name("cells", used))
        _write_cells(ws, table, options, numbers, text, audit, ticker)
        ws = wb.create_sheet(_sheet_name("report", used))
        _write_report(ws, table, options, audit, report_info)


def excel_bytes(
    table: Table,
    options: ExcelOptions | None = None,
    audit: Any = None,
    report_info: Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> bytes:
    """The .xlsx file content."""
    buf = io.BytesIO()
    build_workbook(table, options, audit, report_info, progress, cancel).save(buf)
    progress(ProgressEvent("Excel workbook written", fraction=1.0))
    return buf.getvalue()


def write_excel(
    table: Table,
    path: str | Path,
    options: ExcelOptions | None = None,
    audit: Any = None,
    report_info: Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Path:
    """Save the table as an .xlsx workbook (atomic: nothing written if cancelled or refused).

    The published workbook passes the publication gate first (PublicationError otherwise);
    the confidential one is written to a name containing CONFIDENTIAL. Returns the path.
    """
    options = options or ExcelOptions()
    path = Path(path)
    if options.confidential:
        path = confidential_path(path)
    else:
        from argusqt.export.gate import clear_for_publication

        clear_for_publication(table, progress=progress, cancel=cancel)
    data = excel_bytes(table, options, audit, report_info, progress, cancel)
    atomic_write_bytes(path, data)
    return path
