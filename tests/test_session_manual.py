"""Manual status changes go through the session and are replayed by a written batch file."""

from __future__ import annotations

import numpy as np
import pytest

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.render import batch_lines, write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session


def _session(folder) -> Session:
    s = Session()
    s.open_microdata(folder / "enterprise.asc", folder / "enterprise.rda")
    s.specify_table(parse_specify_table('"activity""region"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(3,20)|MAN(20)"))
    s.compute_tables()
    return s


@pytest.mark.slow
def test_manual_changes_replayed_by_the_batch_file(sample):
    s = _session(sample)
    t = s.table(1)
    safe = np.flatnonzero(t.status == 1)
    assert s.set_status(1, safe[-1:], "unsafe") == 1
    assert s.set_status(1, safe[:2], "protected") == 2
    assert s.set_cost(1, safe[5:7], 777.0) == 2
    s.protect(1, "HEUR")
    arb = sample / "replay.arb"
    write_batch_file(s, arb)
    text = arb.read_text()
    assert '<APRIORI> "replay_manual1_1.hst", 1, ",", 0, 0' in text
    assert text.index("<APRIORI>") < text.index("<SUPPRESS> HEUR(1")
    hst = (sample / "replay_manual1_1.hst").read_text().splitlines()
    assert hst[0].startswith("// CONFIDENTIAL — not for publication")  # statuses set by hand
    out = run_batch(arb)
    assert out.ok, out.error
    again = out.session.table(1)
    assert np.array_equal(again.status, t.status)
    assert np.allclose(again.cost, t.cost)


@pytest.mark.slow
def test_undo_removes_the_suppression_from_the_batch_file(sample):
    s = _session(sample)
    s.protect(1, "HEUR")
    assert (s.table(1).status == 11).any()
    n = s.undo_protection(1)
    assert n > 0 and not (s.table(1).status == 11).any()
    assert not any(line.startswith("<SUPPRESS>") for line in batch_lines(s))
