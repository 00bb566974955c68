"""The branch-and-cut's insider check answers a pattern it has audited from memory
(docs/design.md, D-47): the same disclosures as a fresh audit, one audit per pattern, and a
cancelled audit is never remembered."""

from __future__ import annotations

import numpy as np
from protect_helpers import sized_problem

from argusqt.errors import Cancelled
from argusqt.progress import CancelToken
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.suppress import branch_and_cut


def _pattern_with_insider_disclosures():
    """A 1H2D problem and its outsiders' optimum, which some respondent breaks."""
    from argusqt.protection.suppress.optimal import solve_optimal

    for seed in (0, 3):
        p = sized_problem("1H2D", 300, seed=seed)
        p.cost = np.abs(p.values)
        mask = solve_optimal(p, {"max_time": 60}).status != 1
        if insider_audit(p, mask).disclosures:
            return p, mask
    raise AssertionError("no pattern with insider disclosures among the seeds")


def test_a_pattern_is_audited_once_and_answered_as_a_fresh_audit_would(monkeypatch):
    p, mask = _pattern_with_insider_disclosures()
    fresh = insider_audit(p, mask).disclosures
    calls = []

    def counting(*args, **kw):
        calls.append(np.packbits(args[1]).tobytes())
        return insider_audit(*args, **kw)

    monkeypatch.setattr(branch_and_cut, "insider_audit", counting)
    check = branch_and_cut._insider_check(p)
    assert check is not None
    first = check(mask, None)
    again = check(mask.copy(), None)
    assert len(calls) == 1
    expected = [(d.cell, list(d.known)) for d in fresh]
    assert [(c, k.tolist()) for c, k in first] == expected
    assert [(c, k.tolist()) for c, k in again] == expected
    again.clear()  # the caller's list is its own: the memory keeps its answer
    assert len(check(mask, None)) == len(expected) and len(calls) == 1
    # another pattern is audited on its own
    other = mask.copy()
    other[np.flatnonzero(p.candidate & ~mask)[0]] = True
    check(other, None)
    assert len(calls) == 2


def test_a_cancelled_audit_is_not_remembered(monkeypatch):
    p, mask = _pattern_with_insider_disclosures()
    calls = []

    def cancelled_once(*args, **kw):
        calls.append(1)
        if len(calls) == 1:
            raise Cancelled("insider audit cancelled")
        return insider_audit(*args, **kw)

    monkeypatch.setattr(branch_and_cut, "insider_audit", cancelled_once)
    check = branch_and_cut._insider_check(p)
    assert check(mask, CancelToken()) is None  # not checked
    found = check(mask, None)
    assert len(calls) == 2 and found  # audited again, and it discloses
