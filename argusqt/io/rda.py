"""Read and write τ-Argus metadata files `.rda` (argusqt/docs/formats.md §1).

Every malformed line is an InputError naming the file, the line and what was expected, so a
user can fix the metadata without guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from argusqt.errors import InputError
from argusqt.io.atomic import atomic_write_text
from argusqt.io.text import check_no_control, is_comment, read_lines, tokenize
from argusqt.model.metadata import ROLE_FLAGS, TABULAR_NUMERIC_ROLES, Metadata, Variable

if TYPE_CHECKING:  # the cell key module is loaded where a CKM keyword is read (D-62)
    from argusqt.model.cellkey import MagnitudeCKM

HEADER_KEYWORDS = {"<SEPARATOR>", "<SPSS>", "<SAFE>", "<UNSAFE>", "<PROTECT>"}
#: Keywords that only tabular metadata has; their presence makes `<SEPARATOR>` mean tabular.
TABULAR_ONLY = {
    "<SAFE>",
    "<UNSAFE>",
    "<PROTECT>",
    "<FREQUENCY>",
    "<MAXSCORE>",
    "<STATUS>",
    "<SHADOW>",
    "<COST>",
    "<COSTVAR>",
    "<LOWERPL>",
    "<UPPERPL>",
}
#: Cell-key method keywords of τ-Argus ≥ 4.2 (argusqt/docs/formats.md §1.5).
CELL_KEY_KEYWORDS = {
    "<RECORDKEY>",
    "<PFILE>",
    "<PFILE_FREQ>",
    "<PFILE_CONT>",
    "<PFILE_SEP>",
    "<CKM>",
    "<INCLUDEZEROS>",
    "<PARITY>",
    "<SCALING>",
    "<SEPARATION>",
}
NUMERIC_ROLE_KEYWORDS = {
    "<SHADOW>": "shadow",
    "<COST>": "cost",
    "<COSTVAR>": "cost",
    "<LOWERPL>": "lowerpl",
    "<UPPERPL>": "upperpl",
}
MAX_HIERLEVELS = 10


class _Ctx:
    """Position of the line being parsed, to build errors in one call."""

    def __init__(self, path: Path, lineno: int) -> None:
        self.path = path
        self.lineno = lineno

    def error(self, message: str) -> InputError:
        return InputError(message, file=self.path, line=self.lineno)


def _int(ctx: _Ctx, text: str, what: str, minimum: int = 0) -> int:
    """A whole number ≥ minimum, or an InputError saying what was expected."""
    try:
        value = int(text)
    except ValueError:
        raise ctx.error(f"expected a whole number for {what}, got '{text}'") from None
    if value < minimum:
        raise ctx.error(f"expected {what} to be at least {minimum}, got {value}")
    return value


def _set_role(var: Variable, role: str) -> list[str]:
    """Last role keyword wins, except recodeable + numeric which combine
    (argusqt/docs/formats.md §1.2); returns the roles it replaced (a sign of a lost variable
    line: its options fell to the one above)."""
    current = {r for r in (*ROLE_FLAGS, *TABULAR_NUMERIC_ROLES) if getattr(var, r)}
    if current | {role} == {"recodeable", "numeric"}:
        setattr(var, role, True)
        return []
    for r in current:
        setattr(var, r, False)
    setattr(var, role, True)
    return sorted(current - {role})


def _looks_tabular(items: list[tuple[int, list[str]]]) -> bool:
    """Tabular-only keywords, or a main line with a name only (no width), mean tabular data."""
    for _, toks in items[1:]:
        if toks[0].startswith("<"):
            if any(t.upper() in TABULAR_ONLY for t in toks):
                return True
        elif len(toks) == 1:
            return True
    return False


def _main_line(ctx: _Ctx, toks: list[str], kind: str) -> Variable:
    """`name start width [m1 [m2]]` (fixed), `name width [m…]` (free), `name [m…]` (tabular)."""
    n_pos = {"fixed": 2, "free": 1, "tabular": 0}[kind]
    shape = {
        "fixed": "name start width [missing1 [missing2]]",
        "free": "name width [missing1 [missing2]]",
        "tabular": "name [missing1 [missing2]]",
    }[kind]
    if len(toks) < 1 + n_pos or len(toks) > 3 + n_pos:
        raise ctx.error(f"expected a variable line '{shape}', got {len(toks)} item(s)")
    name = toks[0]
    if not name:
        raise ctx.error("expected a variable name, got an empty text")
    var = Variable(name=name, line=ctx.lineno)
    if kind == "fixed":
        var.start = _int(ctx, toks[1], f"the start position of {name}", 1)
        var.width = _int(ctx, toks[2], f"the width of {name}", 1)
    elif kind == "free":
        var.width = _int(ctx, toks[1], f"the width of {name}", 1)
    var.missing = list(toks[1 + n_pos :])
    keyword = next((t for t in toks[1:] if t.startswith("<") and t.endswith(">")), None)
    if keyword is not None:
        raise ctx.error(
            f"the keyword {keyword} is on the line of variable {name}; each option keyword "
            "starts its own line (indented)"
        )
    for m in var.missing:
        if m == "":
            raise ctx.error(f"the missing value of {name} is empty")
        if var.width is not None and len(m) > var.width:
            raise ctx.error(
                f"the missing value '{m}' of {name} is longer than its width {var.width}"
            )
    return var


def _option(ctx: _Ctx, var: Variable, toks: list[str], kind: str, warnings: list[str]) -> None:
    """Apply one option line (`<KEYWORD> args…`) to the current variable; doubtful but
    accepted options add a line to `warnings`."""
    kw = toks[0].upper()
    args = toks[1:]
    micro = kind != "tabular"

    def nargs(lo: int, hi: int, what: str = "argument") -> None:
        if not lo <= len(args) <= hi:
            want = f"{lo}" if lo == hi else f"{lo} to {hi}"
            got = " ".join(f"'{a}'" for a in args) or "nothing"
            raise ctx.error(f"{kw} of {var.name} takes {want} {what}(s), got {got}")

    def only(where: str) -> None:
        if (where == "M") != micro:
            kinds = "microdata" if where == "M" else "tabular"
            raise ctx.error(f"{kw} is only allowed in {kinds} metadata (variable {var.name})")

    simple_roles: dict[str, tuple[str, str | None]] = {
        "<RECODEABLE>": ("recodeable", None),
        "<RECODABLE>": ("recodeable", None),
        "<WEIGHT>": ("weight", "M"),
        "<HOLDING>": ("holding", "M"),
        "<FREQUENCY>": ("frequency", "T"),
        "<MAXSCORE>": ("maxscore", "T"),
        "<STATUS>": ("status", "T"),
    }
    handlers: dict[str, Callable[[], None]] = {}

    def set_role(role: str) -> None:
        replaced = _set_role(var, role)
        if replaced and set(replaced) | {role} != {"numeric", "weight"}:  # weights are numbers
            warnings.append(
                f"warning: {ctx.path.name}, line {ctx.lineno}: {toks[0]} replaces the role "
                f"{', '.join(replaced)} of {var.name} (the last role keyword wins); is a "
                "variable line missing above?"
            )

    def numeric() -> None:
        if micro:
            if args:
                raise ctx.error(
                    f"<NUMERIC> must be alone on its line in microdata metadata "
                    f"(variable {var.name}), got '{args[0]}'"
                )
            set_role("numeric")
            return
        nargs(0, 1)
        if not args:
            set_role("numeric")
            return
        role = NUMERIC_ROLE_KEYWORDS.get(args[0].upper())
        if role is None:
            raise ctx.error(
                f"expected <SHADOW>, <COSTVAR>, <LOWERPL> or <UPPERPL> after <NUMERIC>, "
                f"got '{args[0]}'"
            )
        set_role(role)

    def totcode() -> None:
        nargs(1, 1)
        if args[0] == "":
            raise ctx.error(f"the total code of {var.name} is empty")
        var.total_code = args[0]
        var.total_code_given = True

    def codelist() -> None:
        nargs(1, 1, "file name")
        var.codelist = args[0]

    def hierarchical() -> None:
        nargs(0, 0)
        var.hierarchical = True

    def hierlevels() -> None:
        if not args:
            raise ctx.error(f"<HIERLEVELS> of {var.name} needs at least one number")
        levels = [_int(ctx, a, f"a level of <HIERLEVELS> of {var.name}", 0) for a in args]
        levels = [n for n in levels if n > 0]
        if not levels:
            raise ctx.error(f"<HIERLEVELS> of {var.name} has no non-zero level")
        if len(levels) > MAX_HIERLEVELS:
            raise ctx.error(
                f"<HIERLEVELS> of {var.name} has {len(levels)} levels, at most "
                f"{MAX_HIERLEVELS} are allowed"
            )
        var.hierlevels = levels

    def hiercodelist() -> None:
        nargs(1, 1, "file name")
        var.hier_file = args[0]

    def hierlead() -> None:
        nargs(1, 1)
        if args[0] == "":
            raise ctx.error(f"<HIERLEADSTRING> of {var.name} is empty")
        var.hier_lead = args[0]

    def distance() -> None:
        nargs(0, 5, "number")
        ds = [_int(ctx, a, f"a <DISTANCE> of {var.name}", 0) for a in args] or [1]
        while len(ds) < 5:
            ds.append(ds[-1])
        var.distance = ds

    def decimals() -> None:
        nargs(1, 1, "number")
        var.decimals = _int(ctx, args[0], f"<DECIMALS> of {var.name}", 0)

    def request() -> None:
        only("M")
        nargs(1, 2, "code")
        set_role("request")
        var.request_codes = list(args)

    def truncable() -> None:
        only("M")
        var.truncable = True

    handlers.update(
        {
            "<NUMERIC>": numeric,
            "<TOTCODE>": totcode,
            "<CODELIST>": codelist,
            "<HIERARCHICAL>": hierarchical,
            "<HIERLEVELS>": hierlevels,
            "<HIERCODELIST>": hiercodelist,
            "<HIERLEADSTRING>": hierlead,
            "<DISTANCE>": distance,
            "<DECIMALS>": decimals,
            "<REQUEST>": request,
            "<TRUNCABLE>": truncable,
        }
    )
    if kw in simple_roles:
        role, where = simple_roles[kw]
        if where:
            only(where)
        nargs(0, 0)
        set_role(role)
    elif kw in handlers:
        handlers[kw]()
    elif kw in CELL_KEY_KEYWORDS:
        only("M")
        _cell_key_option(ctx, var, kw, args, set_role)
    elif kw == "<MISSING>":
        raise ctx.error(
            "<MISSING> is not an .rda keyword: write the missing codes after the width on "
            f"the main line of {var.name}"
        )
    else:
        raise ctx.error(f"unknown keyword {toks[0]} (variable {var.name})")


def _yes_no(ctx: _Ctx, kw: str, var: Variable, args: list[str]) -> bool:
    if len(args) != 1 or args[0].upper() not in ("Y", "N"):
        got = " ".join(args) or "nothing"
        raise ctx.error(f"{kw} of {var.name} takes Y or N, got {got}")
    return args[0].upper() == "Y"


def _parse_ckm_type(ctx: _Ctx, var: Variable, text: str) -> MagnitudeCKM:
    """`N`, `M`, `D`, `V` or `T(k)`."""
    from argusqt.model.cellkey import MagnitudeCKM  # lazy: CKM's module, for CKM's keywords

    t = text.strip().upper()
    if t in ("N", "M", "D", "V"):
        return MagnitudeCKM(type=t)
    if t.startswith("T(") and t.endswith(")"):
        inner = t[2:-1].strip()
        if not inner.isdigit() or int(inner) < 1:
            raise ctx.error(
                f"<CKM> T(k) of {var.name}: k must be a whole number ≥ 1, got '{inner}'"
            )
        k = int(inner)
        return MagnitudeCKM(type="T", top_k=k, epsilon=[1.0] * k)
    raise ctx.error(f"unknown <CKM> type '{text}' of {var.name}; expected N, M, D, V or T(k)")


def _parse_scaling(ctx: _Ctx, var: Variable, ckm: MagnitudeCKM, text: str) -> None:
    """`F(σ0,σ1,x*,q[,ε2…εk])` or `N(σ1[,ε2…εk])`, the ε only for T(k) with k ≥ 2."""
    t = text.replace(" ", "")
    kind = t[:1].upper()
    if kind not in ("F", "N") or not (t[1:2] == "(" and t.endswith(")")):
        raise ctx.error(
            f"unknown <SCALING> '{text}' of {var.name}; expected F(σ0,σ1,x*,q…) or N(σ1…)"
        )
    parts = t[2:-1].split(",")
    try:
        nums = [float(x) for x in parts]
    except ValueError:
        raise ctx.error(
            f"<SCALING> of {var.name}: every parameter must be a number, got '{t[2:-1]}'"
        ) from None
    k = ckm.top_k if ckm.type == "T" else 1
    n_eps = k - 1
    want = (4 if kind == "F" else 1) + n_eps
    if len(nums) != want:
        names = "σ0,σ1,x*,q" if kind == "F" else "σ1"
        eps = f" and ε2…ε{k} for T({k})" if n_eps else ""
        raise ctx.error(
            f"<SCALING> {kind} of {var.name} takes {want} parameters ({names}{eps}), "
            f"got {len(nums)}"
        )
    ckm.scaling = kind
    if kind == "F":
        ckm.sigma0, ckm.sigma1, ckm.xstar, ckm.q = nums[:4]
        rest = nums[4:]
    else:
        ckm.sigma1 = nums[0]
        rest = nums[1:]
    ckm.epsilon = [1.0, *rest]
    if ckm.sigma1 <= 0 or (kind == "F" and (ckm.sigma0 <= 0 or ckm.xstar <= 0)):
        raise ctx.error(f"<SCALING> of {var.name}: σ0, σ1 and x* must be positive")


def _cell_key_option(
    ctx: _Ctx, var: Variable, kw: str, args: list[str], set_role: Callable[[str], None]
) -> None:
    """One cell-key keyword (argusqt/docs/formats.md §1.5)."""
    from argusqt.model.cellkey import RecordKeyFiles  # lazy: CKM's module, for CKM's keywords

    if kw == "<RECORDKEY>":
        if args:
            raise ctx.error(f"<RECORDKEY> of {var.name} takes no argument, got '{args[0]}'")
        set_role("record_key")
        var.pfiles = var.pfiles or RecordKeyFiles()
        return
    if kw in ("<PFILE>", "<PFILE_FREQ>", "<PFILE_CONT>", "<PFILE_SEP>"):
        if len(args) != 1 or not args[0]:
            raise ctx.error(f"{kw} of {var.name} takes one file name")
        files = var.pfiles = var.pfiles or RecordKeyFiles()
        if kw == "<PFILE_CONT>":
            files.pfile_cont = args[0]
        elif kw == "<PFILE_SEP>":
            files.pfile_sep = args[0]
        else:
            files.pfile = args[0]
        return
    if kw == "<CKM>":
        if len(args) != 1:
            raise ctx.error(f"<CKM> of {var.name} takes one type (N, M, D, V or T(k))")
        if not var.numeric:
            raise ctx.error(f"<CKM> is only allowed for numeric variables ({var.name})")
        var.ckm = _parse_ckm_type(ctx, var, args[0])
        return
    ckm = var.ckm
    if ckm is None:
        raise ctx.error(f"{kw} of {var.name} is only allowed after <CKM>")
    if kw == "<SCALING>":
        _parse_scaling(ctx, var, ckm, "".join(args))
    elif kw == "<INCLUDEZEROS>":
        ckm.include_zeros = _yes_no(ctx, kw, var, args)
    elif kw == "<PARITY>":
        ckm.parity = _yes_no(ctx, kw, var, args)
    elif kw == "<SEPARATION>":
        ckm.separation = _yes_no(ctx, kw, var, args)


def _validate_cell_key(meta: Metadata) -> None:
    """The file-level rules of the cell-key keywords (argusqt/docs/formats.md §1.5)."""
    path = meta.path
    keys = [v for v in meta.variables if v.record_key]
    if len(keys) > 1:
        raise InputError(
            f"only one <RECORDKEY> variable is allowed, found {', '.join(v.name for v in keys)}",
            file=path,
            line=keys[1].line,
        )
    for v in meta.variables:
        if v.pfiles is not None and not v.record_key:
            raise InputError(
                f"<PFILE…> of {v.name}: ptable files belong to the <RECORDKEY> variable",
                file=path,
                line=v.line,
            )
    key = keys[0] if keys else None
    if key is not None:
        from argusqt.model.cellkey import MAX_KEY_DECIMALS  # lazy: CKM's, with a record key

        if key.pfiles is None or not key.pfiles.pfile:  # τ-Argus requires it; argusqt takes
            meta.warnings.append(  # the ptable from the batch command or the API as well
                f"warning: {Path(path or '').name}, line {key.line}: the record key {key.name} "
                "names no <PFILE>: the cell key method needs a ptable from the batch command "
                '(CKM(t) "ptable"), the Python API or Modify | Cell key ptable'
            )
        if key.decimals > MAX_KEY_DECIMALS:
            raise InputError(
                f"the record key {key.name} has <DECIMALS> {key.decimals}; at most "
                f"{MAX_KEY_DECIMALS} are allowed",
                file=path,
                line=key.line,
            )
    for v in meta.variables:
        if v.ckm is None or not v.ckm.enabled:
            continue
        if key is None:
            raise InputError(
                f"<CKM> {v.ckm.type_text()} of {v.name} needs a <RECORDKEY> variable",
                file=path,
                line=v.line,
            )
        assert key.pfiles is not None
        if not key.pfiles.pfile_cont:
            raise InputError(
                f"<CKM> {v.ckm.type_text()} of {v.name} needs <PFILE_CONT> on the record key "
                f"{key.name} (the ptable of magnitude tables)",
                file=path,
                line=v.line,
            )
        if not v.ckm.scaling:
            raise InputError(
                f"<CKM> {v.ckm.type_text()} of {v.name} needs <SCALING> F(…) or N(…)",
                file=path,
                line=v.line,
            )
        if v.ckm.separation and not key.pfiles.pfile_sep:
            raise InputError(
                f"<SEPARATION> Y of {v.name} needs <PFILE_SEP> on the record key {key.name}",
                file=path,
                line=v.line,
            )


def _finish_variable(path: Path, var: Variable, kind: str, warnings: list[str]) -> None:
    """Checks that need all options of a variable; pads categorical missing codes."""

    def err(msg: str) -> InputError:
        return InputError(msg, file=path, line=var.line)

    if var.hierarchical:
        if var.hier_file is not None:
            if var.hier_lead is None:
                raise err(f"{var.name}: <HIERCODELIST> needs a <HIERLEADSTRING>")
        elif not var.hierlevels:
            raise err(
                f"{var.name} is <HIERARCHICAL> but has neither <HIERLEVELS> nor "
                "<HIERCODELIST> + <HIERLEADSTRING>"
            )
    elif var.hier_file is not None or var.hierlevels:
        warnings.append(
            f"warning: {path.name}, line {var.line}: {var.name} has a hierarchy but no "
            "<HIERARCHICAL>; the hierarchy is ignored"
        )
    if var.hierlevels and var.hier_file is None and var.hierarchical:
        total = sum(var.hierlevels)
        if var.width is None:
            var.width = total  # tabular: the levels define the width
        elif total != var.width:
            raise err(
                f"the <HIERLEVELS> of {var.name} add up to {total}, expected its width {var.width}"
            )
    if kind == "tabular" and var.recodeable and not var.total_code_given:
        raise err(f"explanatory variable {var.name} of tabular data needs a <TOTCODE>")
    if var.categorical and var.width is not None:
        var.missing = [m.rjust(var.width) for m in var.missing]


def _validate(meta: Metadata) -> None:
    """File-level rules of argusqt/docs/formats.md §1.2: explanatory variables exist, tabular
    columns are unique."""
    path = meta.path
    _validate_cell_key(meta)
    if not meta.explanatory:
        raise InputError(
            "expected at least one explanatory variable (<RECODEABLE>), found none", file=path
        )
    if meta.kind == "tabular":
        for role in ("shadow", "cost", "frequency", "lowerpl", "upperpl", "status"):
            vs = [v for v in meta.variables if getattr(v, role)]
            if len(vs) > 1:
                raise InputError(
                    f"tabular metadata may have one {role} column, found "
                    f"{', '.join(v.name for v in vs)}",
                    file=path,
                    line=vs[1].line,
                )
        if not meta.numeric and meta.frequency is None:
            idle = [v for v in meta.variables if not (v.is_number or v.recodeable or v.status)]
            raise InputError(
                "tabular metadata needs a response (<NUMERIC>) or a <FREQUENCY> column"
                + (
                    f"; variable {idle[0].name} has no role: is its option line missing?"
                    if idle
                    else ""
                ),
                file=path,
                line=idle[0].line if idle else None,
            )
    else:
        spans = sorted(
            (v.start, v.start + v.width, v.name)
            for v in meta.variables
            if v.start is not None and v.width is not None
        )
        for (s0, e0, n0), (s1, _, n1) in zip(spans, spans[1:], strict=False):
            if s1 < e0:
                meta.warnings.append(
                    f"warning: {Path(path or '').name}: fields {n0} (columns {s0}-{e0 - 1}) and {n1} "
                    f"(from column {s1}) overlap"
                )


def read_rda(path: str | Path, kind_hint: str | None = None) -> Metadata:
    """Parse an `.rda` file into Metadata; InputError with file and line on any mistake.

    Kind: `<SEPARATOR>` on the first line → free-format microdata, or tabular when the
    caller says so (`kind_hint="tabular"`) or the file uses tabular-only keywords
    (`<SAFE>`, `<FREQUENCY>`, `<NUMERIC> <SHADOW>`, …) or a main line without width;
    no separator → fixed format. `kind_hint="free"`/`"fixed"` force the microdata kind.
    """
    path = Path(path)
    if kind_hint not in (None, "fixed", "free", "tabular"):
        raise ValueError(f"kind_hint must be fixed, free, tabular or None, got {kind_hint!r}")
    items: list[tuple[int, list[str]]] = []
    for i, line in enumerate(read_lines(path), start=1):
        if not is_comment(line):
            check_no_control(line, path, i)
            items.append((i, tokenize(line, path, i)))
    if not items:
        raise InputError("the metadata file is empty (expected variable lines)", file=path)

    separator: str | None = None
    first_no, first = items[0]
    head = first[0].upper()
    if head == "<SPSS>":
        raise InputError(
            "SPSS system files are not supported; export the data as a fixed-format or "
            "free-format text file",
            file=path,
            line=first_no,
        )
    if head == "<SEPARATOR>":
        if len(first) != 2 or first[1] == "":
            raise InputError(
                'expected <SEPARATOR> "x" with one non-empty separator', file=path, line=first_no
            )
        separator = first[1]
        body = items[1:]
    else:
        body = items

    if kind_hint == "tabular":
        kind = "tabular"
    elif kind_hint == "fixed":
        kind = "fixed"
    elif kind_hint == "free":
        kind = "free"
    elif separator is not None:
        kind = "tabular" if _looks_tabular(items) else "free"
    else:
        kind = "fixed"
    if kind == "fixed" and separator is not None:
        raise InputError(
            "fixed-format metadata must not have a <SEPARATOR>", file=path, line=first_no
        )
    if kind == "free" and separator is None:
        raise InputError(
            'free-format metadata needs <SEPARATOR> "x" on its first line', file=path, line=1
        )
    if kind == "fixed" and kind_hint is None and not _looks_tabular(items):
        late = next((no for no, t in items if t[0].upper() == "<SEPARATOR>"), None)
        if late is not None:
            raise InputError(
                "<SEPARATOR> must be the first line of the metadata of free-format microdata "
                f"(line {first_no} is '{' '.join(first)}'); move it to the top",
                file=path,
                line=late,
            )
    if kind == "tabular" and separator is None:
        # the separator of tabular metadata may come later, among the header keywords
        sep_line = next((t for _, t in items if t[0].upper() == "<SEPARATOR>"), None)
        if sep_line is None or len(sep_line) != 2 or sep_line[1] == "":
            raise InputError('tabular metadata needs <SEPARATOR> "x"', file=path, line=1)

    meta = Metadata(path=path, kind=kind, separator=separator)  # type: ignore[arg-type]
    current: Variable | None = None
    seen: dict[str, int] = {}
    for lineno, toks in body:
        ctx = _Ctx(path, lineno)
        kw = toks[0].upper() if toks[0].startswith("<") else None
        if kw in HEADER_KEYWORDS:
            if kind != "tabular":
                where = (
                    "on the first line"
                    if kw in ("<SEPARATOR>", "<SPSS>")
                    else "in tabular metadata"
                )
                raise ctx.error(f"{toks[0]} is only allowed {where}")
            if kw == "<SPSS>":
                raise ctx.error("<SPSS> is not allowed in tabular metadata")
            if len(toks) != 2 or toks[1] == "":
                raise ctx.error(f'expected {kw} "x" with one non-empty code')
            if kw == "<SEPARATOR>":
                meta.separator = toks[1]
            elif kw == "<SAFE>":
                meta.safe_code = toks[1]
            elif kw == "<UNSAFE>":
                meta.unsafe_code = toks[1]
            else:
                meta.protect_code = toks[1]
            continue
        if kw is not None:
            if current is None:
                raise ctx.error(f"expected a variable line before the option {toks[0]}")
            _option(ctx, current, toks, kind, meta.warnings)
            continue
        if current is not None:
            _finish_variable(path, current, kind, meta.warnings)
        current = _main_line(ctx, toks, kind)
        key = current.name.lower()
        if key in seen:
            raise ctx.error(f"variable {current.name} is defined twice (first on line {seen[key]})")
        seen[key] = lineno
        meta.variables.append(current)
    if current is not None:
        _finish_variable(path, current, kind, meta.warnings)
    _validate(meta)
    return meta


# ------------------------------------------------------------------------------ writing
def _q(text: str) -> str:
    """A quoted string argument; a `"` inside cannot be represented in the format."""
    if '"' in text:
        raise ValueError(f"cannot write {text!r} in an .rda file: it contains a '\"'")
    return f'"{text}"'


def _name(text: str) -> str:
    return _q(text) if (" " in text or "\t" in text or text.startswith("<")) else text


def rda_text(meta: Metadata) -> str:
    """The `.rda` text of `meta` (argusqt/docs/formats.md §1.4): upper-case keywords, one per
    line, 4-blank indent."""
    out: list[str] = []
    tabular = meta.kind == "tabular"
    if meta.kind != "fixed":
        out.append(f"<SEPARATOR> {_q(meta.separator or ',')}")
    if tabular:
        out.append(f"<SAFE> {_q(meta.safe_code)}")
        out.append(f"<UNSAFE> {_q(meta.unsafe_code)}")
        out.append(f"<PROTECT> {_q(meta.protect_code)}")
    for v in meta.variables:
        main = [_name(v.name)]
        if meta.kind == "fixed":
            main += [str(v.start), str(v.width)]
        elif meta.kind == "free":
            main.append(str(v.width))
        main += [_q(m) for m in v.missing]
        out.append(" ".join(main))
        opts: list[str] = []
        if v.recodeable:
            opts.append("<RECODEABLE>")
        if v.numeric:
            opts.append("<NUMERIC>")
        for role, kw in (
            ("shadow", "<SHADOW>"),
            ("cost", "<COSTVAR>"),
            ("lowerpl", "<LOWERPL>"),
            ("upperpl", "<UPPERPL>"),
        ):
            if getattr(v, role):
                opts.append(f"<NUMERIC> {kw}")
        for role, kw in (
            ("weight", "<WEIGHT>"),
            ("holding", "<HOLDING>"),
            ("frequency", "<FREQUENCY>"),
            ("maxscore", "<MAXSCORE>"),
            ("status", "<STATUS>"),
        ):
            if getattr(v, role):
                opts.append(kw)
        if v.request:
            opts.append("<REQUEST> " + " ".join(_q(c) for c in v.request_codes))
        if v.total_code_given or v.total_code != "Total" or (tabular and v.recodeable):
            opts.append(f"<TOTCODE> {_q(v.total_code)}")
        if v.codelist is not None:
            opts.append(f"<CODELIST> {_q(v.codelist)}")
        if v.hierarchical:
            opts.append("<HIERARCHICAL>")
            if v.hier_file is not None:
                opts.append(f"<HIERCODELIST> {_q(v.hier_file)}")
                opts.append(f"<HIERLEADSTRING> {_q(v.hier_lead or '@')}")
            elif v.hierlevels:
                opts.append("<HIERLEVELS> " + " ".join(str(n) for n in v.hierlevels if n > 0))
        if list(v.distance) != [1, 1, 1, 1, 1]:
            opts.append("<DISTANCE> " + " ".join(str(d) for d in v.distance))
        if v.decimals:
            opts.append(f"<DECIMALS> {v.decimals}")
        if v.truncable:
            opts.append("<TRUNCABLE>")
        opts += _cell_key_lines(v)
        for kw, args in v.extra:
            opts.append(" ".join([kw, *(_q(a) for a in args)]))
        out += ["    " + o for o in opts]
    return "\n".join(out) + "\n"


def _cell_key_lines(v: Variable) -> list[str]:
    """The cell-key keywords of a variable as τ-Argus writes them (argusqt/docs/formats.md §1.5)."""
    out: list[str] = []
    if v.record_key:
        out.append("<RECORDKEY>")
    if v.pfiles is not None:
        for kw, name in (
            ("<PFILE>", v.pfiles.pfile),
            ("<PFILE_CONT>", v.pfiles.pfile_cont),
            ("<PFILE_SEP>", v.pfiles.pfile_sep),
        ):
            if name:
                out.append(f"{kw} {_q(name)}")
    c = v.ckm
    if c is not None:
        out.append(f"<CKM> {c.type_text()}")
        if c.enabled:
            out.append(f"<INCLUDEZEROS> {'Y' if c.include_zeros else 'N'}")
            out.append(f"<PARITY> {'Y' if c.parity else 'N'}")
            if c.scaling:
                out.append(f"<SCALING> {c.scaling_text()}")
            out.append(f"<SEPARATION> {'Y' if c.separation else 'N'}")
    return out


def write_rda(meta: Metadata, path: str | Path) -> None:
    """Write `meta` as an `.rda` file atomically (argusqt/docs/formats.md §1.4)."""
    atomic_write_text(path, rda_text(meta))
