"""Issue 27 item 3 (US#174): cause codes — why a primary cell is unsafe — in the confidential
outputs, the API's to_frame(), the report and the cell information panel, with τ-Argus's
status numbers unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from shared_paths import copy_case
from test_rules_classify import cells_table, holding_table

from argusqt.batch.runner import run_batch
from argusqt.rules.cause import CAUSE_WORDS, cause_codes, cause_words
from argusqt.rules.classify import apply_rules


@pytest.mark.parametrize(
    ("contributions", "rule", "cause"),
    [
        ([[80, 15, 5]], "NK(1,70)", "D1"),  # one dominant contributor
        ([[45, 40, 15]], "NK(1,70)|NK(2,80)", "D2"),  # two together dominate
        ([[80, 15, 5]], "NK(1,70)|P(20)", "D1+P1"),
        ([[55, 30, 10, 3, 2]], "P(10,2)", "P2"),
        ([[50, 50]], "FREQ(3,30)", "F"),
        ([[80, 15]], "NK(1,70)|FREQ(3,30)", "D1+F"),  # status 3, both causes named
    ],
)
def test_cause_names_every_failing_rule(contributions, rule, cause):
    t = cells_table(contributions, rule)
    apply_rules(t)
    assert int(t.status[1]) in (3, 5)
    assert cause_codes(t)[1] == cause
    assert cause_codes(t, np.array([1]))[0] == cause


def test_zero_manual_given_and_safe_cells():
    t = cells_table([[0.0, 0.0], [5, 5, 5]], "ZERO(10)|FREQ(2,10)", value=[0.0, 15.0])
    apply_rules(t)
    assert t.status[1] == 6 and cause_codes(t)[1] == "Z"
    assert cause_codes(t)[2] == "" and t.status[2] == 1  # safe: no cause
    t.status[2] = 9  # made unsafe by hand
    assert cause_codes(t)[2] == "M"
    t.status[2] = 3  # a status 3 the rules do not give: given (table file)
    assert cause_codes(t)[2] == "G"
    assert "zero cell" in cause_words("Z") and set(CAUSE_WORDS) >= {"D", "P", "F", "HF", "HP"}


def test_holding_causes_are_told_apart_from_records():
    """The manual's §4.4.4 holdings: p% on holdings (3rd P) gives HP1, FREQ on holdings HF."""
    t = holding_table("P(0,0)|P(0,0)|P(10,1)")
    apply_rules(t)
    causes = cause_codes(t)
    prim = np.flatnonzero(t.status == 3)
    assert prim.size and all(causes[c] == "HP1" for c in prim)
    t = holding_table("P(10,1)|FREQ(0,0)|FREQ(3,30)")
    apply_rules(t)
    causes = cause_codes(t)
    assert any("HF" in causes[c] for c in np.flatnonzero(t.status == 5))


@pytest.fixture(scope="module")
def enterprise_session(tmp_path_factory):
    """The enterprise scenario (p% on holdings, zero cells unsafe), act × product, MOD."""
    folder = copy_case("enterprise", tmp_path_factory.mktemp("causes"))
    arb = folder / "c.arb"
    arb.write_text(
        '<OPENMICRODATA> "example_enterprise.asc"\n<OPENMETADATA> "example_enterprise.rda"\n'
        '<SPECIFYTABLE> "region""product"|"turnover"||"turnover"\n'
        "<SAFETYRULE> P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MIS(1)|MAN(10)\n<READMICRODATA>\n"
        "<SUPPRESS> MOD(1,5,1,1,1)\n"
        '<WRITETABLE> (1, 3, AS+QU+, "cv.txt")\n<WRITETABLE> (1, 4, QU+, "sbs.txt")\n'
        '<WRITETABLE> (1, 5, SO+, "inter.tab")\n'
    )
    out = run_batch(arb)
    assert out.ok, out.error
    return folder, out.session


def test_every_primary_has_a_cause_and_statuses_stay_tau_argus(enterprise_session):
    folder, session = enterprise_session
    t = session.table(1)
    causes = cause_codes(t)
    status = np.asarray(t.status)
    prim = np.flatnonzero((status >= 3) & (status <= 9))
    assert prim.size == 17 and all(causes[c] == "HP1" for c in prim)
    assert all(causes[c] == "" for c in np.flatnonzero(~((status >= 3) & (status <= 9))))
    # the code-value file keeps τ-Argus's lines: codes, value, status number, nothing more
    rows = (folder / "cv.txt").read_text().splitlines()
    assert all(r.count(",") == 3 for r in rows)
    assert {int(r.rsplit(",", 1)[1]) for r in rows} <= set(range(1, 15))


def test_confidential_outputs_carry_the_causes(enterprise_session):
    folder, session = enterprise_session
    t = session.table(1)
    prim = np.flatnonzero(np.asarray(t.status) == 3)
    first = ";".join(c.strip() for c in t.cell_codes(int(prim[0])))
    for side in ("cv.txt.CONFIDENTIAL.txt", "sbs.txt.CONFIDENTIAL.txt"):
        text = (folder / side).read_text()
        assert "Causes of the primary cells" in text
        assert f"{first};3;HP1" in text
        assert text.count(";3;HP1") == 17
    inter = (folder / "inter.tab").read_text().splitlines()
    comments = [x for x in inter if x.startswith("//")]
    assert f"// {first};3;HP1" in comments
    assert len(comments) == 1 + 1 + 17  # banner, heading, one per primary
    # the intermediate file still reads back (the cause lines are comments)
    from argusqt.model.table import TableSpec
    from argusqt.rules.parse import parse_safety_rule
    from argusqt.session import Session

    again = Session()
    again.open_table_data(folder / "inter.tab", folder / "inter.rda")
    again.specify_table(TableSpec(["region", "product"], "turnover"))
    again.set_safety_rules(parse_safety_rule("MAN(10)"))
    again.compute_tables()
    back = again.table(1)
    assert back.n_cells == t.n_cells
    from argusqt.model.status import is_primary

    assert np.array_equal(is_primary(back.status), is_primary(t.status))  # read as given (9)


def test_to_frame_and_report_show_causes(enterprise_session, tmp_path):
    folder, session = enterprise_session
    from argusqt.export.frame import cell_frame

    frame = cell_frame(session.table(1))
    assert "cause" in frame.columns
    primaries = frame[frame["cause"] != ""]
    assert len(primaries) == 17 and set(primaries["cause"]) == {"HP1"}
    html = session.report_html(1)
    assert "Unsafe cells by cause" in html and "HP1" in html


def test_cell_information_panel_says_why(qtbot, enterprise_session):
    from argusqt.gui.cellinfo import CellInfoPanel

    _, session = enterprise_session
    t = session.table(1)
    panel = CellInfoPanel()
    qtbot.addWidget(panel)
    cell = int(np.flatnonzero(np.asarray(t.status) == 3)[0])
    panel.show_cell(t, cell)
    assert panel.labels["cause"].text().startswith("HP1: p% rule on holdings")
    safe = int(np.flatnonzero(np.asarray(t.status) == 1)[0])
    panel.show_cell(t, safe)
    assert panel.labels["cause"].text() == "–"
