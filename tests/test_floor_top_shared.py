"""The floors' top-K lists (D-91) are read off the shadow's when they are the same lists
(no weights, the shadow is the response, nothing negative; or an unweighted count): the
same FineCells as the second top-K pass gave (session 20, D-99)."""

from __future__ import annotations

import numpy as np
import pytest

from argusqt.model.tabulate import build_fine


def _cats(rng: np.random.Generator, n: int):
    return [(rng.integers(0, 5, n), list("ABCDE")), (rng.integers(0, 4, n), list("wxyz"))]


@pytest.mark.parametrize("seed", range(5))
def test_floor_top_read_off_top_is_the_second_pass(seed):
    rng = np.random.default_rng(seed)
    n = 400
    cats = _cats(rng, n)
    resp = np.round(rng.lognormal(3, 1.5, n), 2)
    shared = build_fine(cats, resp, resp.copy(), None, 3)  # the shadow is the response
    other = resp.copy()
    other[0] += 1.0  # a shadow that differs: the floors' own pass
    apart = build_fine(cats, resp, other, None, 3)
    assert shared.floor_top is not None and apart.floor_top is not None
    assert np.array_equal(shared.floor_top, apart.floor_top)
    assert shared.floor_top is not shared.top
    assert shared.low == apart.low == float(resp.min())
    count = build_fine(cats, None, None, None, 3)
    assert count.floor_top is not None and count.low == 1.0
    assert np.array_equal(count.floor_top, np.minimum(count.freq[:, None], [1, 1, 1]) * (
        np.arange(3)[None, :] < count.freq[:, None]))  # fmt: skip
    neg = resp - 50.0  # negatives: the floors' own pass (clipped at 0), low below 0
    signed = build_fine(cats, neg, neg.copy(), None, 3)
    assert signed.low < 0 and (signed.floor_top >= 0).all()
