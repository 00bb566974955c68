"""Safety-rule settings of one table (argusqt/docs/rules.md §3); parsed from `<SAFETYRULE>` or
set in the GUI."""

from __future__ import annotations

from dataclasses import field

from argusqt.dataclass import dataclass


@dataclass(frozen=True)
class DominanceRule:
    """(n,k)-dominance: unsafe iff the n largest contributions exceed k % of the total."""

    n: int
    k: float


@dataclass(frozen=True)
class PRule:
    """p%-rule with coalition size n: unsafe iff p/q·x1 > remainder after the n+1 largest."""

    p: float
    q: float = 100.0
    n: int = 1


@dataclass(frozen=True)
class FreqRule:
    """Minimum frequency m with safety range r % (protection level); `unweighted` counts
    respondents even when the table applies weights (US#98: "at least 10 units, unweighted")."""

    minfreq: int
    range: float
    unweighted: bool = False


@dataclass(frozen=True)
class RequestRule:
    """Request rule: requesting contributors with codes c1/c2 use thresholds p1/p2."""

    p1: float
    p2: float
    minfreq: int
    margin: float


@dataclass
class SafetyRules:
    """All rules of a table. Holding-level lists are used only when the table has holdings."""

    nk_individual: list[DominanceRule] = field(default_factory=list)
    nk_holding: list[DominanceRule] = field(default_factory=list)
    p_individual: list[PRule] = field(default_factory=list)
    p_holding: list[PRule] = field(default_factory=list)
    freq_individual: FreqRule | None = None
    freq_holding: FreqRule | None = None
    req_individual: RequestRule | None = None
    req_holding: RequestRule | None = None
    zero_range: float | None = None  # None: zero rule off
    manual_margin: float = 20.0
    use_weights: bool = False
    missing_safe: bool = False
    #: apply dominance and p% to determined sums of suppressed cells (US#160, argusqt/docs/rules.md §3.11);
    #: None: the default, on when the table has such a rule
    combined: bool | None = None

    @property
    def uses_holdings(self) -> bool:
        return bool(self.nk_holding or self.p_holding or self.freq_holding or self.req_holding)

    @property
    def has_sensitivity_rules(self) -> bool:
        """False means "use the given status" (tabular input with only MAN or nothing)."""
        return bool(
            self.nk_individual
            or self.nk_holding
            or self.p_individual
            or self.p_holding
            or self.freq_individual
            or self.freq_holding
            or self.req_individual
            or self.req_holding
            or self.zero_range is not None
        )

    @property
    def has_p_rule(self) -> bool:
        return bool(self.p_individual or self.p_holding)

    def top_n_needed(self) -> int:
        """How many largest contributions the rules need: max(n of NK, n+1 of P), at least 2."""
        need = 2
        for r in self.nk_individual + self.nk_holding:
            need = max(need, r.n)
        for rp in self.p_individual + self.p_holding:
            need = max(need, rp.n + 1)
        return need
