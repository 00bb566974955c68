"""Tables of one data set protected apart that share cells (docs/design.md, D-81): the
publication gate judges them together at every door (write_table, the data frame, the
API's verdict, a batch file), because an attacker combines every file published."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from argusqt.api import ProtectedTable
from argusqt.batch.arb import parse_specify_table
from argusqt.batch.runner import run_batch
from argusqt.errors import PublicationError
from argusqt.export.shared import shared_audit
from argusqt.model.status import is_primary, is_suppressed
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.workflow.sharing import sharing_set

LENIENT = "FREQ(5,20)|P(20,5)"
STRICT = "FREQ(25,20)|P(20,5)"  # makes region margins unsafe that LENIENT leaves safe


def _session(ex2, tables: list[tuple[str, str]]) -> Session:
    s = Session()
    s.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    for spec, rules in tables:
        s.specify_table(parse_specify_table(spec))
        s.set_safety_rules(parse_safety_rule(rules))
    s.compute_tables()
    return s


def _region_margins_unsafe_in_2(ex2) -> Session:
    """region × gender (lenient rules) and region (strict rules: some region margin is a
    primary of table 2, a safe cell of table 1), each protected by OPT alone."""
    s = _session(
        ex2, [('"region""gender"|"num1"|""|""', LENIENT), ('"region"|"num1"|""|""', STRICT)]
    )
    t1, t2 = s.table(1), s.table(2)
    n_gender = len(t1.dims[1])
    margins_1 = np.asarray(t1.status).reshape(-1, n_gender)[:, 0]
    assert is_primary(np.asarray(t2.status)).any()
    assert not is_primary(margins_1[is_primary(np.asarray(t2.status))]).all()
    s.protect(1, "OPT")
    s.protect(2, "OPT")
    return s


def _independent_attack(s: Session, no: int, cell: int) -> tuple[float, float]:
    """An LP attacker apart from the gate's code: region × gender cells (table 1) with the
    region cells (table 2) equal to table 1's region margins; a cell printed by either
    table is fixed; sums add up; non-negative. Bounds on `cell` of table `no`."""
    t1, t2 = s.table(1), s.table(2)
    shape = t1.shape
    n = int(np.prod(shape))
    idx = np.arange(n).reshape(shape)
    eq, rhs = [], []
    for r in range(shape[0]):  # gender total = Σ genders
        row = np.zeros(n)
        row[idx[r, 0]] = 1
        row[idx[r, 1:]] = -1
        eq.append(row)
        rhs.append(0.0)
    regions = t1.dims[0]
    for g in range(shape[1]):  # region total = Σ children (the hierarchy)
        for p in regions.parents:
            row = np.zeros(n)
            row[idx[p, g]] = 1
            for c in regions.children[p]:
                row[idx[c, g]] = -1
            eq.append(row)
            rhs.append(0.0)
    v1 = np.asarray(t1.value, dtype=float)
    known = ~is_suppressed(np.asarray(t1.status))
    sup2 = is_suppressed(np.asarray(t2.status))
    codes2 = [c.strip() for c in t2.dims[0].codes]
    for r, code in enumerate(regions.codes):  # table 2's region cell = table 1's margin
        j = codes2.index(code.strip())
        if not sup2[j]:
            known[idx[r, 0]] = True
    bounds = [(v1[i], v1[i]) if known[i] else (0.0, None) for i in range(n)]
    codes1 = [c.strip() for c in regions.codes]
    target = cell if no == 1 else int(idx[codes1.index(codes2[cell]), 0])
    c = np.zeros(n)
    c[target] = 1.0
    lo = linprog(c, A_eq=np.array(eq), b_eq=rhs, bounds=bounds, method="highs")
    hi = linprog(-c, A_eq=np.array(eq), b_eq=rhs, bounds=bounds, method="highs")
    assert lo.status == 0 and hi.status in (0, 3)
    return float(lo.fun), (np.inf if hi.status == 3 else float(-hi.fun))


def test_the_set_of_a_table_is_the_tables_sharing_its_cells(ex2):
    """Same response: one set; another response (num2) or a frequency table: apart."""
    s = _session(
        ex2,
        [
            ('"region""gender"|"num1"|""|""', LENIENT),
            ('"region"|"num1"|""|""', LENIENT),
            ('"region"|"num2"|""|""', LENIENT),
            ('"gender"|<freq>|""|""', "FREQ(5,20)"),
        ],
    )
    assert sharing_set(s, 1) == [1, 2] and sharing_set(s, 2) == [1, 2]
    assert sharing_set(s, 3) == [3] and sharing_set(s, 4) == [4]


def test_suppressed_in_one_table_printed_in_the_other_is_refused_with_the_cells(ex2):
    """Table 2 suppresses an unsafe region margin that table 1 prints: each passes its own
    audit, together they disclose; every door refuses and names 'table N: codes'."""
    s = _region_margins_unsafe_in_2(ex2)
    for no in (1, 2):
        assert s.protection_state(no) == "cleared"  # each alone passes
    verdict, _local, _owner = shared_audit([s.table(1), s.table(2)], [1, 2])
    assert not verdict.ok
    # the independent attacker agrees: some primary of table 2 is known from table 1
    t2 = s.table(2)
    bad = [int(c) for c in np.flatnonzero(is_primary(np.asarray(t2.status)))]
    disclosed = []
    for c in bad:
        lo, hi = _independent_attack(s, 2, c)
        a = float(t2.value[c])
        if lo > a - float(t2.lpl[c]) + 0.005 or hi < a + float(t2.upl[c]) - 0.005:
            disclosed.append(c)
    assert disclosed
    for no in (1, 2):
        with pytest.raises(PublicationError, match="share cells") as err:
            s.write_table(no, 3, "", ex2 / f"t{no}.txt")
        assert "table 2: region=" in str(err.value) and err.value.cells
        assert not (ex2 / f"t{no}.txt").exists()
        with pytest.raises(PublicationError, match="share cells"):
            s.published_frame(no)
        api = ProtectedTable(s, no, s.results.get(no)).audit()
        assert not api.ok
    assert s.clipboard_state(s.table(1))[0] != "cleared"


def test_separately_protected_tables_safe_together_are_written(ex2):
    """region × gender protected by OPT, region with no unsafe cell: the joint audit runs
    (a primary exists) and passes; both files written, the API says ok."""
    s = _session(
        ex2, [('"region""gender"|"num1"|""|""', LENIENT), ('"region"|"num1"|""|""', LENIENT)]
    )
    s.protect(1, "OPT")
    for no in (1, 2):
        s.write_table(no, 3, "", ex2 / f"t{no}.txt")
        assert (ex2 / f"t{no}.txt").exists()
        assert ProtectedTable(s, no, s.results.get(no)).audit().ok
    assert any("share cells: joint publication audit passed" in str(e) for e in s.log)
    assert s.clipboard_state(s.table(1))[0] == "cleared"


def test_tables_of_different_responses_are_each_judged_alone(ex2):
    """region × gender of num1 rounded, region of num2 exact: no common cell, both written."""
    s = _session(
        ex2, [('"region""gender"|"num1"|""|""', LENIENT), ('"region"|"num2"|""|""', LENIENT)]
    )
    s.protect(1, "RND", {"base": 49})
    for no in (1, 2):
        s.write_table(no, 3, "", ex2 / f"t{no}.txt")
    assert not any("share cells" in str(e) for e in s.log)


def test_rounded_table_beside_an_exact_one_refused_at_every_door(ex2):
    """The issue's case (test_linked_mixed_forms): write_table, the data frame and the API
    give the same answer."""
    s = _session(
        ex2, [('"region""gender"|"num1"|""|""', LENIENT), ('"region"|"num1"|""|""', LENIENT)]
    )
    s.protect(1, "RND", {"base": 49})
    for no in (1, 2):
        with pytest.raises(PublicationError, match="table 1: region=A × gender=female"):
            s.write_table(no, 3, "", ex2 / f"t{no}.txt")
        with pytest.raises(PublicationError, match="table 1: region=A × gender=female"):
            s.published_frame(no)
        assert not ProtectedTable(s, no, s.results.get(no)).audit().ok


def test_adjusted_values_beside_a_table_sharing_cells_are_refused_with_what_to_do(ex2):
    """CTA figures are not judged jointly: a clear refusal, never 'audit passed'."""
    s = _session(
        ex2, [('"region""gender"|"num1"|""|""', LENIENT), ('"region"|"num1"|""|""', LENIENT)]
    )
    s.protect(1, "CTA")
    with pytest.raises(PublicationError, match="adjusted values.*Protect them together"):
        s.write_table(2, 3, "", ex2 / "t2.txt")


def test_batch_file_writing_both_tables_gives_the_same_refusal(ex2):
    arb = ex2 / "both.arb"
    arb.write_text(
        "\n".join(
            [
                '<OPENMICRODATA> "microdata_ex2.asc"',
                '<OPENMETADATA> "metadata_ex2.rda"',
                '<SPECIFYTABLE> "region""gender"|"num1"|""|""',
                f"<SAFETYRULE> {LENIENT}",
                '<SPECIFYTABLE> "region"|"num1"|""|""',
                f"<SAFETYRULE> {LENIENT}",
                "<READMICRODATA>",
                "<SUPPRESS> RND(1, 49)",
                '<WRITETABLE> (1, 3, AS-, "t1.txt")',
                '<WRITETABLE> (2, 3, AS-, "t2.txt")',
            ]
        )
        + "\n"
    )
    out = run_batch(arb, logbook=ex2 / "log.txt")
    assert not out.ok
    assert "share cells" in str(out.error) and "table 1: region=A × gender=female" in str(out.error)
    assert not (ex2 / "t1.txt").exists() and not (ex2 / "t2.txt").exists()


def test_session_file_reload_gives_the_joint_verdict(ex2, tmp_path):
    """A session saved with the disclosing pair comes back NOT PUBLISHABLE, not 'cleared'."""
    from argusqt.sessionfile import load_session, save_session

    s = _region_margins_unsafe_in_2(ex2)
    path = save_session(s, tmp_path / "pair.aqs")
    back = load_session(path)
    assert {back.protection_state(1), back.protection_state(2)} & {"refused"}
    assert any("table 2: region=" in str(e) for e in back.log)


def test_a_variable_coded_differently_is_refused_saying_which(shared_data, tmp_path):
    """tau_testW: Size recoded (GK.GRC) in table 1 only; table 2 spans Size as it is. The
    tables share cells (the grand total, Region's margins) but their codes cannot be matched: the
    gate refuses both and names the variable, never 'audit passed' for a set nobody judged."""
    import shutil

    w = tmp_path / "w"
    shutil.copytree(shared_data / "tau_testW", w)
    s = Session()
    s.open_microdata(w / "tau_testW.asc", w / "tau_testW.rda")
    for spec in ('"Size""Region"|"Var2"|""|""', '"Year""Size"|"Var2"|""|""'):
        s.specify_table(parse_specify_table(spec))
        s.set_safety_rules(parse_safety_rule("P(15,1)"))
    s.compute_tables()
    s.recode(1, "Size", w / "GK.GRC")
    s.protect(1, "OPT")
    s.protect(2, "OPT")
    for no in (1, 2):
        with pytest.raises(PublicationError, match="cannot be matched.*'Size'.*same way"):
            s.write_table(no, 3, "", w / f"t{no}.txt")
        with pytest.raises(PublicationError, match="cannot be matched"):
            ProtectedTable(s, no, s.results.get(no)).audit()


@pytest.mark.slow
def test_enterprise_tables_protected_apart_refused_for_a_real_insider(shared_data, tmp_path):
    """act × product and act × region (p% on holdings), MOD on each alone: the gate refuses
    the pair; an LP apart from the joint code (each table's relations, the act margins made
    equal, printed cells fixed, the insider's two cells of table 2 known) bounds
    act=36 × product=11 inside its protection interval, as the gate says."""
    import shutil

    import scipy.sparse as sp

    from argusqt.model.rulespec import PRule, SafetyRules
    from argusqt.model.table import CostSpec, TableSpec
    from argusqt.protection.core.problem import CSPProblem

    f = tmp_path / "e"
    shutil.copytree(shared_data / "enterprise", f)
    s = Session()
    s.open_microdata(f / "example_enterprise.asc", f / "example_enterprise.rda")
    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    for ex in (["act", "product"], ["act", "region"]):
        s.specify_table(
            TableSpec(ex, "turnover", cost=CostSpec("variable", "turnover"), rules=rules)
        )
    s.compute_tables()
    for no in (1, 2):
        s.protect(no, "MOD")
    with pytest.raises(PublicationError, match=r"table 1: act=36 × product=11 \(insider\)"):
        s.write_table(1, 3, "", f / "t1.txt")
    t1, t2 = s.table(1), s.table(2)
    p1, p2 = CSPProblem.from_table(t1), CSPProblem.from_table(t2)
    n1, n2 = p1.n_cells, p2.n_cells
    same = np.zeros((t1.shape[0], n1 + n2))
    for a in range(t1.shape[0]):  # the act margins are the same cells
        same[a, t1.cell_index((a, 0))] = 1
        same[a, n1 + t2.cell_index((a, 0))] = -1
    eq = sp.vstack([sp.block_diag([p1.relations, p2.relations]), sp.csr_matrix(same)]).tocsr()
    vals = np.concatenate([p1.values, p2.values])
    sup = np.concatenate([is_suppressed(np.asarray(t.status)) for t in (t1, t2)])
    lo = np.where(sup, np.concatenate([p1.lower, p2.lower]), vals)
    hi = np.where(sup, np.concatenate([p1.upper, p2.upper]), vals)
    codes2 = {" × ".join(x.strip() for x in t2.cell_codes(c)): c for c in range(n2)}
    for known in ("37 × RegB", "37 × 08"):  # the insider's own cells
        lo[n1 + codes2[known]] = hi[n1 + codes2[known]] = vals[n1 + codes2[known]]
    target = next(c for c in range(n1) if [x.strip() for x in t1.cell_codes(c)] == ["36", "11"])
    obj = np.zeros(n1 + n2)
    obj[target] = -1.0
    bounds = [
        (None if np.isinf(a) else a, None if np.isinf(b) else b)
        for a, b in zip(lo, hi, strict=True)
    ]
    top = linprog(obj, A_eq=eq, b_eq=eq @ vals, bounds=bounds, method="highs")
    assert top.status == 0
    assert -top.fun < vals[target] + p1.upl[target] - 0.005
