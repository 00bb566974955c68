"""MOD's typed batch parameters and the solver options its descriptor makes from them.

Apart from modular.py (the method) so that the registry contract reads on one page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from argusqt.dataclass import dataclass
from argusqt.protection.core.options import SuppressOptions
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param, param
from argusqt.protection.suppress.singleton import singleton_param, singleton_solver_options
from argusqt.protection.suppress.subtables import Subtable

_NO_EFFECT = "argusqt's subtable models need no cost scaling or margins (no effect)"


@dataclass(frozen=True, kw_only=True)
class ModParams(MethodParams):
    """`MOD(t, maxMinPerSubtable, singSing, singMult, minFreq[, maxScaleCost, lowerMarg,
    upperMarg])`; the last three (later τ-Argus versions) are accepted without effect."""

    METHOD: ClassVar[str] = "MOD"
    max_minutes: float = minutes_param(
        1,
        position=1,
        batch="maxMinPerSubtable",
        label="Maximum time per subtable",
        help="Caps each subtable and the whole run (a safety cap: the work is bounded by "
        "counts; a run the cap cuts short says so).",
    )
    singleton_singleton: bool = singleton_param("SS", extension=False)
    singleton_multiple: bool = singleton_param("SM", extension=False)
    min_freq_option: bool = singleton_param("MF", extension=False)
    max_scale_cost: float = param(
        20000.0,
        position=5,
        batch="maxScaleCost",
        label="Maximum scaled cost",
        minimum=0,
        exclusive_minimum=True,
        extension=True,
        no_effect=_NO_EFFECT,
    )
    lower_margin: float = param(
        0.0,
        position=6,
        batch="lowerMarg",
        label="Lower margin",
        minimum=0,
        extension=True,
        no_effect=_NO_EFFECT,
    )
    upper_margin: float = param(
        0.0,
        position=7,
        batch="upperMarg",
        label="Upper margin",
        minimum=0,
        extension=True,
        no_effect=_NO_EFFECT,
    )


#: the whole run's cap in units of the per-subtable minutes: every method's time limit is the
#: run's (issue 22), so τ-Argus's per-subtable minutes cap the whole run too. 1.0 makes
#: `MOD(1,1)` a one-minute run; beside six CPU hogs on 2 cores the sample table's MOD then
#: needs more and says "the time limit decided" (benchmarks/README.md, issue 22)
RUN_LIMIT_FACTOR = 1.0


@dataclass(frozen=True, kw_only=True)
class ModOptions(SuppressOptions):
    """What solve_modular reads (see its docstring); a None knob takes the module's constant
    at run time (tests set the constants)."""

    max_time_per_subtable: float = 60.0
    gap: float | None = None  # SUBTABLE_GAP
    scip_heuristics: str | None = None  # SUBTABLE_HEURISTICS
    scip_lps: int | None = None  # SCIP_LPS
    whole_table_repair: int | None = None  # WHOLE_TABLE_REPAIR
    polish: bool = False  # MOD as a method: the whole-table branch-and-cut at the end
    polish_cells: int | None = None  # POLISH_CELLS
    polish_lps: int | None = None  # POLISH_LPS
    #: linked tables: which subtables to solve (None: all)
    subtable_filter: Callable[[Subtable], bool] | None = None


def _mod_options(p: ModParams, facts: TableFacts) -> ModOptions:
    return ModOptions(
        max_time_per_subtable=60.0 * p.max_minutes,
        max_time=RUN_LIMIT_FACTOR * 60.0 * p.max_minutes,
        polish=True,
        **singleton_solver_options(p, facts),
    )
