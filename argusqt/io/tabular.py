"""Tabular input `.tab` (argusqt/docs/formats.md §3): one line per cell → a Table with given or rule
statuses.

Fields are split in one pass and handled column-wise with numpy's string functions (pandas was
the slowest import of a batch run, for nothing a table file needs); the per-cell consistency
rules of argusqt/docs/formats.md §3.2 are applied in the documented order as array operations.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import InputError, SpecificationError
from argusqt.io.codelists import codelist_for
from argusqt.io.text import check_no_control, is_comment, read_lines
from argusqt.model.codelist import CodeList
from argusqt.model.metadata import Metadata, Variable
from argusqt.model.rulespec import SafetyRules
from argusqt.model.status import Status, is_primary
from argusqt.model.table import Table, TableSpec, build_relations_small
from argusqt.rules.classify import apply_rules
from argusqt.rules.cost import compute_cost

#: Relative tolerance of "sum of top-n ≤ response" (argusqt/docs/formats.md §3.2 rule 9).
TOP_TOL = 1e-9
MAX_REPORTED_RELATIONS = 10


class _Columns:
    """The fields of the kept lines, stripped and unquoted, with their file line numbers."""

    def __init__(self, meta: Metadata, path: Path):
        self.path = path
        sep = meta.separator or ","
        self.sep = sep
        lines = read_lines(path)
        kept = [(i + 1, ln) for i, ln in enumerate(lines) if not is_comment(ln)]
        self.lineno = np.array([k for k, _ in kept], dtype=np.int64)
        text = [ln for _, ln in kept]
        if not text:
            raise InputError(
                "the table file has no lines (expected one line per cell, fields separated "
                f"by {sep!r})",
                file=path,
            )
        self.lines = text
        for k, ln in enumerate(text):
            check_no_control(ln, path, int(self.lineno[k]))
        nvar = len(meta.variables)
        counts = np.char.count(np.array(text, dtype=str), sep)
        bad = np.flatnonzero(counts != nvar - 1)
        if bad.size:
            i = int(bad[0])
            got = int(counts[i]) + 1
            names = ", ".join(v.name for v in meta.variables)
            rda = meta.path.name if meta.path is not None else ""
            msg = (
                f"expected {nvar} fields separated by {sep!r}, one per variable of the "
                f"metadata {rda} ({names}), got {got}"
            )
            if bad.size == len(text):
                msg += f"; every line has {got}: check the metadata or the separator"
                idle = [v for v in meta.variables if not (v.is_number or v.recodeable or v.status)]
                if idle:  # a variable line without any role: often a damaged option line
                    msg += "; " + ", ".join(
                        f"variable {v.name!r} ({rda}, line {v.line}) has no role" for v in idle
                    )
            raise InputError(msg, file=path, line=int(self.lineno[i]))
        # every line has nvar - 1 separators (checked above): joined by the separator, the
        # lines split into exactly n × nvar fields, no quote handling (as τ-Argus)
        frame = np.array(sep.join(text).split(sep), dtype=str).reshape(len(text), nvar)
        self.fields: dict[str, np.ndarray] = {}
        for k, var in enumerate(meta.variables):
            s = np.char.strip(np.char.replace(frame[:, k], "\t", " "))
            quoted = np.flatnonzero(
                np.char.startswith(s, '"') & np.char.endswith(s, '"') & (np.char.str_len(s) >= 2)
            )
            if quoted.size:
                s = s.astype(object)
                s[quoted] = [v[1:-1] for v in s[quoted]]
                s = s.astype(str)
            self.fields[var.name.lower()] = s
        self.n = len(text)

    def text(self, var: Variable) -> np.ndarray:
        """The stripped, unquoted fields of a variable (numpy str array, one per kept line)."""
        return self.fields[var.name.lower()]

    def fail(self, row: int, message: str, field: int | None = None) -> InputError:
        """An error at a line (row of the kept lines), at the start of a field when given."""
        column = None
        if field is not None:
            parts = self.lines[row].split(self.sep)
            column = sum(len(p) + len(self.sep) for p in parts[: field - 1]) + 1
        return InputError(message, file=self.path, line=int(self.lineno[row]), column=column)

    def number(self, var: Variable, *, dash_is_empty: bool = True) -> np.ndarray:
        """Numbers of a column; NaN where empty or '-' (argusqt/docs/formats.md §3.1); bad text →
        InputError.

        Infinities, NaN and numbers beyond the float range (`1e400`) are refused: no sum,
        rule or solver can use them.
        """
        s = self.text(var)
        empty = (s == "") | ((s == "-") if dash_is_empty else False)
        t = s
        if self.sep != ",":
            comma = (np.char.count(s, ",") == 1) & (np.char.find(s, ".") < 0)
            t = np.where(comma, np.char.replace(s, ",", "."), s)
        x = _floats(np.where(empty, "nan", t))
        bad = np.flatnonzero(~np.isfinite(x) & ~empty)
        if bad.size:
            i = int(bad[0])
            col = self._column_number(var)
            raise self.fail(
                i,
                f"expected a finite number in field {col} ({var.name}), got {str(s[i])!r}",
                field=col,
            )
        return x

    def _column_number(self, var: Variable) -> int:
        return list(self.fields).index(var.name.lower()) + 1


#: what a number field may hold: Python's float() also takes "1_000" and non-ASCII digits
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|nan", re.ASCII)


def _floats(text: np.ndarray) -> np.ndarray:
    """Numbers of a str array; NaN where a field is not a plain decimal number."""
    try:
        if (np.char.find(text, "_") >= 0).any():
            raise ValueError("not a plain number")
        return text.astype(np.bytes_).astype(np.float64)  # non-ASCII: UnicodeEncodeError
    except ValueError:  # some field is not a number: find which, one by one (rare path)
        return np.array([float(v) if _NUMBER.fullmatch(v) else np.nan for v in text.tolist()])


def _dimension(
    var: Variable, meta: Metadata, cols: _Columns, log: list[str]
) -> tuple[CodeList, np.ndarray]:
    """CodeList of one explanatory variable and the node index of every line."""
    s = cols.text(var)
    uniq, inverse = np.unique(s, return_inverse=True)
    uniq = uniq.tolist()
    total = var.total_code.strip()
    is_total = [u == "" or u == total or u == var.total_code for u in uniq]
    if var.hierarchical and var.hier_file is not None:
        cl = codelist_for(var, meta, None, log)
        width = max((len(c) for c in cl.codes[1:]), default=0)
        lookup: dict[str, int] = {}
        for i, c in enumerate(cl.codes[1:], start=1):
            if c in lookup:
                log.append(
                    f"warning: {var.name}: code {c!r} names several hierarchy nodes; tabular "
                    "lines use the first"
                )
                continue
            lookup[c] = i
        mapped = []
        for u, tot in zip(uniq, is_total, strict=True):
            if tot:
                mapped.append(0)
            elif u in lookup:
                mapped.append(lookup[u])
            elif u.rjust(width) in lookup:
                mapped.append(lookup[u.rjust(width)])
            else:
                mapped.append(-1)
    else:
        if var.uses_levels:
            codes = [u for u, tot in zip(uniq, is_total, strict=True) if not tot]
        else:
            width = max(
                (len(u) for u, tot in zip(uniq, is_total, strict=True) if not tot), default=0
            )
            width = max([width, *(len(m) for m in var.missing)])
            uniq = np.array([u.rjust(width) for u in uniq], dtype=object)
            codes = [u for u, tot in zip(uniq, is_total, strict=True) if not tot]
            var_missing = [m.rjust(width) for m in var.missing]
            if var_missing != var.missing:
                var = _with_missing(var, var_missing)
        cl = codelist_for(var, meta, codes, log)
        index = {c: i for i, c in enumerate(cl.codes)}
        mapped = [0 if tot else index.get(u, -1) for u, tot in zip(uniq, is_total, strict=True)]
    node = np.asarray(mapped, dtype=np.int64)[inverse] if len(uniq) else np.zeros(0, np.int64)
    bad = np.flatnonzero(node < 0)
    if bad.size:
        i = int(bad[0])
        raise cols.fail(
            i,
            f"code {str(s[i])!r} of {var.name} is not a node of its hierarchy "
            f"({var.hier_file or 'digit levels'})",
        )
    return cl, node


def _with_missing(var: Variable, missing: list[str]) -> Variable:
    from dataclasses import replace

    return replace(var, missing=missing)


def _status_column(meta: Metadata, cols: _Columns) -> np.ndarray | None:
    var = meta.status
    if var is None:
        return None
    uniq, inverse = np.unique(np.char.upper(cols.text(var)), return_inverse=True)
    table = {
        "": 14,
        "E": 14,
        "M": 11,
        meta.protect_code.strip().upper(): 10,
        meta.unsafe_code.strip().upper(): 9,
        meta.safe_code.strip().upper(): 2,
    }
    st = np.array([table.get(u, -1) for u in uniq.tolist()], dtype=np.int64)[inverse]
    bad = np.flatnonzero(st < 0)
    if bad.size:
        i = int(bad[0])
        raise cols.fail(
            i,
            f"expected a status {meta.safe_code} (safe), {meta.unsafe_code} (unsafe), "
            f"{meta.protect_code} (protected), M (secondary) or E (empty) in column "
            f"{cols._column_number(var)}, got {str(cols.text(var)[i])!r}",
        )
    return st


def _role_column(meta: Metadata, role: str) -> Variable | None:
    return meta.tabular_column(role)


def read_tab(
    meta: Metadata,
    path: str | Path,
    spec: TableSpec,
    totals_mode: int = 0,
    keep_status: bool = False,
    log: list[str] | None = None,
) -> Table:
    """Read a `.tab` file into a Table; statuses from the rules or (no rules) from the file."""
    path = Path(path)
    log = log if log is not None else []
    if totals_mode not in (0, 1, 2):
        raise SpecificationError(f"expected totals mode 0, 1 or 2, got {totals_mode}")
    if not 1 <= len(spec.explanatory) <= 4:
        raise SpecificationError(
            f"a table needs 1 to 4 explanatory variables, got {len(spec.explanatory)}"
        )
    cols = _Columns(meta, path)
    dims, cell = _line_cells(meta, spec, cols, path, log)
    lines = _numeric_columns(meta, spec, cols)
    active = (cell >= 0) & _apply_line_rules(cols, lines, spec.rules, meta, path, log)
    a, top_d, st, given = _dense_cells(cols, dims, cell, lines, active)
    if totals_mode == 1:
        _recompute_totals(dims, a, top_d, st, given, keep_status, spec.rules.has_sensitivity_rules)
    elif totals_mode == 0:
        n_cells = a["value"].size
        line_of_cell = np.zeros(n_cells, dtype=np.int64)
        line_of_cell[cell[cell >= 0]] = cols.lineno[cell >= 0]
        _check_additivity(dims, a["value"], lines.decimals, path, log, line_of_cell)
    table = _rules_and_costs(meta, spec, path, dims, a, top_d, st, lines)
    shape = tuple(len(d) for d in dims)
    log.append(
        f"{path.name}: {int(active.sum())} cells read, {table.n_cells} cells in the table "
        f"({' × '.join(str(s) for s in shape)})"
    )
    return table


def _line_cells(
    meta: Metadata, spec: TableSpec, cols: _Columns, path: Path, log: list[str]
) -> tuple[list[CodeList], np.ndarray]:
    """The table's dimensions and each line's cell index (-1: a line not in the table)."""
    n = cols.n
    dims: list[CodeList] = []
    nodes: list[np.ndarray] = []
    for name in spec.explanatory:
        var = meta.variable(name)
        if not var.recodeable:
            raise SpecificationError(f"{var.name} is not an explanatory (<RECODEABLE>) variable")
        cl, node = _dimension(var, meta, cols, log)
        dims.append(cl)
        nodes.append(node)
    for v in meta.explanatory:
        if v.name.lower() not in {e.lower() for e in spec.explanatory}:
            keep = np.isin(cols.text(v), ["", v.total_code.strip(), v.total_code])
            if not keep.all():
                log.append(
                    f"warning: {path.name}: {int((~keep).sum())} line(s) with a code of {v.name} "
                    "other than its total are ignored (the variable is not in the table)"
                )
            for k in range(len(nodes)):
                nodes[k] = np.where(keep, nodes[k], -1)
    shape = tuple(len(d) for d in dims)
    used = nodes[0] >= 0
    cell = np.full(n, -1, dtype=np.int64)
    if n:
        cell[used] = np.ravel_multi_index(tuple(nd[used] for nd in nodes), shape)
    return dims, cell


@dataclass
class _Lines:
    """The numeric columns of the lines, as read and then as the rules of
    argusqt/docs/formats.md §3.2 leave them."""

    resp: np.ndarray
    freq: np.ndarray
    status: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    shadow: np.ndarray
    cost: np.ndarray
    top: np.ndarray
    resp_var: Variable | None
    freq_var: Variable | None
    decimals: int


def _numeric_columns(meta: Metadata, spec: TableSpec, cols: _Columns) -> _Lines:
    """Response, frequency, status, levels, shadow, cost and top-n of every line, checked."""
    n = cols.n
    resp_var = meta.variable(spec.response) if spec.response is not None else None
    freq_var = meta.frequency
    if resp_var is None and freq_var is None:
        raise SpecificationError("a frequency table needs a <FREQUENCY> column", file=meta.path)
    freq = cols.number(freq_var) if freq_var is not None else np.full(n, np.nan)
    resp = cols.number(resp_var) if resp_var is not None else freq.copy()
    decimals = int(resp_var.decimals) if resp_var is not None else 0
    status = _status_column(meta, cols)
    if status is None:
        status = np.where(np.isnan(resp), Status.EMPTY, Status.SAFE)
    lo_var, up_var = _role_column(meta, "lowerpl"), _role_column(meta, "upperpl")
    lower = cols.number(lo_var) if lo_var is not None else np.full(n, np.nan)
    upper = cols.number(up_var) if up_var is not None else np.full(n, np.nan)
    shadow_var = meta.variable(spec.shadow) if spec.shadow is not None else resp_var
    shadow = cols.number(shadow_var) if shadow_var is not None else resp.copy()
    cost_name = spec.cost.variable
    cost_var = meta.variable(cost_name) if cost_name is not None else _role_column(meta, "cost")
    if cost_var is not None and cost_var.tabular_role == "cost":
        cost = cols.number(cost_var)
    elif cost_var is not None and cost_var is not resp_var:
        cost = np.abs(cols.number(cost_var))
    else:
        cost = np.full(n, np.nan)
    if freq_var is not None:
        _refuse(cols, freq < 0, f"expected a frequency ≥ 0 in {freq_var.name}", freq_var)
    for role_var in (v for v in meta.variables if v.tabular_role == "cost"):
        own = cost if role_var is cost_var else cols.number(role_var)
        _refuse(cols, own < 0, f"expected a cost ≥ 0 in {role_var.name}", role_var)
    for arr, col_var in (
        (resp, resp_var),
        (freq, freq_var),
        (shadow, shadow_var),
        (cost, cost_var),
    ):
        _check_sum_finite(cols, arr, col_var)
    top_vars = meta.maxscore
    top = np.zeros((n, len(top_vars)))
    for k, v in enumerate(top_vars):
        x = cols.number(v)
        top[:, k] = np.where(np.isnan(x), 0.0, x)
    return _Lines(resp, freq, status, lower, upper, shadow, cost, top, resp_var, freq_var, decimals)


def _apply_line_rules(
    cols: _Columns, lines: _Lines, rules: SafetyRules, meta: Metadata, path: Path, log: list[str]
) -> np.ndarray:
    """argusqt/docs/formats.md §3.2 rules 1–11 in order, on `lines` in place; returns the
    lines that make a cell (a response, not both response and frequency zero)."""
    resp, freq, status, top = lines.resp, lines.freq, lines.status, lines.top
    lower, upper, shadow, cost = lines.lower, lines.upper, lines.shadow, lines.cost
    has_resp = ~np.isnan(resp)
    has_freq = ~np.isnan(freq)
    no_both = ~has_resp & ~has_freq  # 1
    safe_like = (
        (status == Status.SAFE_MANUAL) | (status == Status.PROTECTED) | (status == Status.EMPTY)
    )
    _refuse(cols, no_both & ~safe_like, "a line without response and frequency must be empty")
    status = np.where(no_both, Status.EMPTY, status)
    if lines.resp_var is not None:  # 2
        _refuse(cols, has_freq & ~has_resp, "a frequency is given but the response is empty")
    _refuse(
        cols, has_resp & (resp != 0) & has_freq & (freq == 0), "non-zero response with frequency 0"
    )  # 3
    fill = has_resp & ~has_freq  # 4
    if fill.any():
        log.append(
            f"{path.name}: no frequency given for {int(fill.sum())} cells; frequency set to 1"
        )
    freq = np.where(fill, 1.0, freq)
    status = np.where(~has_resp, Status.EMPTY, status)  # 5
    if meta.status is not None:  # 6
        _refuse(
            cols,
            has_resp & (resp != 0) & (freq != 0) & (status == Status.EMPTY),
            "a cell with a non-zero response and frequency cannot have the status empty",
        )
    absr = np.abs(np.where(has_resp, resp, 0.0))  # 7
    man = np.minimum(absr * rules.manual_margin / 100.0, absr)
    lower = np.where(status == Status.UNSAFE_MANUAL, np.where(np.isnan(lower), man, lower), 0.0)
    upper = np.where(status == Status.UNSAFE_MANUAL, np.where(np.isnan(upper), man, upper), 0.0)
    shadow = np.where(np.isnan(shadow), resp, shadow)  # 8
    cost = np.where(np.isnan(cost), absr, cost)
    _refuse(cols, has_resp & (cost < 0), "expected a cost ≥ 0")
    cost = np.where(cost == 0, 0.0001, cost)
    if top.shape[1]:  # 9
        dec = (np.diff(top, axis=1) > 0).any(axis=1)
        _refuse(cols, np.asarray(dec), "the top-n contributions must not increase")
        over = top.sum(axis=1) - absr > TOP_TOL * np.maximum(1.0, absr)
        if lines.resp_var is not None:  # a frequency table's "response" is the count
            _refuse(cols, has_resp & over, "the top-n contributions sum to more than the response")
    skip = has_resp & (resp == 0) & (freq == 0)  # 10
    freq = np.where(has_resp & ~skip, np.maximum(freq, 1.0), 0.0)  # 11
    lines.freq, lines.status, lines.lower, lines.upper = freq, status, lower, upper
    lines.shadow, lines.cost = shadow, cost
    return has_resp & ~skip


def _dense_cells(
    cols: _Columns, dims: list[CodeList], cell: np.ndarray, lines: _Lines, active: np.ndarray
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """The lines as dense per-cell arrays (a cell given twice is refused), the top-n, the
    statuses and which cells the file gave."""
    shape = tuple(len(d) for d in dims)
    n_cells = int(np.prod(shape))
    c_act = cell[cell >= 0]
    order = np.argsort(c_act, kind="stable")
    srt = c_act[order]
    dup = np.flatnonzero(srt[1:] == srt[:-1])
    if dup.size:
        rows = np.flatnonzero(cell >= 0)
        first, second = rows[order[dup[0]]], rows[order[dup[0] + 1]]
        codes = ", ".join(
            d.codes[i] for d, i in zip(dims, np.unravel_index(srt[dup[0]], shape), strict=True)
        )
        raise cols.fail(
            int(second), f"cell ({codes}) is given twice (first on line {int(cols.lineno[first])})"
        )
    given = np.zeros(n_cells, dtype=bool)
    given[cell[cell >= 0]] = True
    k = lines.top.shape[1]
    a = {
        "value": np.zeros(n_cells),
        "freq": np.zeros(n_cells),
        "shadow": np.zeros(n_cells),
        "cost": np.zeros(n_cells),
        "lpl": np.zeros(n_cells),
        "upl": np.zeros(n_cells),
    }
    top_d = np.zeros((n_cells, k))
    st = np.full(n_cells, Status.EMPTY, dtype=np.int8)
    ci = cell[active]
    for key, src in (
        ("value", lines.resp),
        ("freq", lines.freq),
        ("shadow", lines.shadow),
        ("cost", lines.cost),
        ("lpl", lines.lower),
        ("upl", lines.upper),
    ):
        a[key][ci] = src[active]
    top_d[ci] = lines.top[active]
    st[ci] = lines.status[active]
    return a, top_d, st, given


def _rules_and_costs(
    meta: Metadata,
    spec: TableSpec,
    path: Path,
    dims: list[CodeList],
    a: dict[str, np.ndarray],
    top_d: np.ndarray,
    st: np.ndarray,
    lines: _Lines,
) -> Table:
    """The Table, its statuses from the rules (or the file's levels when there are none)
    and its costs."""
    table = Table(
        spec=spec,
        dims=dims,
        value=a["value"],
        freq=a["freq"],
        shadow=a["shadow"],
        cost_raw=a["cost"],
        top=top_d,
        decimals=lines.decimals,
        status=st,
        lpl=a["lpl"],
        upl=a["upl"],
        name=path.stem,
    )
    rules = spec.rules
    if rules.has_sensitivity_rules:
        if rules.freq_individual and lines.freq_var is None:
            raise SpecificationError(
                "the FREQ rule needs a <FREQUENCY> column in the tabular metadata", file=meta.path
            )
        apply_rules(table)  # argusqt/docs/formats.md §3.2 rule 12: given statuses are recomputed
    else:
        _given_levels(table)
    distances = [meta.variable(e).distance for e in spec.explanatory]
    compute_cost(table, distances if spec.cost.kind == "distance" else None)
    return table


def _check_sum_finite(cols: _Columns, values: np.ndarray, var: Variable | None) -> None:
    """Totals and relations add these numbers up: their sum must stay a finite number."""
    if var is None:
        return
    a = np.abs(np.nan_to_num(values, nan=0.0))
    with np.errstate(over="ignore"):
        if np.isfinite(a.sum()):
            return
    i = int(np.argmax(a))
    raise cols.fail(
        i,
        f"the values of {var.name} are too large to add up: their sum is beyond the largest "
        f"number a computer can hold (about 1.8e308); the largest, {values[i]:g}, is here. "
        "Rescale the column (e.g. thousands)",
        field=cols._column_number(var),
    )


def _refuse(cols: _Columns, bad: np.ndarray, message: str, var: Variable | None = None) -> None:
    idx = np.flatnonzero(bad)
    if idx.size:
        more = f" ({idx.size} lines)" if idx.size > 1 else ""
        field = cols._column_number(var) if var is not None else None
        raise cols.fail(int(idx[0]), message + more, field=field)


def _given_levels(table: Table) -> None:
    """ "Use given status": safe cells get MinPL, empty 0, status-9 levels as read."""
    s = table.status
    prim = is_primary(s)
    minpl = table.min_protection
    table.lpl = np.where(prim, table.lpl, np.where(s == Status.EMPTY, 0.0, minpl))
    table.upl = np.where(prim, table.upl, np.where(s == Status.EMPTY, 0.0, minpl))


def _ancestor_pairs(dims: list[CodeList], leaf_cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cell, item) pairs: every cell above each most-detailed cell (product of ancestor chains)."""
    shape = tuple(len(d) for d in dims)
    nodes = np.unravel_index(leaf_cells, shape)
    items = np.arange(leaf_cells.size)
    partial = np.zeros(leaf_cells.size, dtype=np.int64)
    for d, cl in enumerate(dims):
        stride = int(np.prod(shape[d + 1 :]))
        chains = cl.ancestors
        lens = np.array([len(c) for c in chains], dtype=np.int64)
        flat = np.concatenate([np.asarray(c, dtype=np.int64) for c in chains])
        starts = np.r_[0, np.cumsum(lens)[:-1]]
        nd = nodes[d][items]
        reps = lens[nd]
        items = np.repeat(items, reps)
        partial = np.repeat(partial, reps)
        offs = np.arange(items.size) - np.repeat(np.cumsum(reps) - reps, reps)
        partial = partial + flat[np.repeat(starts[nd], reps) + offs] * stride
    return partial, items


def _recompute_totals(dims, a, top_d, st, given_status, keep_status, rules_active) -> None:
    """`<READTABLE> 1`: every non-detailed cell := the sum of the detailed cells below it."""
    shape = tuple(len(d) for d in dims)
    n_cells = int(np.prod(shape))
    leaf = np.ones(shape, dtype=bool)
    for axis, d in enumerate(dims):
        sh = [1] * len(dims)
        sh[axis] = len(d)
        leaf = leaf & d.is_leaf.reshape(sh)
    leaf = leaf.ravel()
    leaf_cells = np.flatnonzero(leaf)
    cells, items = _ancestor_pairs(dims, leaf_cells)
    src = leaf_cells[items]
    for key in ("value", "freq", "shadow", "cost"):
        summed = np.bincount(cells, weights=a[key][src], minlength=n_cells)
        a[key][~leaf] = summed[~leaf]
    k = top_d.shape[1]
    if k:
        # lazy: tabulating (a table file's batch never tabulates microdata; D-111)
        from argusqt.model.tabulate import top_k_by_group

        t = top_k_by_group(np.repeat(cells, k), top_d[src].ravel(), n_cells, k)
        top_d[~leaf] = t[~leaf]
    tot = ~leaf
    computed = np.where(a["freq"] > 0, Status.SAFE, Status.EMPTY).astype(np.int8)
    keep = (
        tot & given_status & (st != Status.EMPTY) & (a["freq"] > 0)
        if keep_status
        else np.zeros_like(tot)
    )
    new = np.where(keep, st, computed)
    st[tot] = new[tot]
    a["lpl"][tot & ~keep] = 0.0
    a["upl"][tot & ~keep] = 0.0


def _check_additivity(
    dims, value, decimals: int, path: Path, log: list[str], line_of_cell: np.ndarray | None = None
) -> None:
    """`<READTABLE> 0`: every relation must hold within 0.5·10^-d; list the failing ones."""
    rel = build_relations_small(dims)
    if rel.shape[0] == 0:
        return
    r = rel @ value
    tol = 0.5 * 10.0 ** (-decimals)
    bad = np.flatnonzero(np.abs(r) > tol * (1 + 1e-9))
    if not bad.size:
        return
    shape = tuple(len(d) for d in dims)
    msgs = []
    lines: list[int] = []  # file lines of the failing totals, for the error's position
    coo = rel.tocsr()
    for row in bad[:MAX_REPORTED_RELATIONS]:
        lo, hi = coo.indptr[row], coo.indptr[row + 1]
        cols_, vals = coo.indices[lo:hi], coo.data[lo:hi]
        parent = int(cols_[vals < 0][0])
        codes = ", ".join(
            d.codes[i] for d, i in zip(dims, np.unravel_index(parent, shape), strict=True)
        )
        total = value[parent]
        on = ""
        if line_of_cell is not None and line_of_cell[parent] > 0:
            lines.append(int(line_of_cell[parent]))
            on = f" on line {lines[-1]}"
        msgs.append(
            f"cell ({codes}) = {total:.{decimals}f}{on} but its parts sum to "
            f"{total + r[row]:.{decimals}f}"
        )
    log.extend(msgs)
    more = f" (and {bad.size - len(msgs)} more)" if bad.size > len(msgs) else ""
    first = min(lines) if lines else None
    raise InputError(
        f"the table is not additive: {len(bad)} relation(s) fail: "
        + "; ".join(msgs)
        + more
        + " — read it with totals mode 1 (recompute) or 2 (accept): <READTABLE> 1 in a batch "
        "file, Totals in File | Open table",
        file=path,
        line=first,
    )
