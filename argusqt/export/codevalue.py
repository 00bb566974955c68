"""Code-value (type 3) and CSV-for-pivot (type 2) outputs, line for line as τ-Argus
(argusqt/docs/formats.md §10.4).

Also holds the small formatting helpers the other text writers share (codes, values, cell order).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argusqt.export.face import protection_kind, published_values
from argusqt.export.gate import clear_for_publication
from argusqt.io.atomic import atomic_write_text
from argusqt.io.confidential import sidecar_path, write_marked
from argusqt.io.textcells import neutralise
from argusqt.model.status import Status
from argusqt.model.table import Table

#: what the first line of a code-value or pivot file with `AS+` says it holds
CODEVALUE_CONFIDENTIAL = "status and true value of every cell, suppressed ones included"

#: Statuses whose value is hidden (`x`) when the status is not added.
HIDDEN = np.array([s in (3, 4, 5, 6, 7, 8, 9, 11, 12) for s in range(16)])


def quote_code(code: str, quotes: bool, *, tau_exact: bool = False) -> str:
    """A code or name as written: a `"` inside becomes `'`, a formula-like text gets a `'` in
    front (unless `tau_exact`: τ-Argus's bytes); surrounded by quotes with `QU+`."""
    code = code.replace('"', "'")
    if not tau_exact:
        code = neutralise(code)
    return f'"{code}"' if quotes else code


def fmt_numbers(values: np.ndarray, decimals: int) -> np.ndarray:
    """Numbers with `decimals` decimals, `.` point, no grouping (object array of str).

    `%`-formatting mapped over a list runs in C and is several times faster than np.char.mod.
    """
    v = np.asarray(values, dtype=float)
    v = np.where(v == 0, 0.0, v)  # no "-0.00"
    fmt = f"%.{max(decimals, 0)}f"
    return _objects(map(fmt.__mod__, v.tolist()))


def fmt_ints(values: np.ndarray) -> np.ndarray:
    """Whole numbers as an object array of str."""
    return _objects(map(str, np.asarray(values, dtype=np.int64).tolist()))


def _objects(items) -> np.ndarray:
    out = list(items)
    arr = np.empty(len(out), dtype=object)
    arr[:] = out
    return arr


def code_columns(
    table: Table, quotes: bool, levels: bool = False, *, tau_exact: bool = False
) -> list[np.ndarray]:
    """Per dimension, the written code of every cell (row-major order); optional level column."""
    idx = np.unravel_index(np.arange(table.n_cells), table.shape)
    cols: list[np.ndarray] = []
    for d, dim in enumerate(table.dims):
        written = _objects(quote_code(c, quotes, tau_exact=tau_exact) for c in dim.codes)
        cols.append(written[idx[d]])
        if levels:
            lev = dim.depth if dim.hierarchical else np.zeros(len(dim), dtype=np.int64)
            cols.append(fmt_ints(np.asarray(lev)[idx[d]]))
    return cols


def join_columns(cols: list[np.ndarray], sep: str = ",") -> np.ndarray:
    """Element-wise `sep`.join of string columns (object array)."""
    lists = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in cols]
    return _objects(map(sep.join, zip(*lists, strict=True)))


def response_name(table: Table) -> str:
    """The response column name in headers (`Freq` for frequency tables)."""
    return table.spec.response if table.spec.response is not None else "Freq"


def shown_values(table: Table) -> np.ndarray:
    """Value per cell as shown without status (argusqt/docs/formats.md §10.1): value, `x` or `-`."""
    status = np.asarray(table.status, dtype=np.int64)
    kind = protection_kind(table)
    if kind == "suppress":
        out = fmt_numbers(table.value, table.decimals)
        out[HIDDEN[status]] = "x"
    elif kind == "interval":  # a published interval reads "lower..upper"
        assert table.interval_lower is not None and table.interval_upper is not None  # kind
        lo = fmt_numbers(table.interval_lower, table.decimals)
        hi = fmt_numbers(table.interval_upper, table.decimals)
        out = fmt_numbers(table.value, table.decimals)
        wide = np.asarray(table.interval_upper) > np.asarray(table.interval_lower)
        out[wide] = _objects(f"{a}..{b}" for a, b in zip(lo[wide], hi[wide], strict=True))
    else:
        out = fmt_numbers(published_values(table), table.decimals)
    out[status == Status.EMPTY] = "-"
    return out


