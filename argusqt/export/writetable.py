"""Save a table as τ-Argus output type 1–6 with a `WRITETABLE` option string
(argusqt/docs/formats.md §8.6).

Outputs for publication (CSV table, Excel workbook, pivot and code-value without `AS+`)
pass the publication gate in their writers. The others are internal, confidential files
(`is_confidential`): they hold statuses or true values of suppressed cells.
"""

from __future__ import annotations

import re
from pathlib import Path

from argusqt.errors import SpecificationError
from argusqt.model.table import Table
from argusqt.progress import CancelToken, ProgressCallback, no_progress

OPTION_NAMES = ("AR", "AS", "FL", "HI", "HL", "QU", "SE", "SO", "TR", "TA")
#: argusqt extension: `TA+` writes codes and labels exactly as τ-Argus does (byte for byte),
#: without the `'` that otherwise keeps a formula-like text from running in a spreadsheet.
TAU_EXACT = "TA"
TYPE_NAMES = {
    1: "CSV table",
    2: "CSV for pivot",
    3: "code-value",
    4: "SBS",
    5: "intermediate",
    6: "JJ",
}
_OPTION = re.compile(r"([A-Za-z]{2})([+-])")


def default_options(out_type: int) -> dict[str, bool]:
    """All options off except `QU+` and, for type 2, `FL+` (so `TA-`: formula-like texts
    neutralised)."""
    opts = dict.fromkeys(OPTION_NAMES, False)
    opts["QU"] = True
    if out_type == 2:
        opts["FL"] = True
    return opts


def parse_options(text: str, out_type: int = 3) -> dict[str, bool]:
    """`AS+FL+` → option dict over the defaults; raises SpecificationError naming the bad part."""
    opts = default_options(out_type)
    s = "".join(str(text).split())
    pos = 0
    while pos < len(s):
        m = _OPTION.match(s, pos)
        if m is None or m.group(1).upper() not in OPTION_NAMES:
            raise SpecificationError(
                f"invalid output option string {text!r} at {s[pos:]!r}: expected pairs such as "
                f"AS+ or FL- from {', '.join(OPTION_NAMES)}"
            )
        opts[m.group(1).upper()] = m.group(2) == "+"
        pos = m.end()
    return opts


def full_options(out_type: int, options: str | dict[str, bool]) -> dict[str, bool]:
    """The option dict of a WRITETABLE option string (or dict) over the type's defaults."""
    opts = parse_options(options, out_type) if isinstance(options, str) else options
    return default_options(out_type) | {k.upper(): bool(v) for k, v in opts.items()}


def is_excel(out_type: int, path: str | Path) -> bool:
    """Type 1 to a `.xlsx` name is the Excel workbook (argusqt extension)."""
    return out_type == 1 and Path(path).suffix.lower() == ".xlsx"


def is_confidential(out_type: int, options: str | dict[str, bool], path: str | Path) -> bool:
    """True for internal outputs: `AS+` (status, true values), SBS, intermediate, JJ."""
    opts = full_options(out_type, options)
    if out_type in (4, 5, 6):
        return True
    if out_type in (2, 3) or is_excel(out_type, path):
        return opts["AS"]
    return False


def check_allowed(table: Table, out_type: int) -> None:
    """Refuse the combinations τ-Argus refuses: SBS/intermediate after CTA, JJ after rounding."""
    from argusqt.export.face import protection_kind

    kind = protection_kind(table)
    if kind == "cta" and out_type in (4, 5):
        what = TYPE_NAMES[out_type]
        raise SpecificationError(
            f"{what} output (type {out_type}) is not possible after controlled tabular "
            f"adjustment (CTA): the {what} file holds the original values of the cells, "
            "which CTA replaced by adjusted values for publication (τ-Argus refuses this "
            "too). Save the adjusted table as a CSV table, pivot or code-value file, or Excel."
        )
    if kind == "round" and out_type == 6:
        raise SpecificationError(
            "JJ output (type 6) is not possible after rounding: the JJ file holds the original "
            "values and relations of the table, not the rounded ones (τ-Argus refuses this "
            "too). Save the rounded table as a CSV table, pivot or code-value file, or Excel."
        )


def write_table(
    table: Table,
    out_type: int,
    options: str | dict[str, bool],
    path: str | Path,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    *,
    tau_exact: bool = False,
) -> list[Path]:
    """Write `table` as type `out_type` (1–6) to `path`; returns the files written.

    Type 1 to a `.xlsx` name writes the published Excel workbook; with `AS+` the
    confidential workbook instead (its name gets CONFIDENTIAL). `tau_exact` (or the option
    `TA+`) writes texts exactly as τ-Argus does; by default a code or label a spreadsheet
    would run as a formula gets a `'` in front.
    """
    if out_type not in TYPE_NAMES:
        raise SpecificationError(
            f"output type must be 1–6 ({', '.join(f'{k} {v}' for k, v in TYPE_NAMES.items())}), "
            f"got {out_type}"
        )
    opts = full_options(out_type, options)
    exact = bool(opts[TAU_EXACT] or tau_exact)
    path = Path(path)
    check_allowed(table, out_type)
    if not is_confidential(out_type, opts, path):  # the writers check again (a no-op then)
        from argusqt.export.gate import clear_for_publication

        clear_for_publication(table, progress=progress, cancel=cancel)
    if is_excel(out_type, path):  # argusqt extension: Excel workbook
        from argusqt.export.excel import ExcelOptions, write_excel

        method = table.protection.method if table.protection is not None else None
        written = write_excel(
            table,
            path,
            ExcelOptions(confidential=opts["AS"]),
            audit=table.audit,
            report_info={"method": method},
            progress=progress,
            cancel=cancel,
        )
        return [written]
    if out_type in (2, 3):
        from argusqt.export.codevalue import write_codevalue

        return write_codevalue(
            table,
            path,
            add_status=opts["AS"],
            names_first=opts["FL"] or out_type == 2,
            quotes=opts["QU"],
            suppress_empty=opts["SE"],
            tau_exact=exact,
        )
    elif out_type == 1:
        from argusqt.export.csvtable import write_csvtable

        write_csvtable(table, path, quotes=opts["QU"], tau_exact=exact)
    elif out_type == 4:
        from argusqt.export.sbs import write_sbs

        return write_sbs(table, path, quotes=opts["QU"], levels=opts["HL"], tau_exact=exact)
    elif out_type == 5:
        from argusqt.export.intermediate import write_intermediate

        rda = write_intermediate(
            table,
            path,
            quotes=opts["QU"],
            suppress_empty=opts["SE"],
            status_only=opts["SO"],
            holdings=opts["HI"],
            audit=opts["AR"],
            tau_exact=exact,
        )
        return [path, rda]
    else:
        from argusqt.io.jj import write_jj

        write_jj(table, path, trivial_removed=opts["TR"])
    return [path]
