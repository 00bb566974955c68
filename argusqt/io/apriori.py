"""A-priori files (`.hst`, argusqt/docs/formats.md §7): status, cost and protection-level changes
per cell."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import field
from pathlib import Path

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import InputError
from argusqt.io.confidential import comment_banner
from argusqt.io.text import control_char_at, decode_bytes, read_text_bytes
from argusqt.io.textcells import TEXT_PREFIX, formula_like, neutralise
from argusqt.model.table import Table
from argusqt.rules import changes

SIMPLE_ACTIONS = ("S", "U", "P", "M", "ML")
#: number of values that follow each action
N_VALUES = {"S": 0, "U": 0, "P": 0, "M": 0, "ML": 0, "C": 1, "W": 1, "PL": 2, "AB": 2}


@dataclass(frozen=True)
class AprioriLine:
    """One line: trimmed codes (empty = total), upper-case action and its numbers."""

    line: int
    codes: tuple[str, ...]
    action: str
    values: tuple[float, ...] = ()


@dataclass
class AprioriReport:
    """Accepted/rejected lines per action and the error messages (file, line, reason)."""

    accepted: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    cells_changed: int = 0

    @property
    def n_accepted(self) -> int:
        return sum(self.accepted.values())

    @property
    def n_rejected(self) -> int:
        return sum(self.rejected.values())

    def lines(self) -> list[str]:
        """Report text: one line per action, then the rejected lines as warnings (they were
        skipped: "ignore errors" is τ-Argus's default for a-priori files)."""
        out = []
        for a in sorted(set(self.accepted) | set(self.rejected)):
            out.append(f"{a}: {self.accepted[a]} accepted, {self.rejected[a]} rejected")
        if not self.accepted and not self.rejected:
            out.append("warning: the a-priori file has no lines; nothing was changed")
        return out + [f"warning: {e} (line ignored)" for e in self.errors]


def _read_text(path: Path) -> str:
    return decode_bytes(read_text_bytes(path, "a-priori file"))


def split_fields(text: str, sep: str) -> list[str]:
    """Split on `sep` outside double quotes; trim each field and drop its quotes."""
    fields: list[str] = []
    cur: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            quoted = not quoted
            i += 1
        elif not quoted and text.startswith(sep, i):
            fields.append("".join(cur).strip())
            cur = []
            i += len(sep)
        else:
            cur.append(ch)
            i += 1
    fields.append("".join(cur).strip())
    return fields


def _parse_line(fields: list[str], n_dims: int | None) -> tuple[list[str], str, list[str]]:
    """Codes, action, value fields; without n_dims the action is found from the end."""
    while len(fields) > 1 and fields[-1] == "":
        fields = fields[:-1]
    if n_dims is None:
        for k in (1, 2, 3):
            if len(fields) > k and N_VALUES.get(fields[-k].upper()) == k - 1:
                n_dims = len(fields) - k
                break
        else:
            raise ValueError("expected an action (S, U, P, M, ML, C, W or PL) at the end")
    if len(fields) <= n_dims:
        raise ValueError(f"expected {n_dims} codes and an action, got {len(fields)} fields")
    action = fields[n_dims].upper()
    if action not in N_VALUES:
        raise ValueError(
            f"expected an action S, U, P, M, ML, C, W or PL after {n_dims} codes, got "
            f"{fields[n_dims]!r}"
        )
    values = fields[n_dims + 1 :]
    if len(values) != N_VALUES[action]:
        raise ValueError(f"action {action} expects {N_VALUES[action]} number(s), got {len(values)}")
    return fields[:n_dims], action, values


def read_apriori(
    path: str | Path,
    sep: str = ",",
    n_dims: int | None = None,
    errors: list[InputError] | None = None,
) -> list[AprioriLine]:
    """Lines of an a-priori file; bad lines raise InputError, or go to `errors` when given."""
    path = Path(path)
    if not sep:
        raise InputError("expected a non-empty separator for the a-priori file", file=path)
    out: list[AprioriLine] = []
    first = True
    for no, raw in enumerate(_read_text(path).splitlines(), start=1):
        text = raw.replace("\t", " ").strip()
        if not text or text.startswith("//"):
            continue
        if first and sep not in text:
            raise InputError(
                f"expected the separator {sep!r} on the first line, got {text!r}",
                file=path,
                line=no,
            )
        first = False
        try:
            bad = control_char_at(text)
            if bad is not None:
                raise ValueError(f"unexpected control character 0x{ord(text[bad]):02X}")
            codes, action, vals = _parse_line(split_fields(text, sep), n_dims)
            nums = []
            for v in vals:
                try:
                    x = float(v)
                except ValueError:
                    raise ValueError(f"expected a number after {action}, got {v!r}") from None
                if not math.isfinite(x):
                    raise ValueError(f"expected a finite number after {action}, got {v!r}")
                nums.append(x)
            if action == "AB":
                raise ValueError("action AB (a-priori bounds) is not implemented")
            out.append(AprioriLine(no, tuple(read_code(c) for c in codes), action, tuple(nums)))
        except ValueError as exc:
            err = InputError(str(exc), file=path, line=no)
            if errors is None:
                raise err from None
            errors.append(err)
            out.append(AprioriLine(no, (), "?"))
    return out


def _code_maps(table: Table) -> list[dict[str, list[int]]]:
    """Per dimension: trimmed code → node indices ('' and the total code → 0)."""
    maps = []
    for d in table.dims:
        m: dict[str, list[int]] = {}
        for i, c in enumerate(d.codes):
            m.setdefault(c.strip(), []).append(i)
        m[""] = [0]
        m[d.total_code.strip()] = [0]
        maps.append(m)
    return maps


def _cells_of(table: Table, maps, line: AprioriLine, expand: bool) -> np.ndarray:
    nodes = []
    for d, (m, code) in enumerate(zip(maps, line.codes, strict=True)):
        if code not in m:
            raise ValueError(f"code {code!r} is not a code of {table.dims[d].name}")
        nodes.append(m[code])
    cells = {table.cell_index(c) for c in itertools.product(*nodes)}
    if expand:
        cells = {e for c in cells for e in changes.trivial_equivalents(table, c)}
    return np.array(sorted(cells), dtype=np.int64)


def _apply_line(table: Table, cells: np.ndarray, line: AprioriLine) -> int:
    a, v = line.action, line.values
    if a == "S":
        return changes.set_safe(table, cells)
    if a == "U":
        return changes.set_unsafe(table, cells)
    if a == "P":
        return changes.set_protected(table, cells)
    if a in ("M", "ML"):
        return changes.set_secondary(table, cells, manual=(a == "M"))
    if a in ("C", "W"):
        if v[0] < 0:
            raise ValueError(f"expected a cost ≥ 0, got {v[0]:g}")
        return changes.set_cost(table, cells, v[0])
    return changes.set_protection_levels(table, cells, v[0], v[1])  # PL


def apply_apriori(
    table,
    path: str | Path,
    sep: str = ",",
    ignore_errors: bool = True,
    expand_trivial: bool = False,
) -> AprioriReport:
    """Apply an a-priori file; with ignore_errors=False the first error raises and undoes all."""
    path = Path(path)
    report = AprioriReport()
    parse_errors: list[InputError] = []
    lines = read_apriori(path, sep, table.ndim, None if not ignore_errors else parse_errors)
    by_line = {e.line: e for e in parse_errors}
    saved = (table.status.copy(), table.lpl.copy(), table.upl.copy(), np.array(table.cost))
    maps = _code_maps(table)
    for ln in lines:
        if ln.line in by_line:
            report.rejected["?"] += 1
            report.errors.append(str(by_line[ln.line]))
            continue
        try:
            cells = _cells_of(table, maps, ln, expand_trivial)
            report.cells_changed += _apply_line(table, cells, ln)
            report.accepted[ln.action] += 1
        except (ValueError, changes.StatusChangeError) as exc:
            msg = exc.message if isinstance(exc, changes.StatusChangeError) else str(exc)
            err = InputError(msg, file=path, line=ln.line)
            if not ignore_errors:
                table.status, table.lpl, table.upl, table.cost = saved
                raise err from None
            report.rejected[ln.action] += 1
            report.errors.append(str(err))
    return report


# ---------------------------------------------------------------- generating a-priori files
#: Default status → action map of "Generate apriori" (as used for enterprise/test_3a.hst):
#: safe and protected → protect, unsafe and secondary → unsafe, empty → no line.
DEFAULT_ACTIONS: dict[int, str] = {1: "p", 2: "p", 10: "p", 13: "p"} | {
    s: "u" for s in (3, 4, 5, 6, 7, 8, 9, 11, 12)
}


#: First line of every a-priori file argusqt writes: it holds cell statuses (which cells
#: are suppressed, and by hand which are unsafe), an input for the next run, never a publication
HST_BANNER = comment_banner("cell statuses for the next protection run (a-priori file)")


def _code_field(code: str, sep: str) -> str:
    """A code as written: a formula-like code gets a `'` (read back without it), then quotes."""
    c = neutralise(code.strip())
    return f'"{c}"' if c == "" or sep in c or '"' in c else c


def read_code(code: str) -> str:
    """A code as written by `_code_field`, back as the table's code (the `'` dropped)."""
    if code.startswith(TEXT_PREFIX) and formula_like(code[len(TEXT_PREFIX) :]):
        return code[len(TEXT_PREFIX) :]
    return code


def hst_text(lines: list[str]) -> str:
    """The text of an a-priori file argusqt writes: the CONFIDENTIAL line, then the lines."""
    return HST_BANNER + "".join(ln + "\n" for ln in lines)


def apriori_lines(
    rows: list[tuple[tuple[str, ...], int]],
    actions: dict[int, str] | None = None,
    keep: list[bool] | None = None,
    sep: str = ",",
    total_codes: tuple[str, ...] = ("Total",),
) -> list[str]:
    """Lines for (codes, status) rows: dropped columns and totals become `""`; first line wins.

    An action is "s", "u", "p", "m", "ml" or "c <cost>" (written `c<sep>cost`).
    """
    actions = DEFAULT_ACTIONS if actions is None else actions
    totals = {t.strip() for t in total_codes}
    seen: set[tuple[str, ...]] = set()
    out: list[str] = []
    for codes, status in rows:
        act = actions.get(int(status))
        if not act:
            continue
        k = keep if keep is not None else [True] * len(codes)
        key = tuple(
            "" if not kp or c.strip() in totals else c.strip()
            for c, kp in zip(codes, k, strict=True)
        )
        if key in seen:
            continue
        seen.add(key)
        parts = [_code_field(c, sep) for c in key] + act.split()
        out.append(sep.join(parts))
    return out


def generate_apriori(
    source: str | Path,
    out_path: str | Path,
    actions: dict[int, str] | None = None,
    keep: list[bool] | None = None,
    sep: str = ",",
    total_codes: tuple[str, ...] = ("Total",),
) -> int:
    """Output | Generate apriori: a code-value file with status (`AS+`) → `.hst`; lines written."""
    import csv

    from argusqt.io.atomic import atomic_write_text

    source = Path(source)
    rows: list[tuple[tuple[str, ...], int]] = []
    text = _read_text(source)
    for no, rec in enumerate(csv.reader(text.splitlines()), start=1):
        if not rec or not "".join(rec).strip():
            continue
        try:
            status = int(rec[-1].strip())
        except ValueError:
            if no == 1:
                continue  # header line (FL+)
            raise InputError(
                f"expected a status number in the last column, got {rec[-1]!r}",
                file=source,
                line=no,
            ) from None
        n_codes = len(rec) - 2
        if n_codes < 1 or (keep is not None and len(keep) != n_codes):
            raise InputError(
                f"expected {len(keep) if keep else 'at least 1'} codes, a value and a status, "
                f"got {len(rec)} fields",
                file=source,
                line=no,
            )
        rows.append((tuple(rec[:n_codes]), status))
    lines = apriori_lines(rows, actions, keep, sep, total_codes)
    atomic_write_text(out_path, hst_text(lines))
    return len(lines)


def write_apriori(
    table,
    out_path: str | Path,
    actions: dict[int, str] | None = None,
    keep: list[bool] | None = None,
    sep: str = ",",
) -> int:
    """A-priori file from a table's current statuses (same rules as `generate_apriori`)."""
    from argusqt.io.atomic import atomic_write_text

    shape = table.shape
    nodes = np.unravel_index(np.arange(table.n_cells), shape)
    codes = [np.asarray(d.codes, dtype=object)[nd] for d, nd in zip(table.dims, nodes, strict=True)]
    rows = list(zip(zip(*codes, strict=True), np.asarray(table.status).tolist(), strict=True))
    totals = tuple({d.total_code for d in table.dims})
    lines = apriori_lines(rows, actions, keep, sep, totals)
    atomic_write_text(out_path, hst_text(lines))
    return len(lines)
