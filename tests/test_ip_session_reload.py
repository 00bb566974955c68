"""An IP table saved in a session and reopened prints the same intervals (issue 21 review):
the session file keeps them, so the reopened table is not read as an unprotected one."""

from __future__ import annotations

from argusqt.batch.arb import parse_specify_table
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.sessionfile import load_session, save_session


def test_ip_intervals_survive_save_and_reopen(ex2):
    """The published file written after reopening is the one written before saving."""
    s = Session()
    s.open_microdata(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda")
    s.specify_table(parse_specify_table('"region""gender"|"num1"|""|""'))
    s.set_safety_rules(parse_safety_rule("FREQ(5,20)|P(20,5)"))
    s.compute_tables()
    s.protect(1, "IP")
    before = s.write_table(1, 3, "", ex2 / "before.txt")[0].read_text()
    again = load_session(save_session(s, ex2 / "w.aqs"))
    # reopened with the gate's verdict on its intervals (docs/design.md, D-51)
    assert again.protection_state(1) == "cleared"
    after = again.write_table(1, 3, "", ex2 / "after.txt")[0].read_text()
    assert after == before
