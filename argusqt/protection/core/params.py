"""Typed parameters of a protection method: one frozen dataclass per method.

Each field carries its batch position and name, dialog label, help, unit and allowed range, so
the batch parser and writer, the session file, `Session.protect` and the Protect dialog all
derive from the one class; an unknown or out-of-range value is a ParameterError naming the
method, the parameter and what is allowed (argusqt/docs/formats.md §8.5).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar, Self

from argusqt.dataclass import dataclass
from argusqt.errors import ParameterError


@dataclass(frozen=True)
class ParamInfo:
    """What a parameter means to users; the value type and default are the field's own."""

    position: int  # 1-based position after the table number in `<SUPPRESS> M(t, …)`
    batch: str  # its name in the τ-Argus batch manual (or ours for extensions), for messages
    label: str  # the Protect dialog's label
    help: str = ""
    unit: str = ""  # "min", "%": shown after numbers
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  # minimum itself not allowed (a time limit > 0)
    choices: Mapping[int, str] | None = None  # value → meaning (stop rule 1, 2, 3)
    #: an argusqt extension (or a later τ-Argus version's): written to a batch file only when
    #: it differs from its default, so files with default values stay τ-Argus 4.1 files
    extension: bool = False
    #: accepted for compatibility but without effect here; said in the log when not default
    no_effect: str = ""
    #: a required parameter's suggested value for a table (the dialog's starting value)
    suggest: Callable[[TableFacts], float] | None = None
    #: decimals of the dialog's spin box (0: whole numbers, e.g. minutes)
    decimals: int = 0


def param(default: Any = dataclasses.MISSING, **info: Any) -> Any:
    """A method parameter field: `max_minutes: float = param(10, position=1, …)`."""
    meta = {"param": ParamInfo(**info)}
    if default is dataclasses.MISSING:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


#: Largest time limit (a year): beyond it the solvers refuse the number (SCIP's limit is
#: 1e20 s) and no run needs more; `OPT(1, 1e300)` is a clear parameter error.
MAX_MINUTES = 525_600.0


#: what every time limit's help says: its clock, and that Cancel does not wait for it
TIME_LIMIT_HELP = (
    "CPU-minutes of the solver: a busy machine does not move the limit (a run starved of "
    "processor time stops anyway at 10 times the limit on the wall clock, at least the limit "
    "+ 5 minutes). Cancel stops at any time."
)


def minutes_param(
    default: float,
    *,
    position: int,
    batch: str,
    label: str = "Maximum time",
    help: str = "",
    extension: bool = False,
) -> Any:
    """A time limit in minutes (> 0, at most MAX_MINUTES), as τ-Argus batch files give it;
    its help says which clock counts it (D-96)."""
    return param(
        float(default),
        position=position,
        batch=batch,
        label=label,
        help=(help + " " if help else "") + TIME_LIMIT_HELP,
        unit="min",
        minimum=0,
        maximum=MAX_MINUTES,
        exclusive_minimum=True,
        extension=extension,
    )


@dataclass(frozen=True)
class FieldSpec:
    """A parameter as the derived code sees it: name, Python type, default, info."""

    name: str
    type: type  # bool, int or float
    default: Any  # dataclasses.MISSING when required
    info: ParamInfo

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    def allowed(self) -> str:
        """The allowed values in words, for error messages and help."""
        i = self.info
        if self.type is bool:
            return "0 or 1 (no or yes)"
        if i.choices:
            return ", ".join(f"{k} ({v})" for k, v in i.choices.items())
        what = "a whole number" if self.type is int else "a number"
        parts = []
        if i.minimum is not None:
            parts.append(f"{'>' if i.exclusive_minimum else '≥'} {i.minimum:g}")
        if i.maximum is not None:
            parts.append(f"≤ {i.maximum:g}")
        return (
            what + (" " + " and ".join(parts) if parts else "") + (f" ({i.unit})" if i.unit else "")
        )


