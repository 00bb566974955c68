"""Rounded (RND) and adjusted (CTA) publications pass an attacker written here (issue 21).

Random hierarchical tables from records (2-D, 1H2D, 3-D; holdings, zeros, negative values:
the safety campaign's generator) go through the Session as a user's would (open, specify,
compute, protect, write for publication). What is written is read back and attacked with
this file's own arithmetic and scipy's linprog, sharing no code with argusqt.protection:

* RND: the rounding interval an attacker derives from a published value P, base b and steps
  K (argusqt/docs/methods.md §9: [P − (K+1)b + unit, P + (K+1)b − unit], not below 0 in a table without
  negative values) covers every primary's protection interval; with those intervals as
  bounds, the outsider (relations) and every insider (a respondent alone in cells) still
  cannot narrow a primary inside its protection interval.
* CTA: the table adds up as printed, every primary lies outside its protection interval, and
  neither natural estimate `adjusted − UPL` nor `adjusted + LPL` is within half a printed
  unit of the true value.

Whatever is refused (the method or the gate) leaves no file behind.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import safety_campaign as campaign  # noqa: E402

from argusqt.errors import ArgusError, PublicationError  # noqa: E402

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)


def _session(case: campaign.Case, folder: Path):
    """A Session with the case's table computed, as run_case builds it (the same rules)."""
    from argusqt.model.rulespec import FreqRule, PRule, SafetyRules
    from argusqt.model.table import TableSpec
    from argusqt.session import Session

    truth = campaign.tabulate_truth(case)
    folder.mkdir(parents=True, exist_ok=True)
    if case.tabular:
        data, meta = campaign.write_tabular(case, truth, folder)
    else:
        data, meta = campaign.write_microdata(case, folder)
    p_rule = [PRule(15, 100, 1)]
    freq = FreqRule(3, 20) if case.freq_rule else None
    if case.holding is not None:
        rules = SafetyRules(p_holding=p_rule, freq_individual=freq)
    else:
        rules = SafetyRules(p_individual=p_rule, freq_individual=freq)
    s = Session()
    if case.tabular:
        s.open_table_data(data, meta)
    else:
        s.open_microdata(data, meta)
    s.specify_table(TableSpec([d.name for d in case.dims], "value", rules=rules))
    s.compute_tables()
    return s, truth, campaign._rules_on_truth(s.table(1), truth)


#: why RND or CTA may rightly refuse a random table (argusqt/docs/methods.md §9, §10)
REASONS = (
    "rounding interval covers its protection interval",  # no covering additive rounding
    "the table rounded to base",  # an insider or the relations narrow a primary
    "cannot all be met inside the attacker bounds",  # CTA: levels beyond a total's bounds
)


def _publish(s, method: str, params: dict, path: Path) -> bool:
    """Protect and write for publication; False (and no file) when either refuses, which
    the method does only for a reason it names."""
    try:
        s.protect(1, method, params)
        s.write_table(1, 3, "", path)
    except PublicationError:
        outcome = "refused by the gate"
    except ArgusError as err:
        assert any(r in str(err) for r in REASONS), str(err)
        outcome = "refused by the method"
    else:
        event(f"{method} published")
        return True
    event(f"{method} {outcome}")
    assert not path.exists(), "a refused table was written"
    assert not list(path.parent.glob(f"*{path.name}*")), "a temporary file was left"
    return False


# ---------------------------------------------------------------------- the attacker
def rounding_interval(published, base, steps, unit, nonnegative):
    """What P, b and K tell an attacker (written here from argusqt/docs/methods.md §9)."""
    span = (steps + 1) * base
    lo = published - span + unit
    hi = published + span - unit
    if nonnegative:
        lo = np.maximum(lo, 0.0)
    return lo, hi


