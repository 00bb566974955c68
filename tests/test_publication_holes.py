"""Holes of the publication promise found after the gate landed, each closed with its own
regression: a primary with protection levels 0 must still not be exactly recomputable; the
joint audit of linked tables refuses on its own (tables that agree on their common cells but
whose combined pattern discloses)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from session_helpers import ex2_session

from argusqt.batch.arb import parse_specify_table
from argusqt.errors import PublicationError
from argusqt.protection.audit.outsider import audit
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session


def _row_problem(lpl: float, upl: float, decimals: int = 0) -> CSPProblem:
    """t = a + b + c (t = 60): a primary with the given levels, b and c safe."""
    values = np.array([60.0, 10.0, 20.0, 30.0])
    rel = sp.csr_matrix(np.array([[-1.0, 1.0, 1.0, 1.0]]))
    status = np.array([1, 9, 1, 1], dtype=np.int16)
    return CSPProblem(
        values=values,
        lower=np.zeros(4),
        upper=np.full(4, 90.0),
        cost=values.copy(),
        status=status,
        lpl=np.array([0.0, lpl, 0.0, 0.0]),
        upl=np.array([0.0, upl, 0.0, 0.0]),
        relations=rel,
        rhs=np.zeros(1),
        decimals=decimals,
    )


def _attacker_width(problem: CSPProblem, sup: np.ndarray, cell: int) -> float:
    """Width of the attacker's interval of `cell` (scipy, independent of argusqt's audit)."""
    lo = np.where(sup, problem.lower, problem.values)
    hi = np.where(sup, problem.upper, problem.values)
    a = problem.relations.toarray()
    bounds = list(zip(lo, hi, strict=True))
    c = np.zeros(problem.n_cells)
    c[cell] = 1.0
    low = linprog(c, A_eq=a, b_eq=problem.rhs, bounds=bounds, method="highs").fun
    high = -linprog(-c, A_eq=a, b_eq=problem.rhs, bounds=bounds, method="highs").fun
    return high - low


@pytest.mark.parametrize("lpl,upl,decimals", [(0.0, 0.0, 0), (0.0, 0.0, 2), (0.3, 0.3, 0)])
def test_primary_with_zero_levels_is_never_exactly_recomputable(lpl, upl, decimals):
    """Alone in its row the primary equals the total minus the published cells: exact,
    whatever its levels say, so the audit (outsider and the publication verdict) fails."""
    p = _row_problem(lpl, upl, decimals)
    alone = np.array([False, True, False, False])
    assert _attacker_width(p, alone, 1) == pytest.approx(0.0, abs=1e-9)
    res = audit(p, alone)
    assert not res.passed[1] and res.exact[1]
    verdict = publication_audit(p, alone)
    assert not verdict.ok and verdict.failing_cells.tolist() == [1]
    # with a secondary beside it the attacker's interval is wide: it passes
    pair = np.array([False, True, True, False])
    assert _attacker_width(p, pair, 1) > 1.0
    assert audit(p, pair).passed[1]
    assert publication_audit(p, pair).ok


def test_minimum_level_is_one_printed_unit_and_leaves_real_levels_alone():
    p = _row_problem(0.0, 0.0, 2)
    # UPL = one unit of the last decimal (τ-Argus's minimum in its JJ files)
    assert p.upl[1] == pytest.approx(0.01)
    assert p.upper[1] >= p.values[1] + p.upl[1]
    q = _row_problem(4.0, 4.0, 0)  # levels that already demand a wide interval: unchanged
    assert q.upl[1] == 4.0 and q.lpl[1] == 4.0
    assert q.upl[0] == 0.0  # safe cells keep no levels


@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR"])
def test_methods_protect_a_primary_whose_manual_levels_are_zero(ex2, method):
    """Set unsafe by hand with levels 0: the methods still suppress a partner, the gate
    publishes, and the published file does not give the cell away (independent LP)."""
    s = ex2_session(ex2)
    t = s.table(1)
    st = t.status.reshape(t.shape)
    row = next(r for r in range(1, t.shape[0]) if np.all(st[r] == 1))
    cell = t.cell_index((row, 2))
    s.set_status(1, [cell], "unsafe")
    s.set_protection_levels(1, [cell], 0.0, 0.0)
    assert t.lpl[cell] == 0.0 and t.upl[cell] == 0.0
    s.protect(1, method)
    assert s.protection_state(1) == "cleared"
    p = CSPProblem.from_table(t)
    sup = (t.status >= 3) & (t.status <= 12)
    assert _attacker_width(p, sup, cell) >= 0.5
    s.write_table(1, 3, "", ex2 / f"{method}.txt")


def test_zero_levels_set_after_protection_refused_when_exact(ex2):
    """The hole as users hit it: after OPT, a published cell set unsafe with levels 0 is
    the total minus its published siblings; before the fix the gate let it through."""
    s = ex2_session(ex2)
    s.protect(1, "OPT")
    t = s.table(1)
    st = t.status.reshape(t.shape)
    row = next(r for r in range(1, t.shape[0]) if np.all(st[r] == 1))
    cell = t.cell_index((row, 2))
    s.set_status(1, [cell], "unsafe")
    s.set_protection_levels(1, [cell], 0.0, 0.0)
    with pytest.raises(PublicationError, match="changed after protection"):
        s.write_table(1, 3, "", ex2 / "zero.txt")
    assert not (ex2 / "zero.txt").exists()
    s.protect(1, "OPT")
    s.write_table(1, 3, "", ex2 / "zero.txt")


def _linked_session(ex2) -> Session:
    s = Session()
    s.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    for spec in ('"region""gender"|"num1"|""|""', '"region"|"num1"|""|""'):
        s.specify_table(parse_specify_table(spec))
        s.set_safety_rules(parse_safety_rule("FREQ(5,20)|P(20,5)"))
    s.compute_tables()
    s.protect_linked("OPT")
    return s


def test_linked_joint_audit_refuses_a_consistent_but_disclosing_pair(ex2):
    """The tables still agree on their common cells (no 'disagree' refusal), but a cell of
    table 1 made unsafe after the joint protection is recomputable: the joint verdict
    refuses both tables, naming the cell as 'table 1: codes'; protected together again, both
    are published."""
    s = _linked_session(ex2)
    t1 = s.table(1)
    st = t1.status.reshape(t1.shape)
    row = next(r for r in range(1, t1.shape[0]) if np.all(st[r] == 1))
    cell = t1.cell_index((row, 2))  # region × a gender: not a cell of table 2
    s.set_status(1, [cell], "unsafe")
    codes = [c.strip() for c in t1.cell_codes(cell)]
    name = f"table 1: region={codes[0]} × gender={codes[1]}"
    for no in (1, 2):
        with pytest.raises(PublicationError, match="taken together") as err:
            s.write_table(no, 3, "", ex2 / f"j{no}.txt")
        msg = str(err.value)
        assert "disagree" not in msg
        assert name in msg
        assert tuple(t1.cell_codes(cell)) in err.value.cells
        assert not (ex2 / f"j{no}.txt").exists()
    s.protect_linked("OPT")
    s.write_table(1, 3, "", ex2 / "j1.txt")
    s.write_table(2, 3, "", ex2 / "j2.txt")
    line = next(
        ln
        for ln in (ex2 / "j1.txt").read_text().splitlines()
        if ln.startswith(",".join(f'"{c}"' for c in t1.cell_codes(cell)))
    )
    assert line.endswith(",x")


def test_session_file_says_confidential_in_its_first_lines(ex2):
    """A session file holds every cell's status (primary vs secondary) and levels: its first
    key says CONFIDENTIAL, and it still loads."""
    from argusqt.sessionfile import load_session, save_session

    s = ex2_session(ex2)
    s.protect(1, "OPT")
    path = save_session(s, ex2 / "w.aqs")
    head = path.read_text(encoding="utf-8").splitlines()[:2]
    assert head[0] == "{"
    assert head[1].startswith(' "confidential": "CONFIDENTIAL — not for publication')
    again = load_session(path)
    assert np.array_equal(again.table(1).status, s.table(1).status)
