"""Primary suppression: status and protection levels of every cell from the rules
(argusqt/docs/rules.md §2–5).

Everything is vectorised over cells; loops run only over the (at most 4) rules of a kind.
Rules use absolute shadow totals so that all-negative cells behave like positive ones.
"""

from __future__ import annotations

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import SpecificationError
from argusqt.model.rulespec import DominanceRule, PRule, SafetyRules
from argusqt.model.status import Status, is_primary
from argusqt.model.table import Table

#: Relative tolerance of the strict inequalities (equality is safe despite float sums).
REL_TOL = 1e-9


@dataclass
class Classification:
    """Rule status and protection levels of some cells (the `cells` they were computed for)."""

    cells: np.ndarray
    status: np.ndarray  # int8
    lpl: np.ndarray
    upl: np.ndarray


def check_rules(table: Table) -> None:
    """Refuse rule sets the table cannot evaluate (frequency table, missing inputs)."""
    rules: SafetyRules = table.spec.rules
    if table.spec.is_frequency:
        bad = [
            name
            for name, on in (
                ("P", rules.has_p_rule),
                ("NK", bool(rules.nk_individual or rules.nk_holding)),
                ("REQ", bool(rules.req_individual or rules.req_holding)),
                ("ZERO", rules.zero_range is not None),
            )
            if on
        ]
        if bad:
            raise SpecificationError(
                f"a frequency table accepts only FREQ, MAN, MIS and WGT rules, got {', '.join(bad)}"
            )
    need = 0
    for r in rules.nk_individual:
        need = max(need, r.n)
    for rp in rules.p_individual:
        need = max(need, rp.n + 1)
    if need and (table.top is None or table.top.shape[1] < need):
        have = 0 if table.top is None else table.top.shape[1]
        raise SpecificationError(
            f"the rules need the {need} largest contributions per cell, the table has {have}"
        )
    hneed = 0
    for r in rules.nk_holding:
        hneed = max(hneed, r.n)
    for rp in rules.p_holding:
        hneed = max(hneed, rp.n + 1)
    if (hneed or rules.freq_holding) and (table.hfreq is None or table.htop is None):
        raise SpecificationError("holding-level rules need holding information (<HOLDING>)")
    if hneed and table.htop is not None and table.htop.shape[1] < hneed:
        raise SpecificationError(
            f"the holding rules need the {hneed} largest holdings per cell, "
            f"the table has {table.htop.shape[1]}"
        )
    if rules.req_individual and (table.request_top is None or table.request_freq is None):
        raise SpecificationError("the request rule (REQ) needs a <REQUEST> variable")
    if rules.req_holding:
        raise SpecificationError(
            "the holding-level request rule (2nd REQ) is not supported by argusqt"
        )
    if rules.use_weights and rules.uses_holdings:
        raise SpecificationError("weights (WGT(1)) and holding-level rules cannot be combined")