def rounding_disclosures(truth, rules, pub, base: int, steps: int) -> list[str]:
    v = truth.value
    unit = 10.0 ** (-rules.decimals)
    empty = truth.freq == 0
    pv = np.where(empty, 0.0, pub.value)
    assert not np.isnan(pv).any(), "a rounded table with a cell not printed"
    assert np.allclose(pv / base, np.round(pv / base)), "a value that is not a multiple"
    assert np.abs(truth.relations @ pv).max(initial=0.0) < 1e-6, "not additive"
    nonneg = bool(np.all(v >= 0))
    lo, hi = rounding_interval(pv, base, steps, unit, nonneg)
    lo = np.where(empty, 0.0, lo)
    hi = np.where(empty, 0.0, hi)
    assert np.all((lo <= v + 1e-9) & (v <= hi + 1e-9)), "truth outside its rounding interval"
    need_lo = v - rules.lpl
    if nonneg:
        need_lo = np.maximum(need_lo, 0.0)
    need_hi = v + rules.upl
    p = rules.primary
    bad = [
        f"rounding interval of {truth.cells[c]} [{lo[c]:g}, {hi[c]:g}] inside "
        f"[{need_lo[c]:g}, {need_hi[c]:g}]"
        for c in np.flatnonzero(p & ((lo > need_lo + 1e-9) | (hi < need_hi - 1e-9)))
    ]
    if bad:
        return bad
    # the LP attackers over the rounding intervals (outsider and insiders)
    rules_clipped = campaign.Rules(p, v - need_lo, rules.upl, rules.decimals)
    return campaign.unsafe_cells(truth, rules_clipped, lo, hi, hi > lo)


def adjustment_disclosures(truth, rules, pub) -> list[str]:
    v = truth.value
    tol = 0.5 * 10.0 ** (-rules.decimals)
    empty = truth.freq == 0
    x = np.where(empty, 0.0, pub.value)
    assert not np.isnan(x).any(), "an adjusted table with a cell not printed"
    assert np.abs(truth.relations @ x).max(initial=0.0) <= tol, "not additive as printed"
    p = rules.primary
    bad = []
    inside = p & (x > v - rules.lpl + tol) & (x < v + rules.upl - tol)
    bad += [
        f"{truth.cells[c]} published inside its protection interval" for c in np.flatnonzero(inside)
    ]
    for name, est in (("adjusted − UPL", x - rules.upl), ("adjusted + LPL", x + rules.lpl)):
        near = p & (np.abs(est - v) <= tol)
        bad += [f"{name} of {truth.cells[c]} is its true value" for c in np.flatnonzero(near)]
    return bad


# ---------------------------------------------------------------------- properties
@pytest.mark.slow
@SETTINGS
@given(seed=st.integers(0, 10_000), steps=st.sampled_from([0, 0, 1]))
def test_rounded_publications_cover_every_protection_interval(seed, steps, tmp_path_factory):
    case = campaign.generate(seed)
    folder = tmp_path_factory.mktemp(f"rnd{seed}")
    s, truth, rules = _session(case, folder)
    if not rules.primary.any():
        event("no primaries")
        return
    base = s.table_facts(1).covering_rounding_base
    path = folder / "rnd.txt"
    if not _publish(s, "RND", {"base": base, "steps": steps, "max_minutes": 1}, path):
        return
    pub = campaign.read_published(path, truth)
    assert rounding_disclosures(truth, rules, pub, base, steps) == []


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_adjusted_publications_defeat_the_level_estimates(seed, tmp_path_factory):
    case = campaign.generate(seed)
    folder = tmp_path_factory.mktemp(f"cta{seed}")
    s, truth, rules = _session(case, folder)
    if not rules.primary.any():
        event("no primaries")
        return
    path = folder / "cta.txt"
    if not _publish(s, "CTA", {"max_minutes": 1}, path):
        return
    pub = campaign.read_published(path, truth)
    assert adjustment_disclosures(truth, rules, pub) == []


# ---------------------------------------------------------------------- the issue's examples
def test_the_issues_rounding_example_is_refused_or_covered():
    """value 1,521.39, UPL 152.14, base 412 (the old minimum), published 1,236: the interval
    [825, 1,647.99] ends below a + UPL = 1,673.53. The value may now only go up to 1,648."""
    from argusqt.protection.core.rounding_base import covering_multiples, existence_interval

    a, lpl, upl, base, unit = 1521.39, 152.14, 152.14, 412, 0.01
    lo, hi = existence_interval(np.array([1236.0]), base, 0, unit)
    assert hi[0] < a + upl  # the issue's publication discloses
    kmin, kmax = covering_multiples(np.array([a - lpl]), np.array([a + upl]), base, 0, unit)
    allowed = [k * base for k in range(int(kmin[0]), int(kmax[0]) + 1)]
    assert 1236 not in allowed and 1648 in allowed
    lo, hi = existence_interval(np.array([1648.0]), base, 0, unit)
    assert lo[0] <= a - lpl and hi[0] >= a + upl