def codevalue_lines(
    table: Table,
    *,
    add_status: bool = False,
    names_first: bool = False,
    quotes: bool = True,
    suppress_empty: bool = False,
    tau_exact: bool = False,
) -> list[str]:
    """The lines of a code-value / pivot file (without line ends)."""
    status = np.asarray(table.status, dtype=np.int64)
    empty = status == Status.EMPTY
    kind = protection_kind(table)
    cols = code_columns(table, quotes, tau_exact=tau_exact)
    true_vals = fmt_numbers(table.value, table.decimals)
    true_vals[empty] = "-"
    status_txt = fmt_ints(status)

    def head(name: str) -> str:
        return quote_code(name, quotes, tau_exact=tau_exact)

    header = [head(d.name) for d in table.dims]
    resp = response_name(table)
    if kind == "interval":
        # argusqt extension: published intervals [lower, upper] (a published cell has
        # lower = upper = value); AS+ adds the true value and the status
        assert table.interval_lower is not None and table.interval_upper is not None  # kind
        lo = fmt_numbers(table.interval_lower, table.decimals)
        hi = fmt_numbers(table.interval_upper, table.decimals)
        lo[empty] = "-"
        hi[empty] = "-"
        cols += [lo, hi]
        header += [head(resp + "_Lower"), head(resp + "_Upper")]
        if add_status:
            cols += [true_vals, status_txt]
            header += [head(resp + "_Orig"), head("Status")]
    elif kind == "suppress":
        if add_status:
            cols += [true_vals, status_txt]
            header += [head(resp), head("Status")]
        else:
            cols.append(shown_values(table))
            header.append(head(resp))
    else:
        shown = shown_values(table)
        suffix = "_CTA" if kind == "cta" else "_Round"
        header.append(head(resp + suffix))
        cols.append(shown)
        if add_status:
            cols.append(true_vals)
            header.append(head(resp + "_Orig"))
            if kind == "cta":
                cols.append(status_txt)
                header.append(head("Status"))
    body = join_columns(cols)
    if suppress_empty:
        body = body[np.asarray(table.freq) != 0]
    lines = [",".join(header)] if names_first else []
    lines.extend(body.tolist())
    return lines


def write_codevalue(
    table: Table,
    path: str | Path,
    *,
    add_status: bool = False,
    names_first: bool = False,
    quotes: bool = True,
    suppress_empty: bool = False,
    tau_exact: bool = False,
) -> list[Path]:
    """Write type 3 (code-value); type 2 is the same with `names_first=True`. Returns the
    files written.

    Without `add_status` the file is for publication and passes the publication gate
    first; with it (true values and status numbers) it is an internal, confidential file,
    marked by its sidecar (the CSV itself stays as τ-Argus writes it).
    """
    if not add_status:
        clear_for_publication(table)
    lines = codevalue_lines(
        table,
        add_status=add_status,
        names_first=names_first,
        quotes=quotes,
        suppress_empty=suppress_empty,
        tau_exact=tau_exact,
    )
    text = "".join(line + "\n" for line in lines)
    if add_status:  # statuses and true values of suppressed cells: the sidecar says so
        return write_marked(path, text, CODEVALUE_CONFIDENTIAL)
    atomic_write_text(path, text)
    # a sidecar left by an earlier confidential file of this name would mislabel this one
    sidecar_path(path).unlink(missing_ok=True)
    return [Path(path)]
