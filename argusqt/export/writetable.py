"""Save a table in one of the τ-Argus output types 1–6 with a `WRITETABLE` option string (§8.6)."""

from __future__ import annotations

import re
from pathlib import Path

from argusqt.errors import SpecificationError
from argusqt.model.table import Table

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


def write_table(
    table: Table,
    out_type: int,
    options: str | dict[str, bool],
    path: str | Path,
    *,
    tau_exact: bool = False,
) -> list[Path]:
    """Write `table` as type `out_type` (1–6) to `path`; returns the files written.

    `tau_exact` (or the option `TA+`) writes texts exactly as τ-Argus does; by default a
    code or label a spreadsheet would run as a formula gets a `'` in front.
    """
    if out_type not in TYPE_NAMES:
        raise SpecificationError(
            f"output type must be 1–6 ({', '.join(f'{k} {v}' for k, v in TYPE_NAMES.items())}), "
            f"got {out_type}"
        )
    opts = parse_options(options, out_type) if isinstance(options, str) else options
    opts = default_options(out_type) | {k.upper(): bool(v) for k, v in opts.items()}
    exact = bool(opts[TAU_EXACT] or tau_exact)
    path = Path(path)
    if out_type == 1 and path.suffix.lower() == ".xlsx":  # argusqt extension: Excel workbook
        from argusqt.export.excel import write_excel

        method = getattr(table, "method", None)
        write_excel(
            table, path, audit=getattr(table, "audit", None), report_info={"method": method}
        )
        return [path]
    if out_type in (2, 3):
        from argusqt.export.codevalue import write_codevalue

        write_codevalue(
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

        write_sbs(table, path, quotes=opts["QU"], levels=opts["HL"], tau_exact=exact)
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
