"""The rule on combined cells' relation scan (rules.combined._relation_sums, picked by counts
over every relation at once since D-72) against the test's own reading of the rule
(test_combined_growth.own_unsafe_sums: every row and column relation by its codes, the
records of the parts), on random patterns of generated NACE × region tables."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_combined_growth import _enterprises, _protect, own_unsafe_sums

from argusqt.model.status import is_suppressed, secondary_status_for
from argusqt.rules.combined import unsafe_relations


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 3), pick=st.integers(0, 2**32 - 1), share=st.floats(0.0, 0.8))
def test_unsafe_relations_are_the_tests_own_unsafe_sums(seed, pick, share):
    ent = _enterprises(seed)
    t = _protect(ent, "HEUR", "NK(2,80)|COMB(0)").table  # the table, the rule not yet applied
    t.spec.rules.combined = True
    rng = np.random.default_rng(pick)
    status = np.asarray(t.status).copy()
    more = np.flatnonzero(rng.random(t.n_cells) < share)
    status[more] = secondary_status_for(status[more])
    view = copy.copy(t)
    view.status = status
    found = unsafe_relations(t, is_suppressed(status))
    ours = sorted(
        sorted(tuple(x.strip() or "Total" for x in t.cell_codes(int(c))) for c in group)
        for _, group, _ in found
    )
    theirs = sorted(sorted(g) for g in own_unsafe_sums(view, ent))
    assert [tuple(x) for x in ours] == [tuple(x) for x in theirs]
