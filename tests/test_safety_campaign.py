"""A 50-table slice of the safety campaign (benchmarks/safety_campaign.py).

Random small tables (2-D, 1H2D, 3-D; holdings, zeros, negative values; microdata and table
files), one method each in turn, written for publication through the gate and attacked by
the campaign's own auditor, which shares no code with argusqt.protection. No export may let
an outsider or an insider recompute a primary inside its protection interval.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import safety_campaign as campaign  # noqa: E402

SLICE = range(50)


def test_the_auditor_imports_nothing_from_protect():
    import ast

    tree = ast.parse(Path(campaign.__file__).read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert "argusqt.session" in names  # it drives argusqt as a user would …
    assert not [m for m in names if m.startswith("argusqt.protection")]  # … and audits alone


def test_the_auditor_finds_an_insider_disclosure():
    """The campaign's own attacker is not blind: E14's rectangle fails for c12's respondent."""
    import numpy as np

    dims = [campaign.flat_dim("row", 2), campaign.flat_dim("col", 4)]
    codes = []
    values = []
    e14 = [[52, 15, 62, 17], [24, 18, 31, 8]]
    counts = [[4, 1, 6, 3], [5, 4, 7, 2]]
    for i in range(2):
        for j in range(4):
            for k in range(counts[i][j]):  # equal shares; the last one takes the rest
                share = e14[i][j] // counts[i][j]
                v = share if k < counts[i][j] - 1 else e14[i][j] - share * (counts[i][j] - 1)
                codes.append([f"{i + 1:02d}", f"{j + 1:02d}"])
                values.append(v)
    case = campaign.Case(0, "2D", dims, np.array(codes), np.array(values), None,
                         False, False, False, False)  # fmt: skip
    truth = campaign.tabulate_truth(case)
    n = len(truth.cells)
    c12, c14 = truth.index[("01", "02")], truth.index[("01", "04")]
    rules = campaign.Rules(np.zeros(n, bool), np.zeros(n), np.zeros(n), 0)
    rules.primary[[c12, c14]] = True
    rules.lpl[[c12, c14]] = rules.upl[[c12, c14]] = [1.5, 1.7]
    sup = np.zeros(n, dtype=bool)
    sup[[c12, c14, truth.index[("02", "02")], truth.index[("02", "04")]]] = True
    lo, hi = campaign.apriori(truth, rules)
    lo, hi = np.where(sup, lo, truth.value), np.where(sup, hi, truth.value)
    bad = campaign.unsafe_cells(truth, rules, lo, hi, sup)
    assert bad and all(b.startswith("insider") for b in bad)
    assert any("('01', '04') in [17, 17]" in b for b in bad)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLICE)
def test_no_export_discloses_a_primary(seed, tmp_path):
    method = campaign.METHODS[seed % len(campaign.METHODS)]
    case = campaign.generate(1000 + seed)
    (out,) = campaign.run_case(case, [method], max_time=20.0, workdir=tmp_path)
    assert not out.unsafe, f"{case.label} {method}: {out.unsafe}"
    # a refusal must be one with a reason a statistician can act on, never a crash
    assert out.result in ("published", "no primaries") or campaign.expected_error(out.note), out


def test_mod_on_negative_values_publishes_or_gives_the_reason(tmp_path):
    """Regression: MOD refused with "modular pattern failed the final audit" on two campaign
    tables with negative values (seeds 815, 3-D, and 124, 1H2D). 815 is now published safely;
    on 124 a respondent's own cell makes a primary's level unreachable, which every method
    reports (OPT in the same words), so MOD refuses for that reason, not its own."""
    (mod,) = campaign.run_case(campaign.generate(815), ["MOD"], 20.0, tmp_path / "815")
    assert mod.result == "published" and not mod.unsafe, mod
    mod, opt = campaign.run_case(campaign.generate(124), ["MOD", "OPT"], 20.0, tmp_path / "124")
    assert not mod.unsafe and not opt.unsafe
    assert opt.result == "error" and "cannot be protected against the respondent" in opt.note
    assert (mod.result, mod.note) == (opt.result, opt.note)


def _one(seed: int, method: str, tmp_path):
    (out,) = campaign.run_case(campaign.generate(seed), [method], max_time=20.0, workdir=tmp_path)
    assert not out.unsafe, out
    return out


def test_cta_refuses_with_its_reason_when_the_random_extras_do_not_fit(tmp_path):
    """Seed 744 (2-D, negatives): with the levels as given the bound a + UPL = 894.6 is met at
    895 in print (tests/test_cta.py keeps that case); since issue 21 each primary must move by
    its level plus a random extra (argusqt/docs/methods.md §10), and this table's negative total
    leaves no room for the extras: CTA refuses, naming the cell and its bound, and publishes
    nothing — never an adjusted table whose level estimates give the values away."""
    out = _one(744, "CTA", tmp_path)
    assert out.result == "error", out
    assert "cannot all be met inside the attacker bounds" in out.note
    assert "(Total, 04)" in out.note and "below its lower bound" in out.note


@pytest.mark.parametrize("seed", [79, 355])
def test_cta_names_the_cells_whose_levels_exceed_the_bounds(seed, tmp_path):
    """Seeds 79 and 355 (1H2D, negatives): the parts' levels add up to more than their total's
    bounds allow, so no adjusted table exists; the refusal names cells and what to do."""
    out = _one(seed, "CTA", tmp_path)
    assert out.result == "error" and campaign.expected_error(out.note), out
    assert "bound" in out.note and "(" in out.note  # a cell by its codes and its bound
    assert "Lower the protection levels" in out.note


def test_ip_attacker_lp_survives_an_insider_warm_start(tmp_path):
    """Seed 425 (3-D table file): the warm primal simplex stopped at "Unknown" after an
    insider's cells were fixed; IP now solves it again cold and publishes audited intervals."""
    out = _one(425, "IP", tmp_path)
    assert out.result == "published", out