def test_rounding_refuses_a_base_no_multiple_protects_and_names_the_base_needed():
    from protect_helpers import problem_2d

    from argusqt.errors import MethodError
    from argusqt.protection.adjust.rounding import solve_rounding
    from argusqt.protection.core.rounding_base import covering_base, uncovered_cells

    # 6 with levels 2/2 and base 4 (the minimum): rounded down to 4 the interval [1, 7] ends
    # below 8, up to 8 it is [5, 11], above 4: no multiple protects 6
    p = problem_2d([[6, 13], [12, 20]], [(1, 1)], 2.0)
    assert uncovered_cells(p, 4, 0).size == 1
    need = covering_base(p, 0, 5)
    assert uncovered_cells(p, need, 0).size == 0
    with pytest.raises(MethodError, match=rf"\(1, 1\).*base of at least {need}"):
        solve_rounding(p, {"base": 4})
    res = solve_rounding(p, {"base": need})
    cell = int(np.flatnonzero(p.primary)[0])
    lo, hi = res.figures["existence_lower"][cell], res.figures["existence_upper"][cell]
    assert lo <= 6 - 2 and hi >= 6 + 2


def test_the_proposed_base_covers_every_primary_on_random_tables():
    from protect_helpers import random_1h2d, random_2d

    from argusqt.protection.core.registry import problem_facts
    from argusqt.protection.core.rounding_base import minimum_base, uncovered_cells

    raised = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        p = random_2d(rng, 4, 5) if seed % 2 else random_1h2d(rng, [2, 3], 4)
        facts = problem_facts(p)
        proposed = facts.covering_rounding_base
        assert proposed >= facts.min_rounding_base == minimum_base(p)
        assert uncovered_cells(p, proposed, 0).size == 0
        # the guarantee: every base ≥ max(LPL + UPL) + 2 covers
        levels = (p.lpl + p.upl)[p.primary].max()
        assert proposed <= int(np.ceil(levels)) + 2
        raised += proposed > facts.min_rounding_base
    assert raised > 0  # the old minimum base did not always cover


def test_cta_moves_every_primary_beyond_its_level_by_a_seeded_extra():
    """tests/test_cta's E11 (levels 3, 4, 2, 5): τ-Argus's CTA moves each by exactly its level
    (cost 303), so `adjusted ∓ level` is the true value; the default adds a random extra."""
    from test_cta import E11, E11_SENS, EXACT, problem_2d

    from argusqt.protection.adjust.cta import solve_cta
    from argusqt.protection.audit.disclosure import confidential_seed

    p = problem_2d(E11, E11_SENS)
    exact = solve_cta(p, EXACT)
    moved = np.abs(exact.published - p.values)[p.primary]
    assert np.isclose(moved, p.upl[p.primary]).sum() == 3  # the attack finds 3 of the 4
    one = solve_cta(p, {"seed": 7})
    again = solve_cta(p, {"seed": 7})
    np.testing.assert_array_equal(one.published, again.published)  # reproducible from the seed
    assert one.figures["seed"] == 7
    x, a = one.published, p.values
    prim = p.primary
    assert np.all(np.abs(x - p.upl - a)[prim] >= 1) and np.all(np.abs(x + p.lpl - a)[prim] >= 1)
    assert ((x >= a + p.upl) | (x <= a - p.lpl))[prim].all()
    assert one.cost > exact.cost
    # no seed given: one from the confidential values (same input, same output)
    assert solve_cta(p).figures["seed"] == confidential_seed(p) == solve_cta(p).figures["seed"]
    assert one.verdict.ok and not exact.verdict.ok  # the publication verdict agrees
    assert {d.reason for d in exact.verdict.disclosures} == {"level estimate"}
