"""A block's attacker LPs met again at the same point, replayed (docs/design.md, D-72).

Without remembered moves (Separator.reuse off) the outcomes of a block are a function of
the block (its cells and relations), its cells' move bounds (the master point there), its
targets and the sweep flag alone: its HiGHS model is passed afresh and solved from scratch
with a fixed seed. MOD's branch-and-cut of a depth's subtables side by side asks every
subtable again in each round, most at the point they had (D-63): those blocks are replayed
instead of solved, with the attacker LPs they took counted again, so the work budget is
spent as before and the search, its cuts and its pattern stay the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from argusqt.protection.lp.separation import AttackerOutcome, Cancellable, Separator

#: (None, the coverage LPs) then (each target's outcome or None, the attacker LPs it took);
#: whether every target was seen
Entry = tuple[list[tuple["AttackerOutcome | None", int]], bool]


class BlockMemo:
    """Outcomes of the blocks a Separator solved, by block and point; bounded in bytes."""

    #: keys and outcomes kept at most (oldest dropped first)
    MAX_BYTES = 16 * 2**20

    def __init__(self) -> None:
        self.entries: dict[bytes, tuple[Entry, int]] = {}
        self.size = 0
        self.hits = 0  # blocks replayed
        self.spared = 0  # attacker LPs not solved again (still counted as work)

    def replay(
        self,
        sep: Separator,
        args: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool],
        out: list[AttackerOutcome],
        stop_at_first: bool,
        cancel: Cancellable | None,
    ) -> bool:
        """Separator._separate_block, from memory when this block was solved at this point
        before (a partial entry, ended by a failure, serves a `stop_at_first` call only)."""
        cells, rows, targets, lo, hi, sweep = args
        # the lengths first, so that no two blocks' bytes run together into one key
        sizes = np.array([cells.size, rows.size, targets.size, lo.size, hi.size], np.int64)
        key = b"".join(
            (
                sizes.tobytes(),
                cells.tobytes(),
                rows.tobytes(),
                targets.tobytes(),
                lo.tobytes(),
                hi.tobytes(),
                b"s" if sweep else b"-",
            )
        )
        got = self.entries.get(key)
        if got is not None and (got[0][1] or stop_at_first):
            self.hits += 1
            (_, sweep_lps), *targets_done = got[0][0]
            sep.n_lps += sweep_lps  # the coverage LPs came before the first poll
            self.spared += sweep_lps
            for res, lps in targets_done:
                if cancel is not None and cancel.cancelled:
                    sep.interrupted = True
                    return True
                sep.n_lps += lps
                self.spared += lps
                if res is not None:
                    out.append(res)
                    if stop_at_first:
                        return True
            return False
        record: list[tuple[AttackerOutcome | None, int]] = []
        stopped = sep._separate_block(*args, out, stop_at_first, cancel, record)
        if not sep.interrupted:
            self._keep(key, (record, not stopped))
        return stopped

    def _keep(self, key: bytes, entry: Entry) -> None:
        """Store an entry, dropping the oldest ones beyond MAX_BYTES."""
        old = self.entries.pop(key, None)
        if old is not None:
            self.size -= old[1]
        nbytes = len(key) + sum(
            64 + sum(c.cells.nbytes * 2 + c.raw_cells.nbytes * 2 for c in res.cuts)
            for res, _ in entry[0]
            if res is not None
        )
        self.entries[key] = (entry, nbytes)
        self.size += nbytes
        while self.size > self.MAX_BYTES and len(self.entries) > 1:
            _, dropped = self.entries.pop(next(iter(self.entries)))
            self.size -= dropped