@dataclass(frozen=True, kw_only=True)
class MethodParams:
    """Base of the per-method parameter dataclasses (frozen, keyword-only, checked on creation)."""

    #: the method's batch name, for messages (set by each subclass)
    METHOD: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for f in self.fields():
            value = getattr(self, f.name)
            object.__setattr__(self, f.name, _coerce(self.METHOD, f, value))

    # ------------------------------------------------------------------ structure
    @classmethod
    def fields(cls) -> list[FieldSpec]:
        """The parameters in batch order."""
        cached = _FIELDS.get(cls)
        if cached is None:
            cached = _FIELDS[cls] = cls._read_fields()
        return cached

    @classmethod
    def _read_fields(cls) -> list[FieldSpec]:
        hints = typing.get_type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            info = f.metadata.get("param")
            if info is None:
                continue
            kind = hints[f.name]
            if kind not in (bool, int, float):
                raise TypeError(f"{cls.__name__}.{f.name}: parameters are bool, int or float")
            default = f.default
            out.append(FieldSpec(f.name, kind, default, info))
        out.sort(key=lambda s: s.info.position)
        if [s.info.position for s in out] != list(range(1, len(out) + 1)):
            raise TypeError(f"{cls.__name__}: batch positions must be 1..n without gaps")
        return out

    @classmethod
    def field_spec(cls, name: str) -> FieldSpec:
        for f in cls.fields():
            if f.name == name:
                return f
        raise _unknown(cls, [name])

    # ------------------------------------------------------------------ from users
    @classmethod
    def from_mapping(cls, values: Mapping[str, object] | None) -> Self:
        """From `{name: value}` (API, session files); unknown names are refused, naming the
        allowed ones (with a suggestion for a near miss)."""
        values = dict(values or {})
        names = {f.name for f in cls.fields()}
        unknown = [k for k in values if k not in names]
        if unknown:
            raise _unknown(cls, unknown)
        missing = [f for f in cls.fields() if f.required and f.name not in values]
        if missing:
            f = missing[0]
            raise ParameterError(
                f"{cls.METHOD} needs the parameter {f.name} ({f.info.label.lower()}): "
                f"{f.allowed()}",
                method=cls.METHOD,
                parameter=f.name,
                allowed=f.allowed(),
            )
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def from_batch(cls, tokens: Sequence[str]) -> Self:
        """From the tokens after the table number of `<SUPPRESS> M(t, …)`; an empty token
        takes the default. ParameterError names the position, the batch name and the values
        allowed (the batch parser adds file and line)."""
        specs = cls.fields()
        if len(tokens) > len(specs):
            raise ParameterError(
                f"{cls.METHOD} takes at most {len(specs)} parameters after the table number, "
                f"got {len(tokens)}",
                method=cls.METHOD,
                allowed=", ".join(s.info.batch for s in specs) or "none",
            )
        values: dict[str, object] = {}
        for k, spec in enumerate(specs):
            token = tokens[k].strip() if k < len(tokens) else ""
            if token == "":
                continue
            values[spec.name] = _parse_token(cls.METHOD, spec, token)
        return cls.from_mapping(values)

    @classmethod
    def suggested(cls, facts: TableFacts, values: Mapping[str, object] | None = None) -> Self:
        """Defaults, required parameters at their suggested value for the table, then `values`."""
        out: dict[str, object] = {}
        for f in cls.fields():
            if f.required and f.info.suggest is not None:
                out[f.name] = f.info.suggest(facts)
        return cls.from_mapping(out | dict(values or {}))

    @classmethod
    def coerce(cls, params: MethodParams | Mapping[str, object] | None) -> Self:
        """An instance of this class from an instance, a mapping or None (defaults)."""
        if isinstance(params, cls):
            return params
        if isinstance(params, MethodParams):
            raise ParameterError(
                f"{cls.METHOD}: got the parameters of {params.METHOD}", method=cls.METHOD
            )
        return cls.from_mapping(params)

    # ------------------------------------------------------------------ to files
    def to_batch(self) -> list[str]:
        """Tokens after the table number: every τ-Argus parameter, extensions only up to the
        last one that differs from its default (so default files stay τ-Argus files)."""
        specs = self.fields()
        last = 0
        for s in specs:
            value = getattr(self, s.name)
            if not s.info.extension or s.required or value != s.default:
                last = s.info.position
        return [_format(getattr(self, s.name)) for s in specs[:last]]

    def to_mapping(self) -> dict[str, bool | int | float]:
        return {f.name: getattr(self, f.name) for f in self.fields()}

    def describe(self) -> str:
        """`max_minutes=10, singleton_singleton=yes` for the log."""
        parts = []
        for f in self.fields():
            v = getattr(self, f.name)
            text = ("yes" if v else "no") if f.type is bool else _format(v)
            parts.append(f"{f.name}={text}")
        return ", ".join(parts) or "no parameters"

    def without_effect(self) -> list[str]:
        """Log lines for parameters given a value that has no effect in argusqt."""
        return [
            f"{self.METHOD}: {f.name}={_format(getattr(self, f.name))} accepted; {f.info.no_effect}"
            for f in self.fields()
            if f.info.no_effect and getattr(self, f.name) != f.default
        ]


