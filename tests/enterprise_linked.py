"""The enterprise data's linked run (act × product and act × region, p% on holdings, on the
cover table), solved once per method for the whole test session: four tests ask for the same
MOD or GH run (docs/design.md, D-59). Each caller gets its own deep copy, so no test sees
what another did to its session."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path

from shared_paths import copy_case

from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.model.table import CostSpec, TableSpec
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import ProtectionResult
from argusqt.session import Session

#: the tests' parameters: MOD with its singleton options at their defaults (SS, SM, MF on) and
#: a 10-minute safety cap (the run is bounded by counts; the cap is wall clock: at load 12 on
#: 2 cores the former 2 minutes cut the run at 135 s and its pattern failed the rule on
#: combined cells, D-59), GH's defaults
PARAMS: dict[str, dict[str, object]] = {"MOD": {"max_minutes": 10}, "GH": {}}


@dataclass
class LinkedRun:
    """A protected session, its results, the tables' problems before protection, the run's time."""

    session: Session
    results: list[ProtectionResult]
    before: list[CSPProblem]
    elapsed: float


_RUNS: dict[str, LinkedRun] = {}


def rules() -> SafetyRules:
    """p% on holdings as in τ-Argus's enterprise tests."""
    return SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )


def computed(folder: Path) -> Session:
    """act × product and act × region of the enterprise data in `folder`, computed."""
    s = Session()
    s.open_microdata(folder / "example_enterprise.asc", folder / "example_enterprise.rda")
    for ex in (["act", "product"], ["act", "region"]):
        s.specify_table(
            TableSpec(ex, "turnover", cost=CostSpec("variable", "turnover"), rules=rules())
        )
    s.compute_tables()
    return s


def linked_enterprise(method: str, tmp_path_factory) -> LinkedRun:
    """The linked `method` run on a copy of the enterprise data (kept for the session), as a
    deep copy the caller may change."""
    if method not in _RUNS:
        s = computed(copy_case("enterprise", tmp_path_factory.mktemp(f"linked_{method}")))
        before = [CSPProblem.from_table(t) for t in s.tables]
        watch = time.perf_counter()
        results = s.protect_linked(method, dict(PARAMS[method]))
        _RUNS[method] = LinkedRun(s, results, before, time.perf_counter() - watch)
    return copy.deepcopy(_RUNS[method])
