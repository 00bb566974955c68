"""Intermediate file (type 5) + companion `.rda`: a table argusqt and τ-Argus can read back
(argusqt/docs/formats.md §10.6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argusqt.errors import SpecificationError
from argusqt.export.codevalue import (
    code_columns,
    fmt_ints,
    fmt_numbers,
    join_columns,
    published_values,
    quote_code,
)
from argusqt.export.gate import CONFIDENTIAL_BANNER
from argusqt.io.atomic import atomic_write_set
from argusqt.io.textcells import neutralise
from argusqt.model.codelist import CodeList
from argusqt.model.status import INTERMEDIATE_LETTER, Status, is_suppressed
from argusqt.model.table import Table

_LETTERS = np.array([INTERMEDIATE_LETTER.get(s, "S") for s in range(16)])


def _top(table: Table, holdings: bool) -> np.ndarray:
    top = table.htop if holdings and table.htop is not None else table.top
    if top is None or np.ndim(top) != 2:
        return np.zeros((table.n_cells, 0))
    return np.asarray(top, dtype=float)


def _audit_columns(table: Table) -> list[np.ndarray]:
    """realisedLower;realisedUpper;width;%lower;%upper;%width from `table.audit` if stored."""
    d = table.decimals
    value = np.asarray(table.value, dtype=float)
    status = np.asarray(table.status, dtype=np.int64)
    suppressed = is_suppressed(status)
    audit = table.audit
    if audit is not None:
        lo = np.where(audit.audited, audit.lower, value)
        hi = np.where(audit.audited, audit.upper, value)
        known = np.ones(table.n_cells, dtype=bool)
    else:  # no audit: only published cells have a known interval (the value itself)
        lo = hi = value
        known = ~suppressed
    width = hi - lo
    base = np.where(value == 0, 1.0, np.abs(value))
    pct = [100.0 * (value - lo) / base, 100.0 * (hi - value) / base, 100.0 * width / base]
    plain = ~suppressed | (value == 0)
    cols = [fmt_numbers(lo, d), fmt_numbers(hi, d), fmt_numbers(width, d)]
    for p in pct:
        cols.append(np.where(plain, "0", fmt_numbers(p, 2)))
    return [np.where(known, c, "") for c in cols]


def intermediate_lines(
    table: Table,
    *,
    quotes: bool = True,
    suppress_empty: bool = False,
    status_only: bool = False,
    holdings: bool = False,
    audit: bool = False,
    tau_exact: bool = False,
) -> list[str]:
    """Cell lines `codes;value;[freq;][shadow;]cost;[tops;]status;lpl;upl[;audit]`."""
    d = table.decimals
    status = np.asarray(table.status, dtype=np.int64)
    empty = status == Status.EMPTY
    use_h = holdings and table.hfreq is not None
    cols = code_columns(table, quotes, tau_exact=tau_exact)
    # rounded / adjusted tables: the published value (an argusqt extension,
    # argusqt/docs/formats.md §8.7)
    cols.append(fmt_numbers(table.value if table.published is None else published_values(table), d))
    if not table.spec.is_frequency:
        freq = table.hfreq if use_h else table.freq
        cols.append(fmt_ints(np.rint(np.asarray(freq, dtype=float))))
    if not status_only:
        cols.append(fmt_numbers(table.shadow, d))
    cols.append(fmt_numbers(table.cost, d))
    if not status_only:
        top = _top(table, use_h)
        cols.extend(fmt_numbers(top[:, j], d) for j in range(top.shape[1]))
    cols.append(_LETTERS[status])
    from argusqt.protection.core.problem import protected_levels  # lazy: D-78's start-up

    minimum = 10.0 ** (-d)
    for pl in protected_levels(table):  # the levels protected: a count's end at its floor
        cols.append(fmt_numbers(np.where(empty, 0.0, np.where(pl == 0, minimum, pl)), d))
    if audit:
        cols.extend(_audit_columns(table))
    body = join_columns(cols, ";")
    if suppress_empty:
        body = body[np.asarray(table.freq) != 0]
    return body.tolist()


def _hrc_text(dim: CodeList, tau_exact: bool = False) -> str:
    """The hierarchy of a dimension as an `.hrc` with lead string `@` (missing codes left out;
    codes written as in the table file)."""
    depth = dim.depth
    lines = [
        "@" * (int(depth[i]) - 1) + (dim.codes[i] if tau_exact else neutralise(dim.codes[i]))
        for i in range(1, len(dim))
        if not dim.is_missing[i]
    ]
    return "".join(line + "\n" for line in lines)


def companion_rda_text(
    table: Table,
    base: Path,
    *,
    status_only: bool = False,
    holdings: bool = False,
    audit: bool = False,
    tau_exact: bool = False,
) -> tuple[str, dict[Path, str]]:
    """The `.rda` text and any `.hrc` files it names (written next to it)."""
    out = ['<SEPARATOR> ";"', '<SAFE> "S"', '<UNSAFE> "U"', '<PROTECT> "P"']
    extra: dict[Path, str] = {}
    for dim in table.dims:
        missing = [c for c, m in zip(dim.codes, dim.is_missing, strict=True) if m]
        missing_codes = (quote_code(m, True, tau_exact=tau_exact) for m in missing[:2])
        out.append(" ".join([dim.name, *missing_codes]))
        out += [
            "    <RECODEABLE>",
            f"    <TOTCODE> {quote_code(dim.total_code, True, tau_exact=tau_exact)}",
        ]
        if dim.hierarchical:
            hrc = base.with_name(f"{base.stem}_{dim.name}.hrc")
            extra[hrc] = _hrc_text(dim, tau_exact)
            out += [
                "    <HIERARCHICAL>",
                f'    <HIERCODELIST> "{hrc.name}"',
                '    <HIERLEADSTRING> "@"',
            ]
    spec = table.spec
    resp = spec.response if spec.response is not None else "Freq"
    out += [resp, "    <NUMERIC>", f"    <DECIMALS> {table.decimals}"]
    if not spec.is_frequency:
        out += ["FreqVar", "    <FREQUENCY>"]
    if not status_only:
        out += [f"{resp}_Shadow", "    <NUMERIC> <SHADOW>"]
    kind = spec.cost.kind
    if kind == "frequency":
        cost_name = "FreqCost"
    elif kind == "unity":
        cost_name = "UnitCost"
    elif kind == "distance":
        cost_name = "DistCost"
    else:
        cost_name = spec.cost.variable or f"{resp}_Cost"
        if cost_name == resp:
            cost_name = f"{resp}_Cost"
    out += [cost_name, "    <NUMERIC> <COSTVAR>"]
    if not status_only:
        n_top = _top(table, holdings and table.hfreq is not None).shape[1]
        for j in range(n_top):
            out += [f"Top{j + 1}", "    <MAXSCORE>"]
    out += [
        "StatusVar",
        "    <STATUS>",
        "LowerProtLevel",
        "    <NUMERIC> <LOWERPL>",
        "UpperProtLevel",
        "    <NUMERIC> <UPPERPL>",
    ]
    if audit:
        out += [
            "// realisedLower",
            "// realisedUpper",
            "// realisedWidth",
            "// percentLower",
            "// percentUpper",
            "// percentWidth",
        ]
    return "".join(line + "\n" for line in out), extra


def write_intermediate(
    table: Table,
    path: str | Path,
    *,
    quotes: bool = True,
    suppress_empty: bool = False,
    status_only: bool = False,
    holdings: bool = False,
    audit: bool = False,
    tau_exact: bool = False,
) -> Path:
    """Write the table file, its companion `.rda` (same base name) and `.hrc` files as one set
    (a crash leaves the old set or the new one); returns the `.rda` path.

    The table file and the `.rda` start with a `//` comment line saying CONFIDENTIAL (the
    .tab/.rda readers of argusqt and τ-Argus skip comment lines)."""
    path = Path(path)
    lines = intermediate_lines(
        table,
        quotes=quotes,
        suppress_empty=suppress_empty,
        status_only=status_only,
        holdings=holdings,
        audit=audit,
        tau_exact=tau_exact,
    )
    rda_path = path.with_suffix(".rda")
    if rda_path == path:
        raise SpecificationError(
            f"{path}: the intermediate table file needs a name other than its .rda "
            "(for example .tab)"
        )
    rda, extra = companion_rda_text(
        table,
        rda_path,
        status_only=status_only,
        holdings=holdings,
        audit=audit,
        tau_exact=tau_exact,
    )
    # statuses and true values of suppressed cells: say so where readers allow a comment
    from argusqt.export.causes import cause_lines

    banner = f"// {CONFIDENTIAL_BANNER}\n"
    causes = "".join(f"// {line}\n" for line in cause_lines(table))  # comments for readers
    files: dict[Path, bytes] = {hrc: text.encode("utf-8") for hrc, text in extra.items()}
    files[path] = (banner + causes + "".join(line + "\n" for line in lines)).encode("utf-8")
    files[rda_path] = (banner + rda).encode("utf-8")
    atomic_write_set(files)
    return rda_path
