"""Metadata of one data file (`.rda`, argusqt/docs/formats.md §1): variables, their positions
and roles.

Role flags are plain booleans so readers, tabulation and the GUI can test them directly;
`Metadata` adds case-insensitive lookup and the role queries everyone needs.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from argusqt.dataclass import dataclass
from argusqt.errors import SpecificationError

if TYPE_CHECKING:  # annotations only: the cell key module is loaded by CKM's data (D-62)
    from argusqt.model.cellkey import MagnitudeCKM, RecordKeyFiles

MetadataKind = Literal["fixed", "free", "tabular"]

#: Role flags of a variable; at most one is set, except recodeable + numeric
#: (argusqt/docs/formats.md §1.2).
ROLE_FLAGS = (
    "recodeable",
    "numeric",
    "weight",
    "holding",
    "request",
    "frequency",
    "maxscore",
    "status",
    "record_key",
)

#: Column roles of a tabular `<NUMERIC>` (second keyword on the same line). The role replaces
#: `numeric` (last role wins): `numeric` alone on a tabular variable means the response.
TABULAR_NUMERIC_ROLES = ("shadow", "cost", "lowerpl", "upperpl")


@dataclass
class Variable:
    """One variable of an `.rda`: where it is, its missing codes, its role and its options."""

    name: str
    start: int | None = None  # 1-based first column (fixed format only)
    width: int | None = None  # field width (fixed/free; tabular: from <HIERLEVELS> or None)
    missing: list[str] = field(default_factory=list)  # categorical: left-padded to width
    recodeable: bool = False  # explanatory (spanning) variable
    numeric: bool = False  # cell item (microdata) / response column (tabular)
    weight: bool = False
    holding: bool = False
    request: bool = False
    request_codes: list[str] = field(default_factory=list)  # "c1" ["c2"]
    frequency: bool = False  # tabular: cell frequency column
    maxscore: bool = False  # tabular: top-n column (order of declaration = rank)
    status: bool = False  # tabular: status column
    shadow: bool = False  # tabular <NUMERIC> <SHADOW>
    cost: bool = False  # tabular <NUMERIC> <COSTVAR> / <COST>
    lowerpl: bool = False  # tabular <NUMERIC> <LOWERPL>
    upperpl: bool = False  # tabular <NUMERIC> <UPPERPL>
    decimals: int = 0
    total_code: str = "Total"
    total_code_given: bool = False
    codelist: str | None = None  # `.cdl` file name as written in the `.rda`
    hierarchical: bool = False
    hierlevels: list[int] = field(default_factory=list)  # non-zero digit counts
    hier_file: str | None = None  # `.hrc` file name as written in the `.rda`
    hier_lead: str | None = None
    distance: list[int] = field(default_factory=lambda: [1, 1, 1, 1, 1])
    truncable: bool = False  # later-version keyword, accepted and ignored
    #: cell key method (argusqt/docs/formats.md §1.5): this variable holds the record keys
    record_key: bool = False
    pfiles: RecordKeyFiles | None = None  # the ptables named on the record key variable
    ckm: MagnitudeCKM | None = None  # `<CKM>` options of a numeric variable
    extra: list[tuple[str, list[str]]] = field(default_factory=list)  # kept for round-trip
    line: int = 0  # line number of the main line in the `.rda`
    #: given in memory instead of files (Python API): (depth, code) in pre-order, as an
    #: `.hrc` gives them, and code → label, as a `.cdl` gives them
    tree: list[tuple[int, str]] | None = None
    labels: dict[str, str] | None = None

    @property
    def categorical(self) -> bool:
        """Read as codes (not numbers): explanatory, holding, request or no numeric role."""
        return self.recodeable or self.holding or self.request or not self.is_number

    @property
    def is_number(self) -> bool:
        """Read as numbers: numeric, weight and the tabular numeric columns."""
        return (
            self.numeric
            or self.weight
            or self.record_key
            or self.frequency
            or self.maxscore
            or self.shadow
            or self.cost
            or self.lowerpl
            or self.upperpl
        )

    @property
    def tabular_role(self) -> str | None:
        """ "response", "shadow", "cost", "lowerpl", "upperpl" for tabular numerics, else None."""
        for r in TABULAR_NUMERIC_ROLES:
            if getattr(self, r):
                return r
        return "response" if self.numeric else None

    @property
    def uses_hrc(self) -> bool:
        return self.hierarchical and (self.hier_file is not None or self.tree is not None)

    @property
    def uses_levels(self) -> bool:
        return (
            self.hierarchical
            and bool(self.hierlevels)
            and self.hier_file is None
            and self.tree is None
        )


@dataclass
class Metadata:
    """All variables of one data file plus the header settings (separator, status codes)."""

    path: Path | None
    kind: MetadataKind
    variables: list[Variable] = field(default_factory=list)
    separator: str | None = None
    safe_code: str = "S"
    unsafe_code: str = "U"
    protect_code: str = "P"
    warnings: list[str] = field(default_factory=list)  # e.g. overlapping fixed fields

    def find(self, name: str) -> Variable | None:
        """The variable with this name (case-insensitive) or None."""
        key = name.lower()
        for v in self.variables:
            if v.name.lower() == key:
                return v
        return None

    def variable(self, name: str) -> Variable:
        """The variable with this name (case-insensitive); SpecificationError when unknown."""
        v = self.find(name)
        if v is None:
            import difflib  # lazy: only an unknown name needs it (1 ms of each start)

            known = ", ".join(
                f"{x.name} (line {x.line})" if x.line else x.name for x in self.variables
            )
            near = difflib.get_close_matches(
                name.lower(), [x.name.lower() for x in self.variables], n=1, cutoff=0.6
            )
            hint, line = "", None
            if near:  # a misspelt name in the metadata (or the batch file): point at its line
                close = next(x for x in self.variables if x.name.lower() == near[0])
                hint, line = f"; did you mean '{close.name}', defined here?", close.line or None
            raise SpecificationError(
                f"unknown variable '{name}' (the metadata defines: {known}){hint}",
                file=self.path,
                line=line,
            )
        return v

    @property
    def explanatory(self) -> list[Variable]:
        return [v for v in self.variables if v.recodeable]

    @property
    def numeric(self) -> list[Variable]:
        """Cell items: microdata `<NUMERIC>`; tabular: the response column(s)."""
        return [v for v in self.variables if v.numeric]

    @property
    def holding(self) -> Variable | None:
        return next((v for v in self.variables if v.holding), None)

    @property
    def weight(self) -> Variable | None:
        return next((v for v in self.variables if v.weight), None)

    @property
    def record_key(self) -> Variable | None:
        """The `<RECORDKEY>` variable of the cell key method, or None."""
        return next((v for v in self.variables if v.record_key), None)

    @property
    def request(self) -> Variable | None:
        return next((v for v in self.variables if v.request), None)

    @property
    def frequency(self) -> Variable | None:
        return next((v for v in self.variables if v.frequency), None)

    @property
    def status(self) -> Variable | None:
        return next((v for v in self.variables if v.status), None)

    @property
    def maxscore(self) -> list[Variable]:
        return [v for v in self.variables if v.maxscore]

    def tabular_column(self, role: str) -> Variable | None:
        """The tabular column with this numeric role ("response", "shadow", "cost", …)."""
        return next((v for v in self.variables if v.tabular_role == role), None)

    @property
    def is_microdata(self) -> bool:
        return self.kind in ("fixed", "free")