@dataclass(frozen=True)
class TableFacts:
    """What table-dependent defaults and checks of a method need to know about a table."""

    table_no: int
    n_cells: int
    n_dims: int
    has_frequency: bool
    #: the FREQ rule's minimum frequency (the holding rule's when holdings are used), or None
    min_frequency: int | None
    #: smallest rounding base that protects the unsafe cells (argusqt/docs/rules.md §4.4)
    min_rounding_base: int
    #: the base RND proposes: the smallest ≥ min_rounding_base whose rounding intervals can
    #: cover every unsafe cell's protection interval (argusqt/docs/methods.md §9); 0 = unknown
    covering_rounding_base: int = 0


# ---------------------------------------------------------------------- helpers
_FIELDS: dict[type, list[FieldSpec]] = {}


def _unknown(cls: type[MethodParams], names: list[str]) -> ParameterError:
    import difflib  # lazy: only a misspelt parameter needs it (1 ms of each start)

    known = [f.name for f in cls.fields()]
    hints = []
    for name in names:
        near = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
        hints.append(f"'{name}'" + (f" (did you mean '{near[0]}'?)" if near else ""))
    takes = ", ".join(known) if known else "no parameters"
    return ParameterError(
        f"{cls.METHOD}: unknown parameter{'s' if len(names) > 1 else ''} {', '.join(hints)}; "
        f"{cls.METHOD} takes {takes}",
        method=cls.METHOD,
        parameter=str(names[0]),
        allowed=takes,
    )


def _error(method: str, f: FieldSpec, got: object) -> ParameterError:
    shown = _format(got) if isinstance(got, int | float) and not isinstance(got, bool) else got
    return ParameterError(
        f"{method}: {f.name} ({f.info.label.lower()}) must be {f.allowed()}, got {shown!s}",
        method=method,
        parameter=f.name,
        allowed=f.allowed(),
    )


def _coerce(method: str, f: FieldSpec, value: object) -> bool | int | float:
    """The value as the field's type, checked against its range or choices."""
    if f.type is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        raise _error(method, f, value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _error(method, f, value)
    if not math.isfinite(value):
        raise _error(method, f, value)
    number: int | float
    if f.type is int:
        if value != int(value):
            raise _error(method, f, value)
        number = int(value)
    else:
        number = float(value)
    i = f.info
    if i.choices is not None and number not in i.choices:
        raise _error(method, f, value)
    if i.minimum is not None and (
        number < i.minimum or (i.exclusive_minimum and number == i.minimum)
    ):
        raise _error(method, f, value)
    if i.maximum is not None and number > i.maximum:
        raise _error(method, f, value)
    return number


def _parse_token(method: str, f: FieldSpec, token: str) -> bool | int | float:
    try:
        number = float(token)
    except ValueError:
        raise ParameterError(
            f"{method} parameter {f.info.position} ({f.info.batch}, {f.info.label.lower()}): "
            f"expected {f.allowed()}, got {token!r}",
            method=method,
            parameter=f.name,
            allowed=f.allowed(),
        ) from None
    try:
        return _coerce(method, f, number)
    except ParameterError:
        raise ParameterError(
            f"{method} parameter {f.info.position} ({f.info.batch}, {f.info.label.lower()}): "
            f"expected {f.allowed()}, got {token}",
            method=method,
            parameter=f.name,
            allowed=f.allowed(),
        ) from None


def _format(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        text = repr(value)  # the shortest text that reads back as the same float
        return text[:-2] if text.endswith(".0") else text
    return str(value)


__all__ = ["FieldSpec", "MethodParams", "ParamInfo", "TableFacts", "minutes_param", "param"]
