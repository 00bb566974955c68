"""Parser of τ-Argus batch files (`.arb`, argusqt/docs/formats.md §8) into commands with line
numbers.

Only syntax is checked here (every error names the file and line); the order of commands
and what they do belong to the runner.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from argusqt.dataclass import dataclass
from argusqt.errors import ArgusError, BatchError, ParameterError
from argusqt.io.text import check_no_control, read_lines
from argusqt.model.rulespec import SafetyRules
from argusqt.model.table import CostSpec, TableSpec
from argusqt.protection.core.params import MethodParams

#: Commands without arguments.
NO_ARGS = {"READMICRODATA", "CLEAR", "GOINTERACTIVE", "SILENT", "COVER", "JJ", "ANCO"}
#: Commands whose single argument is a file name.
FILE_ARG = {"LOGBOOK", "OPENMICRODATA", "OPENTABLEDATA", "OPENMETADATA", "VERSIONINFO"}
OTHER = {
    "SPECIFYTABLE",
    "SAFETYRULE",
    "SAFETYRULEHOLDING",  # argusqt's readable holding-level rules (US#204)
    "AUDIT",  # argusqt: audit the current pattern, verdict in the logbook (US#314)
    "COPIED",  # argusqt: a table copied for publication in the GUI counts as published
    "READTABLE",
    "APRIORI",
    "RECODE",
    "SUPPRESS",
    "WRITETABLE",
    "SOLVER",
}
COMMANDS = NO_ARGS | FILE_ARG | OTHER
#: τ-Argus 4.2 spellings read as the command they stand for (its batch reader accepts both).
ALIASES = {"APRIORY": "APRIORI"}


@dataclass
class Command:
    """One batch command: NAME (upper case, no brackets), line number, raw text, parsed args."""

    name: str
    line: int
    text: str
    args: Any = None

    def __str__(self) -> str:
        return f"<{self.name}> {self.text}".rstrip()


@dataclass
class Suppress:
    """`<SUPPRESS> M(t, …)`: table 0 = all tables together (linked)."""

    method: str
    table: int
    params: MethodParams
    #: CKM's ptables after the call, `CKM(t) "first" | "sep" | μc` (argusqt/docs/formats.md §8.5): file
    #: names as written (None: the metadata's)
    ptables: tuple[str | None, str | None] | None = None


@dataclass
class WriteTable:
    """`<WRITETABLE>`'s arguments (the options as read and as written back to a log)."""

    table: int
    out_type: int
    options: dict[str, bool]
    options_text: str
    path: str


@dataclass
class Apriori:
    """`<APRIORI>`'s arguments."""

    path: str
    table: int
    sep: str
    ignore_errors: bool = True
    expand_trivial: bool = False


@dataclass
class Recode:
    """`<RECODE>`'s arguments: a `.grc` file or a hierarchy level."""

    table: int
    variable: str
    file: str | None = None
    level: int | None = None


@dataclass
class ReadTable:
    """`<READTABLE>`'s (or `<READMICRODATA>`'s) arguments."""

    totals_mode: int = 0
    keep_status: bool = False


# ---------------------------------------------------------------------- lexical helpers
def strip_comment(line: str) -> str:
    """The line without a `//` comment that is outside quotes."""
    inside = False
    for i, c in enumerate(line):
        if c == '"':
            inside = not inside
        elif c == "/" and not inside and line[i : i + 2] == "//":
            return line[:i]
    return line


def split_outside_quotes(text: str, sep: str) -> list[str]:
    """Split on `sep` characters that are not inside double quotes."""
    parts: list[str] = []
    cur: list[str] = []
    inside = False
    for c in text:
        if c == '"':
            inside = not inside
        if c == sep and not inside:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def unquote(token: str, what: str, required: bool = True) -> str:
    """`"x"` → `x`; an unquoted token is accepted as is; the error names what was expected."""
    t = token.strip()
    if len(t) >= 2 and t[0] == '"' and t[-1] == '"':
        inner = t[1:-1]
        if '"' in inner:
            raise ValueError(f"expected one quoted {what}, got {token.strip()}")
        return inner
    if t.startswith('"'):
        raise ValueError(f"the quoted {what} {t} has no closing '\"'")
    if required and not t:
        raise ValueError(f"expected {what}")
    return t


