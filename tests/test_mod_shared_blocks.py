"""MOD's two searches of a subtable under the floors share their blocks' outcomes (D-101):
the second search replays what the first solved at the same point, its LPs counted, so
the searches, the patterns and the work are those without the memo."""

from __future__ import annotations

import numpy as np
import pytest
from test_insider_floors import secondary_cost_of

from argusqt.protection.lp.block_memo import BlockMemo
from argusqt.protection.suppress import branch_and_cut, modular


@pytest.mark.parametrize("seed", [0, 2, 5])
def test_the_floors_search_replays_the_first_searchs_blocks(monkeypatch, seed):
    seen: list[tuple[BlockMemo, int]] = []  # (memo, its replays) per search, kept alive
    real = branch_and_cut.solve_pattern

    def counted(*a, **kw):
        memo = kw.get("memo_blocks")
        before = memo.hits if isinstance(memo, BlockMemo) else 0
        out = real(*a, **kw)
        if isinstance(memo, BlockMemo):
            seen.append((memo, memo.hits - before))
        return out

    monkeypatch.setattr(modular, "solve_pattern", counted)
    # the floors' search itself, not its skip when the first pattern passes (D-104)
    monkeypatch.setattr(modular, "SKIP_PROVEN_FLOORS", False)
    cost, table = secondary_cost_of(seed, "MOD")
    monkeypatch.setattr(modular, "MEMO_BLOCKS", False)
    plain_cost, plain = secondary_cost_of(seed, "MOD")
    np.testing.assert_array_equal(np.asarray(table.status), np.asarray(plain.status))
    assert cost == plain_cost
    # a memo met in two searches, the second replaying blocks
    shared = [h for k, (m, h) in enumerate(seen) if any(m is e for e, _ in seen[:k])]
    assert shared and sum(shared) > 0
