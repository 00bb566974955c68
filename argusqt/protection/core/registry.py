"""The registry of protection methods: one descriptor per method, registered by its module.

A method is one module (its solver, its parameter dataclass and its `MethodDescriptor`, which
the module passes to `register`) plus one line in METHOD_MODULES. The batch parser and
writer, session files, `Session.protect` and the Protect dialog read everything they need
from the descriptor: name, kind, parameters, linked-table support, label and help.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from argusqt.dataclass import dataclass
from argusqt.errors import ParameterError
from argusqt.model import scipy_sparse
from argusqt.protection.core.options import SolverOptions
from argusqt.protection.core.params import MethodParams, TableFacts

if TYPE_CHECKING:
    from argusqt.model.table import Table
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.core.result import ProtectionResult

#: The module of each method's batch name (importing it registers its descriptor). A new
#: method adds its line here; nothing else in the package lists methods. `get` imports
#: only the module of the name asked for (a test checks each module registers its name).
MODULE_OF = {
    "OPT": "argusqt.protection.suppress.optimal",
    "MOD": "argusqt.protection.suppress.modular",
    "HEUR": "argusqt.protection.suppress.heuristic",
    "GH": "argusqt.protection.suppress.hypercube",
    "NET": "argusqt.protection.suppress.network",
    "RND": "argusqt.protection.adjust.rounding",
    "CTA": "argusqt.protection.adjust.cta",
    "IP": "argusqt.protection.adjust.interval",
    "CKM": "argusqt.protection.adjust.ckm",
}
#: The modules that register a method.
METHOD_MODULES = tuple(MODULE_OF.values())

Kind = Literal["suppress", "adjust", "interval"]
#: what a protected table publishes: suppressed cells, rounded values, CTA values, intervals
#: or perturbed values (CKM)
Face = Literal["suppress", "round", "cta", "interval", "ckm"]
#: table 0 (all tables together): the joint problem, or the cover table (MOD, microdata)
Linked = Literal["joint", "cover"]
#: suppression methods' singleton options: the method models them itself, or run_method adds
#: virtual cells for them before calling the method
Singletons = Literal["method", "added"]


@dataclass(frozen=True)
class MethodDescriptor:
    """Everything the rest of argusqt knows about one protection method."""

    name: str  # batch name, e.g. "OPT"
    kind: Kind
    label: str  # the Protect dialog's choice
    help: str  # one or two sentences: what it does and when to use it
    params: type[MethodParams]
    solve: Callable[..., ProtectionResult]
    #: the solver's typed options from the typed parameters and the table's facts
    solver_options: Callable[[Any, TableFacts], SolverOptions]
    face: Face = "suppress"
    linked: Linked | None = None
    tau_argus: bool = True  # False for argusqt's own methods (HEUR, IP)
    singletons: Singletons = "added"
    #: table-dependent check (e.g. RND base ≥ the table's minimum base): ParameterError
    check: Callable[[Any, TableFacts], None] | None = None
    order: int = 100  # place in the Protect dialog

    def options_for(self, params: MethodParams, facts: TableFacts) -> SolverOptions:
        """The checked solver options for one table."""
        if not isinstance(params, self.params):
            raise ParameterError(f"{self.name}: expected {self.params.__name__}", method=self.name)
        if self.check is not None:
            self.check(params, facts)
        return self.solver_options(params, facts)


_REGISTRY: dict[str, MethodDescriptor] = {}
_loaded = False


def register(desc: MethodDescriptor) -> MethodDescriptor:
    """Called once by each method module at import; returns the descriptor."""
    name = desc.name.upper()
    old = _REGISTRY.get(name)
    if old is not None and old.solve.__module__ != desc.solve.__module__:
        raise ValueError(f"method {name} registered twice ({old.solve.__module__})")
    if desc.params.METHOD != name:
        raise ValueError(f"{desc.params.__name__}.METHOD must be {name!r}")
    _REGISTRY[name] = desc
    return desc


#: method modules whose imports name scipy.sparse only lazily (model.scipy_sparse.lazy): a
#: small table's OPT run never imports it (docs/design.md, D-78)
WITHOUT_SPARSE = frozenset({"argusqt.protection.suppress.optimal"})


def _import_method(module: str) -> None:
    """Import a method module; scipy.sparse first, the light way (model.scipy_sparse), for
    those that import it at their top."""
    if module not in WITHOUT_SPARSE:
        scipy_sparse.load()
    importlib.import_module(module)


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in METHOD_MODULES:
            _import_method(module)
        _loaded = True


def methods() -> list[MethodDescriptor]:
    """Every registered method, in the Protect dialog's order."""
    _load()
    return sorted(_REGISTRY.values(), key=lambda d: (d.order, d.name))