def _int(text: str, what: str) -> int:
    t = text.strip()
    try:
        f = float(t)
    except ValueError:
        raise ValueError(f"expected {what} (a whole number), got {t!r}") from None
    if f != int(f):
        raise ValueError(f"expected {what} (a whole number), got {t!r}")
    return int(f)


def _number(text: str, what: str) -> float:
    t = text.strip()
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"expected {what} (a number), got {t!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"expected {what} (a finite number), got {t!r}")
    return value


def _flag(text: str, what: str) -> bool:
    v = _int(text, what)
    if v not in (0, 1):
        raise ValueError(f"expected {what} 0 or 1, got {v}")
    return bool(v)


def _quoted_names(text: str) -> list[str]:
    """`"a""b" "c"` → ['a', 'b', 'c']; unquoted blank-separated names are accepted too."""
    names: list[str] = []
    i, s = 0, text.strip()
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif c == '"':
            j = s.find('"', i + 1)
            if j < 0:
                raise ValueError("a variable name has no closing '\"'")
            names.append(s[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < len(s) and not s[j].isspace() and s[j] != '"':
                j += 1
            names.append(s[i:j])
            i = j
    return names


# ---------------------------------------------------------------------- argument parsers
def parse_specify_table(text: str) -> TableSpec:
    """`"E1""E2"|"Resp"|"Shadow"|Cost[|λ or ,λ]` → TableSpec (argusqt/docs/formats.md §8.4)."""
    parts = split_outside_quotes(text, "|")
    if len(parts) < 2:
        raise ValueError("expected explanatory variables, '|' and a response variable")
    if len(parts) > 5:
        raise ValueError(
            "expected at most 5 parts separated by '|' (explanatory|resp|shadow|cost|λ)"
        )
    explanatory = _quoted_names(parts[0])
    if not 1 <= len(explanatory) <= 6:
        raise ValueError(f"expected 1 to 6 explanatory variables, got {len(explanatory)}")
    if any(not e for e in explanatory):
        raise ValueError("an explanatory variable name is empty")
    seen = [e.lower() for e in explanatory]
    twice = next((e for k, e in enumerate(explanatory) if e.lower() in seen[:k]), None)
    if twice is not None:
        raise ValueError(f"the explanatory variable {twice!r} is named twice")
    resp_text = parts[1].strip()
    response: str | None
    if resp_text.lower() in ("<freq>", '"<freq>"'):
        response = None
    else:
        response = unquote(resp_text, "response variable or <freq>")
    shadow = unquote(parts[2], "shadow variable", required=False) if len(parts) > 2 else ""
    cost_text = parts[3].strip() if len(parts) > 3 else ""
    lam_text = parts[4].strip() if len(parts) > 4 else ""
    if not lam_text:
        pieces = split_outside_quotes(cost_text, ",")
        if len(pieces) == 2:
            cost_text, lam_text = pieces[0].strip(), pieces[1].strip()
        elif len(pieces) > 2:
            raise ValueError(f"expected cost[,lambda], got {cost_text!r}")
    lam = 1.0
    if lam_text:
        lam = _number(lam_text, "lambda")
        if not 0 <= lam <= 1:
            raise ValueError(f"expected lambda between 0 and 1, got {lam_text}")
    cost_name = unquote(cost_text, "cost variable", required=False)
    kinds = {"-1": "frequency", "-2": "unity", "-3": "distance"}
    if cost_name in kinds and not cost_text.startswith('"'):
        cost = CostSpec(kinds[cost_name], None, lam)  # type: ignore[arg-type]
    elif cost_name.lstrip("-").isdigit() and not cost_text.startswith('"'):
        raise ValueError(f"expected a cost variable or -1, -2, -3, got {cost_name}")
    else:
        cost = CostSpec("variable", cost_name or None, lam)
    return TableSpec(explanatory, response, shadow or None, cost, SafetyRules())


def parse_suppress(text: str) -> Suppress:
    """`OPT(1,1)` → Suppress('OPT', 1, OptParams(max_minutes=1)): positions, names, defaults
    and allowed values come from the method's descriptor (protection/registry.py)."""
    from argusqt.protection.core import registry

    s = text.strip()
    open_ = s.find("(")
    tail = ""
    if s[:open_].strip().upper() == "CKM" and not s.endswith(")"):
        close = s.find(")", open_)
        s, tail = (s[: close + 1], s[close + 1 :]) if close > 0 else (s, "")
    if open_ < 0 or not s.endswith(")"):
        raise ValueError(f"expected method(table, parameters…), got {s!r}")
    try:
        desc = registry.get(s[:open_].strip())
    except ParameterError as exc:
        raise ValueError(exc.message) from None
    raw = [a.strip() for a in s[open_ + 1 : -1].split(",")]
    if raw == [""]:
        raise ValueError(f"{desc.name} needs a table number")
    table = _int(raw[0], "a table number")
    if table < 0:
        raise ValueError(f"expected a table number ≥ 1 (0 = all tables linked), got {table}")
    try:
        if table == 0:
            registry.require_linked(desc)
        params = desc.params.from_batch(raw[1:])
    except ParameterError as exc:
        raise ValueError(exc.message) from None
    if tail.strip():
        first, sep, mu_c = _ckm_tail(tail)
        if mu_c is not None:
            params = desc.params.coerce(params.to_mapping() | {"mu_c": mu_c})
        return Suppress(desc.name, table, params, (first, sep))
    return Suppress(desc.name, table, params)


def _ckm_tail(tail: str) -> tuple[str | None, str | None, float | None]:
    """`"first" | "sep" | μc` after `CKM(t)`, each part optional (argusqt/docs/formats.md §8.5)."""
    parts = [p.strip() for p in split_outside_quotes(tail.strip(), "|")]
    if len(parts) > 3:
        raise ValueError(
            f'CKM takes at most "ptable" | "ptable" | μc after the table, got {tail!r}'
        )
    parts += [""] * (3 - len(parts))

    def name(p: str, what: str) -> str | None:
        if not p:
            return None
        if not (len(p) >= 2 and p.startswith('"') and p.endswith('"')):
            raise ValueError(f"expected the {what} in double quotes, got {p!r}")
        return p[1:-1] or None

    mu_c = None
    if parts[2]:
        try:
            mu_c = float(parts[2])
        except ValueError:
            raise ValueError(f"μc must be a number, got {parts[2]!r}") from None
    return name(parts[0], "ptable"), name(parts[1], "small-value ptable"), mu_c


def parse_writetable(text: str) -> WriteTable:
    """`(tabno, type, options, "file")` (argusqt/docs/formats.md §8.6)."""
    from argusqt.export.writetable import TYPE_NAMES, parse_options

    s = text.strip()
    if not (s.startswith("(") and s.endswith(")")):
        raise ValueError(f'expected (table, type, options, "file"), got {s!r}')
    parts = split_outside_quotes(s[1:-1], ",")
    if len(parts) != 4:
        raise ValueError(f'expected 4 arguments (table, type, options, "file"), got {len(parts)}')
    table = _int(parts[0], "a table number")
    if table < 1:
        raise ValueError(f"expected a table number ≥ 1, got {table}")
    out_type = _int(parts[1], "an output type")
    if out_type not in TYPE_NAMES:
        raise ValueError(
            f"expected output type 1–7 ({', '.join(f'{k} {v}' for k, v in TYPE_NAMES.items())}), "
            f"got {out_type}"
        )
    try:
        options = parse_options(parts[2], out_type)
    except ArgusError as exc:
        raise ValueError(exc.message) from None
    path = unquote(parts[3], "output file name")
    return WriteTable(table, out_type, options, parts[2].strip(), path)


def parse_apriori(text: str) -> Apriori:
    """`"file", tabno, "sep" [, ignoreErr [, expandTrivial]]`."""
    parts = split_outside_quotes(text, ",")
    if not 3 <= len(parts) <= 5:
        raise ValueError(
            'expected "file", table, "separator" [, ignore errors 0/1 [, expand trivial 0/1]]'
        )
    path = unquote(parts[0], "a-priori file name")
    table = _int(parts[1], "a table number")
    sep_t = parts[2].strip()
    if not (len(sep_t) >= 3 and sep_t[0] == '"' and sep_t[-1] == '"'):
        raise ValueError(f'expected the separator in double quotes (e.g. ","), got {sep_t!r}')
    sep = sep_t[1:-1]
    ignore = _flag(parts[3], "ignore errors") if len(parts) > 3 else True
    expand = _flag(parts[4], "expand trivial levels") if len(parts) > 4 else False
    return Apriori(path, table, sep, ignore, expand)


def parse_recode(text: str) -> Recode:
    """`tabno, varname, "file" | level`."""
    parts = split_outside_quotes(text, ",")
    if len(parts) != 3:
        raise ValueError('expected table, variable, "recode file" or a level number')
    table = _int(parts[0], "a table number")
    var = unquote(parts[1], "variable name")
    third = parts[2].strip()
    if third.startswith('"'):
        return Recode(table, var, file=unquote(third, "recode file name"))
    if third.isdigit():
        return Recode(table, var, level=int(third))
    if not third:
        raise ValueError('expected "recode file" or a level number')
    return Recode(table, var, file=third)


def parse_readtable(text: str) -> ReadTable:
    """`[0|1|2][T|F]` (argusqt/docs/formats.md §3.3): T keeps the statuses given on total
    lines, F (τ-Argus 4.2's explicit spelling of the default) does not."""
    t = text.strip().upper()
    keep = t.endswith("T")
    if t.endswith(("T", "F")):
        t = t[:-1].strip()
    try:
        mode = _int(t, "totals mode") if t else 0
    except ValueError:
        mode = -1
    if mode not in (0, 1, 2):
        raise ValueError(
            "expected totals mode 0, 1 or 2, optionally followed by T (keep the statuses "
            f"given on total lines) or F (do not: the default), got {text.strip()!r}"
        )
    return ReadTable(mode, keep)


@dataclass
class Audit:
    """`<AUDIT> [table[, "confidential file"]]`: table 0 (or none) = every table."""

    table: int = 0
    path: str | None = None


def parse_audit(text: str) -> Audit:
    """`<AUDIT>`, `<AUDIT> 1` or `<AUDIT> 1, "audit1.txt"` (argusqt's extension)."""
    parts = [p for p in split_outside_quotes(text, ",")]
    if len(parts) == 1 and not parts[0].strip():
        return Audit()
    if len(parts) > 2:
        raise ValueError('expected [table[, "file"]], e.g. <AUDIT> 1, "audit1.txt"')
    table = _int(parts[0], "a table number (0 = every table)")
    if table < 0:
        raise ValueError(f"expected a table number ≥ 0 (0 = every table), got {table}")
    path = unquote(parts[1], "audit file name") if len(parts) == 2 else None
    return Audit(table, path)


def parse_copied(text: str) -> int:
    """`<COPIED> 1` (argusqt's extension): the table whose GUI copy counts as published."""
    table = _int(text, "a table number")
    if table < 1:
        raise ValueError(f"expected a table number ≥ 1, got {table}")
    return table


def parse_safety(text: str, file: Path, line: int) -> SafetyRules:
    from argusqt.rules.parse import parse_safety_rule

    return parse_safety_rule(text.strip(), file=file, line=line)


def _args(name: str, text: str, file: Path, line: int) -> Any:
    if name in NO_ARGS:
        if text.strip():
            raise ValueError(f"<{name}> takes no arguments, got {text.strip()!r}")
        return None
    if name in FILE_ARG:
        return unquote(text, "a file name in double quotes")
    if name == "SPECIFYTABLE":
        return parse_specify_table(text)
    if name == "SAFETYRULE":
        return parse_safety(text, file, line)
    if name == "SAFETYRULEHOLDING":
        from argusqt.rules.parse import add_holding_rules

        add_holding_rules(SafetyRules(), text.strip(), file=file, line=line)  # syntax now
        return text.strip()
    if name == "AUDIT":
        return parse_audit(text)
    if name == "COPIED":
        return parse_copied(text)
    if name == "READTABLE":
        return parse_readtable(text)
    if name == "APRIORI":
        return parse_apriori(text)
    if name == "RECODE":
        return parse_recode(text)
    if name == "SUPPRESS":
        return parse_suppress(text)
    if name == "WRITETABLE":
        return parse_writetable(text)
    if name == "SOLVER":
        parts = split_outside_quotes(text, ",")
        solver = unquote(parts[0], "a solver name (XPRESS, CPLEX or FREE)").upper()
        if solver not in ("XPRESS", "CPLEX", "FREE"):
            raise ValueError(f"expected solver XPRESS, CPLEX or FREE, got {solver!r}")
        return solver
    raise AssertionError(name)


def parse_arb_lines(lines: list[str], path: str | Path) -> list[Command]:
    """Commands of the given lines (line number = index + 1)."""
    path = Path(path)
    commands: list[Command] = []
    pending: Command | None = None  # a WRITETABLE whose arguments are on the next line
    for no, raw in enumerate(lines, start=1):
        line = strip_comment(raw.replace("\t", " ")).strip()
        if not line or line.startswith("\\\\"):  # `\\`: τ-Argus 4.2's other comment mark
            continue
        try:
            check_no_control(raw, path, no)
        except ArgusError as exc:
            raise BatchError(exc.message, file=path, line=no, column=exc.column) from None
        if pending is not None and not line.startswith("<"):
            pending.text = line
            _finish(pending, path)
            pending = None
            continue
        if pending is not None:
            raise BatchError(
                '<WRITETABLE> has no arguments (table, type, options, "file")',
                file=path,
                line=pending.line,
            )
        if not line.startswith("<") or ">" not in line:
            raise BatchError(
                f"expected a command such as <OPENMICRODATA>, got {line!r}", file=path, line=no
            )
        end = line.index(">")
        name = line[1:end].strip().upper()
        name = ALIASES.get(name, name)
        text = line[end + 1 :].strip()
        if name not in COMMANDS:
            raise BatchError(
                f"unknown command <{line[1:end]}>; expected one of "
                + ", ".join(f"<{c}>" for c in sorted(COMMANDS)),
                file=path,
                line=no,
            )
        cmd = Command(name, no, text)
        commands.append(cmd)
        if name == "WRITETABLE" and not text:
            pending = cmd
            continue
        _finish(cmd, path)
    if pending is not None:
        raise BatchError(
            '<WRITETABLE> has no arguments (table, type, options, "file")',
            file=path,
            line=pending.line,
        )
    return commands


def _finish(cmd: Command, path: Path) -> None:
    try:
        cmd.args = _args(cmd.name, cmd.text, path, cmd.line)
    except ValueError as exc:
        raise BatchError(f"<{cmd.name}>: {exc}", file=path, line=cmd.line) from None
    except BatchError:
        raise
    except ArgusError as exc:
        raise BatchError(f"<{cmd.name}>: {exc.message}", file=path, line=cmd.line) from None


def parse_arb(path: str | Path) -> list[Command]:
    """Read and parse a `.arb` file; BatchError with file and line on the first syntax error."""
    path = Path(path)
    try:
        lines = read_lines(path)
    except ArgusError as exc:  # a binary or UTF-16 file: said at the line of its first NUL
        raise BatchError(
            f"cannot read the batch file: {exc.message}",
            file=path,
            line=exc.line,
            column=exc.column,
        ) from None
    commands = parse_arb_lines(lines, path)
    if not commands:
        raise BatchError(
            'the batch file has no commands (expected lines such as <OPENMICRODATA> "file")',
            file=path,
        )
    return commands