def _gt(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs > rhs strictly, with equality up to float noise counted as not greater."""
    scale = np.maximum(np.abs(lhs), np.abs(rhs))
    return lhs - rhs > REL_TOL * scale


def _nk(top: np.ndarray, t: np.ndarray, n: int, k: float) -> tuple[np.ndarray, np.ndarray]:
    topn = top[:, :n].sum(axis=1)
    fail = (t > 0) & _gt(100.0 * topn, k * t)
    d = 100.0 * topn / k - t
    return fail, np.where(fail, d, 0.0)


def _p(top: np.ndarray, t: np.ndarray, p: float, q: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    x1 = top[:, 0]
    rem = t - top[:, : n + 1].sum(axis=1)
    fail = _gt(p * x1, q * rem)
    d = p / q * x1 - rem
    return fail, np.where(fail, d, 0.0)


def dominance_fails(top: np.ndarray, t: np.ndarray, n: int, k: float) -> np.ndarray:
    """Cells an (n,k)-dominance rule makes unsafe (top: absolute largest contributions)."""
    return _nk(top, t, n, k)[0]


def p_fails(top: np.ndarray, t: np.ndarray, p: float, q: float, n: int) -> np.ndarray:
    """Cells a p% rule with coalition n makes unsafe."""
    return _p(top, t, p, q, n)[0]


def request_fails(table: Table, idx: np.ndarray, t: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Cells the request rule makes unsafe: a requesting contributor above its threshold,
    or requesting contributors in a cell of fewer than its minimum frequency."""
    rq = table.spec.rules.req_individual
    if rq is None:
        return np.zeros(idx.shape[0], dtype=bool)
    rt = np.abs(np.asarray(table.request_top, dtype=float)[idx])
    use1 = rt[:, 0] >= rt[:, 1]
    xr = np.where(use1, rt[:, 0], rt[:, 1])
    pr = np.where(use1, rq.p1, rq.p2)
    nreq = np.asarray(table.request_freq, dtype=float)[idx]
    return ((xr > 0) & _gt(100.0 * xr, pr * t)) | ((nreq > 0) & (f < rq.minfreq))


def freq_count(table: Table, idx: np.ndarray) -> np.ndarray:
    """What the first FREQ rule counts: respondents, or with WGT(1) the weights unless the
    rule says unweighted (`FREQ(m,r,U)`, US#98)."""
    rules = table.spec.rules
    f = np.asarray(table.freq, dtype=float)[idx]
    unweighted = rules.freq_individual is not None and rules.freq_individual.unweighted
    if rules.use_weights and table.weight_sum is not None and not unweighted:
        return np.asarray(table.weight_sum, dtype=float)[idx]
    return f


def classify(
    table: Table, cells: np.ndarray | None = None, empty_nonstructural: bool = False
) -> Classification:
    """Status (1, 3, 4, 5, 6, 14; MIS(1) → 1) and LPL/UPL the rules give to `cells` (all if None)."""
    check_rules(table)
    rules: SafetyRules = table.spec.rules
    idx = np.arange(table.n_cells) if cells is None else np.asarray(cells, dtype=np.int64)
    f = np.asarray(table.freq, dtype=float)[idx]
    value = np.asarray(table.value, dtype=float)[idx]
    t = np.abs(np.asarray(table.shadow, dtype=float)[idx])
    m = idx.shape[0]
    fail3 = np.zeros(m, dtype=bool)
    d3 = np.zeros(m)
    groups: list[tuple[np.ndarray, list[DominanceRule], list[PRule]]] = []
    if rules.nk_individual or rules.p_individual:
        groups.append((table.top[idx], rules.nk_individual, rules.p_individual))
    if rules.nk_holding or rules.p_holding:
        assert table.htop is not None  # checked with the rules (holding information)
        groups.append((table.htop[idx], rules.nk_holding, rules.p_holding))
    for top, nks, ps in groups:
        top = np.abs(np.asarray(top, dtype=float))
        for r in nks:
            fl, d = _nk(top, t, r.n, r.k)
            fail3 |= fl
            d3 = np.maximum(d3, d)
        for rp in ps:
            fl, d = _p(top, t, rp.p, rp.q, rp.n)
            fail3 |= fl
            d3 = np.maximum(d3, d)

    fail4 = np.zeros(m, dtype=bool)
    req_margin = 0.0
    if rules.req_individual:
        fail4 = request_fails(table, idx, t, f)
        req_margin = rules.req_individual.margin

    fail5 = np.zeros(m, dtype=bool)
    fail5_hold = np.zeros(m, dtype=bool)
    if rules.freq_individual:
        fail5 = freq_count(table, idx) < rules.freq_individual.minfreq
    hf = None
    if rules.freq_holding:
        hf = np.asarray(table.hfreq, dtype=float)[idx]
        fail5_hold = (hf > 0) & (hf < rules.freq_holding.minfreq)

    zero = np.abs(value) <= 1e-9
    fail6 = zero if rules.zero_range is not None else np.zeros(m, dtype=bool)

    empty = f <= 0
    status = np.select(
        [
            empty,
            rules.missing_safe & table.missing_mask[idx],
            fail3,
            fail4,
            fail5 | fail5_hold,
            fail6,
        ],
        [
            Status.EMPTY_NONSTRUCTURAL if empty_nonstructural else Status.EMPTY,
            Status.SAFE,
            Status.UNSAFE_RULE,
            Status.UNSAFE_REQUEST,
            Status.UNSAFE_FREQ,
            Status.UNSAFE_ZERO,
        ],
        default=Status.SAFE,
    ).astype(np.int8)

    man = rules.manual_margin / 100.0
    big_d = np.zeros(m)
    # status 3: the largest positive d, else the frequency range, else MAN, else 1
    s3 = status == Status.UNSAFE_RULE
    if s3.any():
        fb = np.full(m, -1.0)
        if rules.freq_individual:
            fb = np.where(
                f <= rules.freq_individual.minfreq, t * rules.freq_individual.range / 100, fb
            )
        if rules.freq_holding and hf is not None:
            fh = np.where(
                hf <= rules.freq_holding.minfreq, t * rules.freq_holding.range / 100, -1.0
            )
            fb = np.maximum(fb, fh)
        fb = np.where(fb < 0, t * man, fb)
        fb = np.where(fb == 0, 1.0, fb)
        big_d = np.where(s3, np.where(d3 > 0, d3, fb), big_d)
    big_d = np.where(status == Status.UNSAFE_REQUEST, t * req_margin / 100, big_d)
    freq_range = _freq_range(table, rules, status, fail5, fail5_hold)
    big_d = np.where(status == Status.UNSAFE_FREQ, t * freq_range / 100, big_d)
    with np.errstate(divide="ignore", invalid="ignore"):
        perc = np.where(t > 0, big_d / np.where(t > 0, t, 1.0), man)
    return _levels(table, idx, status, perc, value, f, rules)


def _freq_range(table: Table, rules: SafetyRules, status, fail5, fail5_hold) -> float:
    """Range of status-5 cells: the individual FREQ range even for holding failures (τ-Argus)."""
    if rules.freq_individual:
        r = rules.freq_individual.range
        if (
            rules.freq_holding
            and rules.freq_holding.range != r
            and bool(((status == Status.UNSAFE_FREQ) & fail5_hold & ~fail5).any())
        ):
            note = (
                "cells failing only the holding-level FREQ rule get the individual range "
                f"{r:g} % (as τ-Argus), not {rules.freq_holding.range:g} %"
            )
            if note not in table.notes:
                table.notes.append(note)
        return r
    return rules.freq_holding.range if rules.freq_holding else 0.0


def _levels(table: Table, idx, status, perc, value, f, rules: SafetyRules) -> Classification:
    """Shadow percentage → symmetric response levels; zero cells get (0, z); safe cells MinPL."""
    min_pl = table.min_protection
    primary = is_primary(status)
    nonzero = np.abs(value) > 1e-9
    up = np.maximum(np.abs(value) * perc, min_pl)
    z = rules.zero_range if rules.zero_range is not None else 0.0
    upl = np.where(primary, np.where(nonzero, up, np.where(f > 0, z, 0.0)), 0.0)
    lpl = np.where(primary & nonzero, upl, 0.0)
    safe = status == Status.SAFE
    upl = np.where(safe, min_pl, upl)
    lpl = np.where(safe, min_pl, lpl)
    return Classification(idx, status, lpl, upl)


def manual_levels(table: Table, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Levels of a cell made unsafe by hand (status 9): MAN % of |value|, min MinPL."""
    idx = np.asarray(cells, dtype=np.int64)
    n = idx.shape[0]
    value = np.asarray(table.value, dtype=float)[idx]
    f = np.asarray(table.freq, dtype=float)[idx]
    perc = np.full(n, table.spec.rules.manual_margin / 100.0)
    c = _levels(
        table,
        idx,
        np.full(n, Status.UNSAFE_MANUAL, dtype=np.int8),
        perc,
        value,
        f,
        table.spec.rules,
    )
    return c.lpl, c.upl


def apply_rules(table: Table, empty_nonstructural: bool = False) -> None:
    """Set `table.status`, `lpl`, `upl` of every cell from the table's safety rules."""
    c = classify(table, None, empty_nonstructural)
    table.status = c.status
    table.lpl = c.lpl
    table.upl = c.upl
    _note_mixed_signs(table)


def _note_mixed_signs(table: Table) -> None:
    """argusqt/docs/rules.md §5: warn (never refuse) when contributions of a cell visibly mix
    signs."""
    if table.top is None or table.top.shape[1] == 0 or not table.spec.rules.has_sensitivity_rules:
        return
    t = np.abs(np.asarray(table.shadow, dtype=float))
    s = np.abs(np.asarray(table.top, dtype=float)).sum(axis=1)
    mixed = int(np.count_nonzero(s - t > REL_TOL * np.maximum(1.0, t) + 1e-9))
    if mixed:
        note = (
            f"{mixed} cells mix positive and negative contributions; "
            "the sensitivity rules are not meaningful there"
        )
        table.notes[:] = [n for n in table.notes if "mix positive and negative" not in n]
        table.notes.append(note)


def primary_counts(table: Table) -> dict[int, int]:
    """Number of cells per status number 1..14 (summary, report)."""
    counts = np.bincount(np.asarray(table.status, dtype=np.int64), minlength=15)
    return {s: int(counts[s]) for s in range(1, 15)}