def get(name: str) -> MethodDescriptor:
    """The descriptor of a method name (any case); ParameterError naming the known methods.

    Only the name's module is imported (MODULE_OF): a batch file's `HEUR` does not import
    OPT's and MOD's modules with SCIP, nor `OPT` the rounding, CTA, interval and network
    ones (docs/design.md, D-16). An unknown name imports them all, for the
    message and for methods registered under another name than MODULE_OF says.
    """
    key = str(name).strip().upper()
    desc = _REGISTRY.get(key)
    if desc is not None:
        return desc
    if key in MODULE_OF:
        _import_method(MODULE_OF[key])
        desc = _REGISTRY.get(key)
        if desc is not None:
            return desc
    if not _loaded:
        _load()
        desc = _REGISTRY.get(key)
        if desc is not None:
            return desc
    known = ", ".join(d.name for d in methods())
    raise ParameterError(
        f"unknown protection method {name!r}; expected one of {known}",
        method=key,
        allowed=known,
    )


def linked_names() -> list[str]:
    """Methods that protect linked tables together (table 0)."""
    return [d.name for d in methods() if d.linked is not None]


def require_linked(desc: MethodDescriptor) -> None:
    """The one message for a method that cannot protect linked tables (parser and Session)."""
    if desc.linked is None:
        raise ParameterError(
            f"{desc.name} cannot protect linked tables together (table 0); the methods that "
            f"can are {', '.join(linked_names())}",
            method=desc.name,
            allowed=", ".join(linked_names()),
        )


def table_facts(table: Table, table_no: int, problem: CSPProblem | None = None) -> TableFacts:
    """The facts of a table that methods' defaults and checks read. `problem`: the table's
    problem when the caller has built it (the facts read only its primaries, which every
    posed status keeps), so that one Protect builds it once (docs/design.md, D-57)."""
    # lazy: the problem module loads scipy.sparse; a batch reaches the registry before any
    # method runs, and scipy.sparse then loads the light way (model.scipy_sparse)
    from argusqt.protection.core.problem import CSPProblem

    rules = table.spec.rules
    fr = rules.freq_individual
    if table.spec.use_holdings and rules.freq_holding is not None:
        fr = rules.freq_holding  # singletons count holdings then (problem.freq)
    min_frequency = int(fr.minfreq) if fr is not None else None
    if problem is None:
        problem = CSPProblem.from_table(table)
    return problem_facts(problem, table_no, min_frequency)


def problem_facts(
    problem: CSPProblem, table_no: int = 1, min_frequency: int | None = None
) -> TableFacts:
    """The facts of a protection problem (its table's minimum frequency given apart)."""
    # lazy, as in table_facts
    from argusqt.protection.core.rounding_base import covering_base, minimum_base

    min_base = int(minimum_base(problem, min_frequency=min_frequency))
    return TableFacts(
        table_no=table_no,
        n_cells=problem.n_cells,
        n_dims=len(problem.dims or []),
        has_frequency=problem.freq is not None,
        min_frequency=min_frequency,
        min_rounding_base=min_base,
        covering_rounding_base=covering_base(problem, 0, min_base),
    )


__all__ = [
    "METHOD_MODULES",
    "MethodDescriptor",
    "get",
    "linked_names",
    "methods",
    "register",
    "require_linked",
    "problem_facts",
    "table_facts",
]


# ---------------------------------------------------------------------- documentation
def parameter_table() -> str:
    """The Markdown table of every method's batch parameters (argusqt/docs/formats.md §8.5
    holds it; a test keeps the two equal): `python -m argusqt.protection.core.registry`."""
    rows = [
        "| method | # | batch name | API name | default | allowed values | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in methods():
        who = "" if d.tau_argus else "; **argusqt only**"
        linked = f"; table 0: {'yes' if d.linked else 'no'}"
        head = f"`{d.name}` {d.label}{who}{linked}"
        specs = d.params.fields()
        if not specs:
            rows.append(f"| {head} | – | | | | | |")
        for k, f in enumerate(specs):
            default = "required" if f.required else _default_text(f.default)
            note = "written only when not the default" if f.info.extension else ""
            if f.info.no_effect:
                note += "; " if note else ""
                note += "read, no effect in argusqt"
            rows.append(
                f"| {head if k == 0 else ''} | {f.info.position} | {f.info.batch} | "
                f"`{f.name}` | {default} | {f.allowed()} | {note} |"
            )
    return "\n".join(rows) + "\n"


def _default_text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


if __name__ == "__main__":  # pragma: no cover - prints the docs table
    from argusqt.protection.core import registry as _imported  # methods register into that module

    print(_imported.parameter_table(), end="")
