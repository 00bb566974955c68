"""Cleanup of a protected pattern (argusqt/docs/methods.md §4): publish again every secondary not
needed.

Secondaries are visited by decreasing cost. Every (primary, direction) keeps a witness:
an attacker move through suppressed cells that shifts the primary by its protection
level. Publishing a cell only endangers the pairs whose witness uses it, so only those are
re-checked, each with a small LP on the primary's neighbourhood (the whole suppressed set
when it is small). If all of them find another witness, the cell stays published.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterator

import numpy as np

from argusqt.model.smallcsr import pattern_of
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.components import DOWN, UP, MoveContext

Key = tuple[int, int]  # (primary cell, direction)


class Witnesses:
    """Moves found so far and, per (primary, direction), the move that proves it."""

    def __init__(self) -> None:
        self.moves: list[np.ndarray] = []
        self.shifts: list[np.ndarray] = []
        self.of: dict[Key, int] = {}
        #: every move that proves a pair (not only its witness): another proof when the
        #: witness loses a cell, without an LP
        self.proven_by: dict[Key, list[int]] = defaultdict(list)
        self._proves: list[list[Key]] = []

    def add_move(self, idx: np.ndarray, d: np.ndarray, ctx: MoveContext) -> int:
        """Record a move (cells idx, shifts d) and assign it to every pair it proves."""
        mid = self.record(idx, d, ctx)
        for key in self.proves_of(mid):
            self.of.setdefault(key, mid)
        return mid

    def record(self, idx: np.ndarray, d: np.ndarray, ctx: MoveContext) -> int:
        """Keep a move and the pairs it proves (without making it anyone's witness)."""
        mid = len(self.moves)
        idx = np.asarray(idx, dtype=np.int64)
        self.moves.append(idx)
        self.shifts.append(np.asarray(d, dtype=float))
        up, dn = ctx.proves(idx, d)
        self._proves.append(
            [(q, UP) for q in idx[up].tolist()] + [(q, DOWN) for q in idx[dn].tolist()]
        )
        for key in self._proves[mid]:
            self.proven_by[key].append(mid)
        return mid

    def proves_of(self, mid: int) -> list[Key]:
        return self._proves[mid]

    def other_proof(self, key: Key, sup: np.ndarray) -> int | None:
        """A kept move proving `key` whose cells are all suppressed in `sup`, or None."""
        for mid in reversed(self.proven_by.get(key, ())):
            if sup[self.moves[mid]].all():
                return mid
        return None

    def ensure(self, cell: int, direction: int, idx: np.ndarray) -> None:
        """The LP was built to move `cell`: its witness is the last move even if rounding hid it."""
        self.of.setdefault((cell, direction), len(self.moves) - 1)

    def covered(self, cell: int, direction: int, ctx: MoveContext) -> bool:
        return ctx.required(cell, direction) <= 0 or (cell, direction) in self.of

    def forget(self, cells) -> None:
        for c in np.asarray(cells).tolist():
            self.of.pop((int(c), UP), None)
            self.of.pop((int(c), DOWN), None)

    def hints(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The moves that currently prove some pair, as (cells, shifts) for the audit."""
        return [(self.moves[m], self.shifts[m]) for m in sorted(set(self.of.values()))]


class WitnessUsers:
    """Per cell, the pairs whose witness move uses it, read from the moves indexed by cell and
    the pairs each move is the witness of: a pair given another witness is one update, not
    one per cell of both moves (D-71: on b97768's clean-up 4.8 M (cell, pair) entries were
    built and 2 M removed again, 2 CPU-s; the index holds 0.28 M)."""

    def __init__(self, wit: Witnesses):
        self.wit = wit
        self.keys_of: dict[int, set[Key]] = defaultdict(set)  # move → the pairs it witnesses
        for key, mid in wit.of.items():
            self.keys_of[mid].add(key)
        n = len(wit.moves)
        self.n_indexed = n  # moves recorded later are indexed once a witness (`later`)
        if n:
            sizes = np.fromiter((m.size for m in wit.moves), dtype=np.int64, count=n)
            cells = np.concatenate(wit.moves).astype(np.int64)
            order = np.argsort(cells, kind="stable")
            self.cells = cells[order]
            self.mids = np.repeat(np.arange(n, dtype=np.int64), sizes)[order]
        else:
            self.cells = self.mids = np.zeros(0, dtype=np.int64)
        self.later: dict[int, list[int]] = defaultdict(list)
        self._indexed_later: set[int] = set()

    def of_cell(self, cell: int) -> set[Key]:
        """The pairs whose witness uses `cell`."""
        lo, hi = np.searchsorted(self.cells, (cell, cell + 1)).tolist()
        out: set[Key] = set()
        for mid in self.mids[lo:hi].tolist() + self.later.get(cell, []):
            keys = self.keys_of.get(mid)
            if keys:
                out |= keys
        return out

    def change(self, key: Key, old: int, new: int) -> None:
        """`key`'s witness becomes move `new` (it was `old`)."""
        self.keys_of[old].discard(key)
        self.keys_of[new].add(key)
        if new >= self.n_indexed and new not in self._indexed_later:
            self._indexed_later.add(new)
            for c in self.wit.moves[new].tolist():
                self.later[c].append(new)


class PathMemo:
    """The clean-up's path LPs by their exact input, the last `size` of them: the same LP
    gives the same answer (HiGHS, one thread, a fixed seed, each LP passed whole), so one
    met again is not solved again (D-79: 377 of b97768's 11,007). Valid for one
    MoveContext whose bounds and movable cells stay as they are (one clean-up)."""

    def __init__(self, size: int = 2048):
        self.size = size
        self.hits = 0
        self._lps: OrderedDict[tuple[int, int, bytes, bytes], np.ndarray | None] = OrderedDict()

    def path_move(
        self, ctx: MoveContext, cell: int, direction: int, cells: np.ndarray, permanent: np.ndarray
    ) -> np.ndarray | None:
        """`ctx.path_move` with find_witness's costs (fixed by `permanent[cells]`)."""
        perm = permanent[cells]
        # cells as int32 (ids below 2³¹), the costs' two values as bits: ≈ 4 bytes a cell
        # in the key, 8 in the answer kept beside it — ≤ 2,048 × 12 bytes × the area's cells
        # (b97768's peak 550 MB with it as without, D-79)
        key = (
            cell,
            direction,
            np.asarray(cells, dtype=np.int32).tobytes(),
            np.packbits(perm).tobytes(),
        )
        if key in self._lps:
            self._lps.move_to_end(key)
            self.hits += 1
            ctx.forget_last_lp()  # no LP solved now: path_move_again must not re-solve another
            return self._lps[key]
        d = ctx.path_move(cell, direction, cells, _witness_cost(perm))
        self._lps[key] = d
        if len(self._lps) > self.size:
            self._lps.popitem(last=False)
        return d


def find_witness(
    ctx: MoveContext,
    key: Key,
    sup: np.ndarray,
    permanent: np.ndarray,
    max_full: int,
    memo: PathMemo | None = None,
    failed: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """A move for `key` using suppressed cells only (permanent ones preferred), or None.
    `memo`: the clean-up's LPs met before (the same `ctx`, its bounds unchanged).
    `failed`: masks of areas without a move for `key` in this `ctx` (kept by the caller):
    an area within one has none either (fewer cells free), so its LP is skipped (D-105)."""
    cell, direction = key
    for cells in _witness_areas(ctx, cell, sup, max_full):
        if failed is not None and any(bool(f[cells].all()) for f in failed):
            continue
        if memo is not None:
            d = memo.path_move(ctx, cell, direction, cells, permanent)
        else:
            d = ctx.path_move(cell, direction, cells, _witness_cost(permanent[cells]))
        if d is not None:
            moved = d != 0
            return cells[moved], d[moved]
        if failed is not None:
            area = np.zeros(sup.shape[0], dtype=bool)
            area[cells] = True
            failed.append(area)
    return None


def _witness_cost(permanent: np.ndarray) -> np.ndarray:
    """A witness's cost per unit of movement of its cells: the permanent ones preferred."""
    return np.where(permanent, 1e-3, 1.0)


def _witness_areas(
    ctx: MoveContext, cell: int, sup: np.ndarray, max_full: int
) -> Iterator[np.ndarray]:
    """find_witness's cell sets in turn, each made only when the one before had no move, and
    one equal to the one before skipped: the same LP has the same answer (D-71: 1,025 of
    b97768's 4,094 second LPs of the clean-up were the first again)."""
    last: np.ndarray | None = None
    if ctx.grid is not None:
        score = _SupScore(sup)
        for climb in (1, 1 << 30):
            n = ctx.grid.neighbourhood(cell, score, k_free=0, k_sup=1 << 30, climb=climb)
            n = n[sup[n]]
            if last is None or not np.array_equal(n, last):
                last = n
                yield n
    if int(sup.sum()) <= max_full:
        every = np.flatnonzero(sup)
        if last is None or not np.array_equal(every, last):
            yield every


def _exposes_primary(s, rel, mcsc, count, sup, needs) -> bool:
    """Publishing s leaves a relation with one suppressed cell, a protected primary: fail fast."""
    rows = mcsc.indices[mcsc.indptr[s] : mcsc.indptr[s + 1]]
    for r in rows[count[rows] == 2].tolist():
        cells = rel.indices[rel.indptr[r] : rel.indptr[r + 1]]
        other = cells[sup[cells] & (cells != s)]
        if other.size == 1 and needs[other[0]]:
            return True
    return False


def _likely_failures_first(s: int, pairs, rel, mcsc) -> list[Key]:
    """The pairs to re-check after publishing s, those of primaries sharing a relation with s
    first: they are the ones that usually find no other witness, and a removal stops at its
    first failure (docs/design.md, D-13, HEUR's clean-up)."""
    pairs = sorted(pairs)
    rows = mcsc.indices[mcsc.indptr[s] : mcsc.indptr[s + 1]]
    if not pairs or rows.size == 0:
        return pairs
    near = set(
        np.concatenate([rel.indices[rel.indptr[r] : rel.indptr[r + 1]] for r in rows]).tolist()
    )
    return [k for k in pairs if k[0] in near] + [k for k in pairs if k[0] not in near]


class _SupScore:
    """0 for suppressed cells, inf otherwise (neighbourhoods of suppressed cells only)."""

    def __init__(self, sup: np.ndarray):
        self.sup = sup

    def __getitem__(self, idx):
        return np.where(self.sup[idx], 0.0, np.inf)


def cleanup(
    problem: CSPProblem,
    suppressed: np.ndarray,
    witnesses: Witnesses | None = None,
    *,
    ctx: MoveContext | None = None,
    time_limit: float | None = None,
    max_lps: int | None = None,
    max_full: int = 3000,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> tuple[np.ndarray, dict]:
    """Publish again the secondaries that are not needed; returns (suppressed, info).

    The pattern stays protected after every step (each pair keeps a witness), so a
    time limit, an LP budget (`max_lps`: the same result on every run) or a cancel simply
    stops early with a safe pattern. A cell is kept when
    no witness is found on the neighbourhood (and, if at most `max_full` cells are
    suppressed, on the whole suppressed set): on big tables the result may keep a few
    redundant cells. Pairs without any witness at the start are not protected and are
    left to the audit.
    """
    watch = Stopwatch()
    ctx = ctx or MoveContext(problem)
    sup = np.asarray(suppressed, dtype=bool).copy()
    perm = ctx.primary & sup
    n_lps = 0
    if witnesses is None:
        witnesses = Witnesses()
        for cell in np.flatnonzero(ctx.primary & sup):
            for direction in (UP, DOWN):
                if witnesses.covered(int(cell), direction, ctx):
                    continue
                found = find_witness(ctx, (int(cell), direction), sup, perm, max_full)
                n_lps += 1
                if found is not None:
                    witnesses.add_move(found[0], found[1], ctx)
                    witnesses.ensure(int(cell), direction, found[0])
    users = WitnessUsers(witnesses)
    rel = problem.relations_small.tocsr()
    pattern = pattern_of(rel)
    count = pattern @ sup.astype(float)  # suppressed cells per relation
    needs = (ctx.lpl > 0) | (ctx.upl > 0)
    cost = np.abs(np.asarray(problem.cost, dtype=float))
    cand = np.flatnonzero(sup & ~ctx.primary)
    cand = cand[np.argsort(-cost[cand], kind="stable")]
    memo = PathMemo()
    removed = 0
    n_reused = 0  # pairs proved again by a kept move instead of an LP
    stopped: str | bool = False
    for n, s in enumerate(cand.tolist()):
        if cancel is not None and cancel.cancelled:
            stopped = "cancelled"
        elif time_limit is not None and watch.elapsed > time_limit:
            stopped = "time limit"
        elif max_lps is not None and n_lps >= max_lps:
            stopped = "LP budget"
        if stopped:
            break
        if _exposes_primary(s, rel, ctx.mcsc, count, sup, needs):
            perm[s] = True
            continue
        affected = _likely_failures_first(s, users.of_cell(s), rel, ctx.mcsc)
        sup[s] = False
        new: dict[Key, int] = {}
        ok = True
        pending = set(affected)
        for key in affected:
            if key not in pending:
                continue
            mid = witnesses.other_proof(key, sup)
            if mid is None:
                found = find_witness(ctx, key, sup, perm, max_full, memo)
                n_lps += 1
                if found is None:
                    ok = False
                    break
                mid = witnesses.record(found[0], found[1], ctx)
                n_reused -= 1
            n_reused += 1
            new[key] = mid
            pending.discard(key)
            for q in witnesses.proves_of(mid):
                if q in pending:
                    new[q] = mid
                    pending.discard(q)
        if not ok:
            sup[s] = True
            perm[s] = True
            continue
        removed += 1
        count[ctx.mcsc.indices[ctx.mcsc.indptr[s] : ctx.mcsc.indptr[s + 1]]] -= 1
        for key, mid in new.items():
            users.change(key, witnesses.of[key], mid)
            witnesses.of[key] = mid
        if n % 200 == 0:
            progress(
                ProgressEvent(
                    message=f"Cleanup: {n + 1} of {cand.size} secondaries visited, {removed} published",
                    fraction=(n + 1) / max(cand.size, 1),
                    incumbent=float(cost[sup & ~ctx.primary].sum()),
                    elapsed=watch.elapsed,
                )
            )
    info = {
        "removed": removed,
        "lps": n_lps,
        "reused": n_reused,
        "replayed": memo.hits,
        "elapsed": watch.elapsed,
    }
    return sup, info | {"stopped": stopped}
