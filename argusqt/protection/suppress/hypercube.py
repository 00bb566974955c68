"""Hypercube suppression as GHMITER does it (argusqt/docs/methods.md §7), ended by our audit.

A suppressed cell of a table without substructure cannot be recomputed exactly when it is a
corner of a 2ᵏ-corner box of suppressed cells: moving the corners alternately up and down
keeps every relation. The attacker knows every cell within ± the a-priori percentage of its
value (and within the table's bounds), so a box protects its target by the smallest room of
its corners in the direction each must move. Hierarchical tables are cut into the
non-hierarchical subtables of the modular method and protected top down; a cell chosen in
one subtable becomes a target, with the movement the box needs of it, in the others it
belongs to, until nothing changes. Boxes protect subtable by subtable only, so the pattern
then goes through the full-table audit and the modular method's repair step.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import MethodError
from argusqt.model.status import is_candidate, is_primary, is_secondary
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit.publication import CANCEL_GRACE
from argusqt.protection.core.budget import Deadline
from argusqt.protection.core.options import SuppressOptions
from argusqt.protection.core.params import MethodParams, TableFacts, param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult
from argusqt.protection.lp.cleanup import cleanup
from argusqt.protection.lp.separation import require_additive
from argusqt.protection.suppress.epilogue import final_audit, suppression_result
from argusqt.protection.suppress.subtables import Subtable, _table_part, subtables
from argusqt.protection.suppress.table_repair import repair

#: τ-Argus's memory settings (max sub-codelist size, max subtable size): normal and large model
NORMAL_MODEL = (200, 6000)
LARGE_MODEL = (250, 25000)
#: boxes one target may take to add up its protection (GHMITER takes one)
MAX_BOXES_PER_TARGET = 8
#: a subtable may be processed again this many times per subtable before the search stops
#: and the repair step takes over (demands only grow, so this is a guard, not the rule)
MAX_VISITS_PER_SUBTABLE = 20


@dataclass(frozen=True)
class HypercubeOptions:
    """What the batch parameters and the dialog set (internal knobs have defaults)."""

    apriori_percent: float = 100.0
    large_model: bool = False
    singletons: bool = True
    max_time: float | None = None
    #: "cost": the table's costs of the new corners per unit of protection; "count": the
    #: number of new corners (GHMITER's first criterion), costs breaking ties
    ranking: str = "cost"

    @classmethod
    def from_options(cls, p: GhOptions) -> HypercubeOptions:
        pct = float(p.apriori_percent)
        if not pct > 0:
            raise MethodError(f"hypercube: the a-priori bounds percentage must be > 0, got {pct:g}")
        size = p.model_size if p.large_model is None else p.large_model
        ranking = str(p.ranking)
        if ranking not in ("cost", "count"):
            raise MethodError(f"hypercube: ranking must be 'cost' or 'count', got {ranking!r}")
        return cls(
            apriori_percent=pct,
            large_model=bool(int(size or 0)),
            singletons=bool(p.singleton_protection),
            max_time=None if p.max_time is None else float(p.max_time),
            ranking=ranking,
        )


@dataclass(frozen=True, kw_only=True)
class GhOptions(SuppressOptions):
    """What solve_hypercube reads (see its docstring); HypercubeOptions is what the box search
    derives from them."""

    apriori_percent: float = 100.0
    model_size: int = 0  # 0 normal, 1 large
    large_model: bool | None = None  # overrides model_size when given
    singleton_protection: bool = True
    ranking: str = "cost"  # or "count"
    #: linked tables: which subtables to search (None: all)
    subtable_filter: Callable[[Subtable], bool] | None = None


def check_model_size(dims, subs: list[Subtable], large: bool) -> str | None:
    """MethodError when the normal model is too small (as τ-Argus); a note beyond the large one.

    argusqt allocates as it goes, so the large model takes any size; beyond τ-Argus's large
    limits it only says so (τ-Argus would refuse the table).
    """
    widest = max((len(c) for d in dims for c in d.children), default=0)
    biggest = max((s.cells.size for s in subs), default=0)
    codes, cells = LARGE_MODEL if large else NORMAL_MODEL
    if widest < codes and biggest < cells:
        return None
    what = (
        f"a sub-codelist of {widest} codes (limit {codes})"
        if widest >= codes
        else f"a subtable of {biggest} cells (limit {cells})"
    )
    if not large:
        raise MethodError(
            f"hypercube: the table has {what} for the normal model size; use the large model "
            "(GH(t, percentage, 1) in a batch file) or add a hierarchy level"
        )
    return f"the table has {what} for τ-Argus's large model; argusqt protects it anyway"


class _Geometry:
    """Which subtables each cell belongs to (as margin or interior, ≤ 2ᵏ of them)."""

    def __init__(self, dims, subs: list[Subtable]):
        self.shape = tuple(len(d) for d in dims)
        self.index = {s.parents: k for k, s in enumerate(subs)}
        self.parent = [np.asarray(d.parent) for d in dims]
        self.is_parent = [np.array([bool(c) for c in d.children]) for d in dims]

    def containing(self, cell: int) -> list[int]:
        coords = np.unravel_index(int(cell), self.shape)
        options = []
        for d, c in enumerate(coords):
            opts = []
            if self.parent[d][c] >= 0:
                opts.append(int(self.parent[d][c]))
            if self.is_parent[d][c]:
                opts.append(int(c))
            options.append(opts)
        out = []
        for combo in _product(options):
            k = self.index.get(combo)
            if k is not None:
                out.append(k)
        return out


def _product(options: list[list[int]]) -> list[tuple[int, ...]]:
    combos: list[tuple[int, ...]] = [()]
    for opts in options:
        combos = [c + (o,) for c in combos for o in opts]
    return combos


@dataclass
class _Box:
    """A chosen hypercube of a subtable: two local coordinates per dimension (target first)."""

    first: tuple[int, ...]
    other: tuple[int, ...]

    def corners(self, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Local flat indices of the 2ᵏ corners and their move signs (target +1)."""
        k = len(shape)
        picks = np.array(list(np.ndindex(*(2,) * k)))  # 0 = first, 1 = other
        coords = np.where(picks == 0, np.array(self.first), np.array(self.other))
        flat = np.asarray(np.ravel_multi_index(tuple(coords.T), shape))
        interior_pair = (np.array(self.first) != 0) & (np.array(self.other) != 0)
        # along a dimension where both are interior the two corners move oppositely; where one
        # is the margin (their sum) they move together
        flips = (picks == 1) & interior_pair
        sign = np.where(flips.sum(axis=1) % 2 == 0, 1.0, -1.0)
        return flat, sign


class _SubState:
    """Per-subtable memory: widths each cell's boxes give it and how many boxes it is in."""

    def __init__(self, sub: Subtable):
        n = sub.cells.size
        self.width_up = np.zeros(n)
        self.width_dn = np.zeros(n)
        #: the need a cell had when it was last settled here (with a reduced box, or none):
        #: it is a target again only when its need grows beyond that
        self.settled_up = np.zeros(n)
        self.settled_dn = np.zeros(n)
        self.n_boxes = np.zeros(n, dtype=np.int64)
        self.boxes_of: dict[int, list[_Box]] = {}
        self.visits = 0


class HypercubeSearch:
    """State of one run: suppressed cells, what each must be able to move, chosen boxes."""

    def __init__(
        self, problem: CSPProblem, dims: list, subs: list[Subtable], opts: HypercubeOptions
    ):
        self.problem = problem
        self.subs = subs
        self.opts = opts
        values = np.asarray(problem.values, dtype=float)
        span = np.abs(values) * opts.apriori_percent / 100.0
        # room of each cell for the attacker: the a-priori percentage within the table bounds
        self.room_up = np.maximum(0.0, np.minimum(span, np.asarray(problem.upper) - values))
        self.room_dn = np.maximum(0.0, np.minimum(span, values - np.asarray(problem.lower)))
        status = np.asarray(problem.status)
        prim = is_primary(status)
        self.sup = prim | is_secondary(status)
        # corners: suppressed cells, or candidates that are not zero (zero cells are frozen)
        self.allowed = self.sup | (is_candidate(status) & (values != 0))
        self.need_up = np.where(prim, np.asarray(problem.upl, dtype=float), 0.0)
        self.need_dn = np.where(prim, np.asarray(problem.lpl, dtype=float), 0.0)
        self.cost = np.abs(np.asarray(problem.cost, dtype=float))
        freq = problem.freq
        self.singleton = (np.asarray(freq) == 1) if (opts.singletons and freq is not None) else None
        scale = float(np.abs(values).max()) if values.size else 1.0
        self.eps = 1e-9 * max(scale, 1.0)
        self.geometry = _Geometry(dims, subs)
        self.state = [_SubState(s) for s in subs]
        #: targets whose protection came from several boxes added up
        self.added_up = 0
        #: targets whose boxes give less than their need (left to the repair step)
        self.partial: set[int] = set()
        self.unprotected: set[int] = set()
        self.singles_short: set[int] = set()
        self.n_boxes = 0

    # ------------------------------------------------------------------ targets
    def _targets(self, k: int) -> np.ndarray:
        """Local cells of subtable k that are suppressed and not yet covered by its boxes."""
        sub, st = self.subs[k], self.state[k]
        c = sub.cells
        short = (self.need_up[c] > np.maximum(st.width_up, st.settled_up) + self.eps) | (
            self.need_dn[c] > np.maximum(st.width_dn, st.settled_dn) + self.eps
        )
        if self.singleton is not None:
            needs = (self.need_up[c] > 0) | (self.need_dn[c] > 0)
            short |= needs & self.singleton[c] & (st.n_boxes < 2)
        local = np.flatnonzero(self.sup[c] & short)
        # large needs first: their boxes then often cover the small ones
        order = np.argsort(
            -np.maximum(self.need_up[c[local]], self.need_dn[c[local]]), kind="stable"
        )
        return local[order]

    # ------------------------------------------------------------------ one subtable
    def process(self, k: int) -> list[int]:
        """Give every target of subtable k a box; returns the global cells that changed."""
        st = self.state[k]
        st.visits += 1
        changed: list[int] = []
        tried: set[int] = set()
        while True:
            todo = [int(t) for t in self._targets(k) if int(t) not in tried]
            if not todo:
                return changed
            for t in todo:
                tried.add(t)
                changed += self._protect_target(k, t)

    def _protect_target(self, k: int, t: int) -> list[int]:
        """Boxes for local cell t of subtable k until they give it its need (or none is left).

        Boxes that share only the target add up: moving each by its share keeps every
        relation, and no other corner moves twice. GHMITER takes one box per target and lowers
        the need when none suffices; here the cheapest box per unit of protection is taken
        until the need is met, and whatever is still missing is left to the repair step.
        """
        sub, st = self.subs[k], self.state[k]
        g = int(sub.cells[t])
        need_up, need_dn = self.need_up[g], self.need_dn[g]
        changed: list[int] = []
        short = need_up > st.width_up[t] + self.eps or need_dn > st.width_dn[t] + self.eps
        st.settled_up[t] = need_up
        st.settled_dn[t] = need_dn
        if short:
            # the target's own room bounds what its boxes together can move it
            rem_up = min(need_up, self.room_up[g])
            rem_dn = min(need_dn, self.room_dn[g])
            plan = self._plan(k, t, rem_up, rem_dn)
            if not plan:
                self.unprotected.add(g)
                return changed
            for box, give_up, give_dn in plan:
                changed += self._take(k, box, give_up, give_dn)
                rem_up -= give_up
                rem_dn -= give_dn
            st.width_up[t] = max(st.width_up[t], need_up - max(rem_up, 0.0))
            st.width_dn[t] = max(st.width_dn[t], need_dn - max(rem_dn, 0.0))
            if len(plan) > 1:
                self.added_up += 1
            if st.width_up[t] < need_up - self.eps or st.width_dn[t] < need_dn - self.eps:
                self.partial.add(g)
        if self.singleton is not None and self.singleton[g] and st.n_boxes[t] < 2:
            # a respondent alone in the cell knows it: a second box that shares only this corner
            found = self._cheapest_box(k, t, need_up, need_dn, st.boxes_of.get(t, []), self.sup)
            if found is None:
                self.singles_short.add(g)
            else:
                box, give_up, give_dn, _ = found
                changed += self._take(k, box, give_up, give_dn)
        return changed

    def _take(self, k: int, box: _Box, up: float, dn: float) -> list[int]:
        """Suppress the box's corners; record widths and the movement each corner must allow."""
        sub, st = self.subs[k], self.state[k]
        flat, sign = box.corners(sub.shape)
        cells = sub.cells[flat]
        w_up = self._box_width(cells, sign, +1)
        w_dn = self._box_width(cells, sign, -1)
        pos = sign > 0
        st.width_up[flat] = np.maximum(st.width_up[flat], np.where(pos, w_up, w_dn))
        st.width_dn[flat] = np.maximum(st.width_dn[flat], np.where(pos, w_dn, w_up))
        st.n_boxes[flat] += 1
        for f in flat.tolist():
            st.boxes_of.setdefault(int(f), []).append(box)
        self.n_boxes += 1
        dem_up = np.where(pos, up, dn)
        dem_dn = np.where(pos, dn, up)
        grew = (
            ~self.sup[cells]
            | (dem_up > self.need_up[cells] + self.eps)
            | (dem_dn > self.need_dn[cells] + self.eps)
        )
        self.sup[cells] = True
        self.need_up[cells] = np.maximum(self.need_up[cells], dem_up)
        self.need_dn[cells] = np.maximum(self.need_dn[cells], dem_dn)
        return cells[grew].tolist()

    def _box_width(self, cells: np.ndarray, sign: np.ndarray, direction: int) -> float:
        """How far the target (sign +1) moves in `direction` before some corner hits its room."""
        rise = np.where(sign * direction > 0, self.room_up[cells], self.room_dn[cells])
        return float(rise.min())

    # ------------------------------------------------------------------ the search
    def _plan(
        self, k: int, t: int, rem_up: float, rem_dn: float
    ) -> list[tuple[_Box, float, float]]:
        """The boxes to take for a target: one that gives all, or several that add up.

        Both plans are priced by the costs of their new corners; the cheaper one that gives the
        whole need wins. The added-up plan takes the cheapest box per unit of protection
        first, so a cheap box that gives little can make it dearer than one good box.
        """
        single = self._cheapest_box(k, t, rem_up, rem_dn, [], self.sup, whole=True)
        sup = self.sup.copy()
        chain: list[tuple[_Box, float, float]] = []
        chain_price = 0.0
        left_up, left_dn = rem_up, rem_dn
        while len(chain) < MAX_BOXES_PER_TARGET and (left_up > self.eps or left_dn > self.eps):
            found = self._cheapest_box(k, t, left_up, left_dn, [b for b, _, _ in chain], sup)
            if found is None:
                break
            box, give_up, give_dn, price = found
            chain.append((box, give_up, give_dn))
            chain_price += price
            flat, _ = box.corners(self.subs[k].shape)
            sup[self.subs[k].cells[flat]] = True
            left_up -= give_up
            left_dn -= give_dn
            if single is not None and chain_price >= single[3]:
                break  # already dearer than one box that gives everything
        complete = left_up <= self.eps and left_dn <= self.eps
        if single is not None and (not complete or single[3] <= chain_price):
            return [single[:3]]
        return chain

    def _cheapest_box(
        self,
        k: int,
        t: int,
        rem_up: float,
        rem_dn: float,
        exclude: list[_Box],
        suppressed: np.ndarray,
        whole: bool = False,
    ) -> tuple[_Box, float, float, float] | None:
        """The box with local cell t as a corner that costs least per unit of protection.

        Every choice s of the other coordinates (s_d ≠ t_d in each dimension) is scored at
        once: each of the 2ᵏ − 1 other corners is a slice of the subtable broadcast over the
        choices. Boxes in `exclude` share only t with the result; `whole`: only boxes that
        give the whole remaining need. Returns the box, what it gives the target (up, down),
        each at most the remaining need, and the cost of its new corners.
        """
        sub = self.subs[k]
        shape = sub.shape
        kdim = len(shape)
        tc = np.unravel_index(t, shape)
        c = sub.cells
        sup = suppressed[c].reshape(shape)
        allowed = self.allowed[c].reshape(shape)
        room_up = self.room_up[c].reshape(shape)
        room_dn = self.room_dn[c].reshape(shape)
        cost = self.cost[c].reshape(shape)
        axes = [np.arange(n) for n in shape]

        def along(d: int, vec: np.ndarray) -> np.ndarray:
            return vec.reshape([-1 if e == d else 1 for e in range(kdim)])

        ok = np.ones(shape, dtype=bool)
        for d in range(kdim):
            ok &= along(d, axes[d] != tc[d])
        for box in exclude:
            for d in range(kdim):
                other = box.other[d] if box.first[d] == tc[d] else box.first[d]
                ok &= along(d, axes[d] != other)
        if not ok.any():
            return None
        # signs per dimension: a corner at s_d moves against the target unless one is the margin
        sig = [along(d, np.where((axes[d] == 0) | (tc[d] == 0), 1.0, -1.0)) for d in range(kdim)]
        up = np.full(shape, room_up[tc])
        dn = np.full(shape, room_dn[tc])
        n_new = np.zeros(shape)
        c_new = np.zeros(shape)
        for mask in range(1, 1 << kdim):
            idx = tuple(
                slice(None) if mask >> d & 1 else slice(tc[d], tc[d] + 1) for d in range(kdim)
            )
            sign = np.ones([1] * kdim)
            for d in range(kdim):
                if mask >> d & 1:
                    sign = sign * sig[d]
            ru, rd = room_up[idx], room_dn[idx]
            up = np.minimum(up, np.where(sign > 0, ru, rd))
            dn = np.minimum(dn, np.where(sign > 0, rd, ru))
            new = ~sup[idx]
            ok = ok & allowed[idx]
            n_new = n_new + new
            c_new = c_new + np.where(new, cost[idx], 0.0)
        give_up = np.minimum(up, max(rem_up, 0.0)).ravel()
        give_dn = np.minimum(dn, max(rem_dn, 0.0)).ravel()
        # share of the remaining need a box gives, over the directions still needed
        share = np.zeros(give_up.size)
        if rem_up > self.eps:
            share += give_up / rem_up
        if rem_dn > self.eps:
            share += give_dn / rem_dn
        full = int(rem_up > self.eps) + int(rem_dn > self.eps)
        enough = share >= full - 1e-9 if whole else share > 1e-9
        cand = np.flatnonzero(ok.ravel() & enough)
        if cand.size == 0:
            return None
        price = (n_new if self.opts.ranking == "count" else c_new).ravel()[cand] / share[cand]
        tie = n_new.ravel()[cand] if self.opts.ranking == "cost" else c_new.ravel()[cand]
        best = int(cand[np.lexsort((tie, -share[cand], price))[0]])
        s = np.unravel_index(best, shape)
        box = _Box(tuple(int(x) for x in tc), tuple(int(x) for x in s))
        return box, float(give_up[best]), float(give_dn[best]), float(c_new.ravel()[best])


def _box_search(
    problem: CSPProblem,
    subs: list[Subtable],
    use: list[bool],
    search: HypercubeSearch,
    deadline: Deadline,
    cancel: CancelToken | None,
    progress: ProgressCallback,
    watch: Stopwatch,
) -> tuple[set[int], int, bool, bool, bool]:
    """Phase 1: boxes subtable by subtable, top-down, a subtable again when a later box
    changed one of its cells; (subtables done, visits, cancelled, timed out, capped)."""
    heap = [(s.depth, k) for k, s in enumerate(subs) if use[k]]
    heapq.heapify(heap)
    queued = np.array(use, dtype=bool)
    done: set[int] = set()
    visits = 0
    cancelled = timed_out = capped = False
    while heap:
        if cancel is not None and cancel.cancelled:
            cancelled = True
            break
        if deadline.expired:
            timed_out = True
            break
        _, k = heapq.heappop(heap)
        queued[k] = False
        if search.state[k].visits >= MAX_VISITS_PER_SUBTABLE:
            capped = True
            continue
        changed = search.process(k)
        visits += 1
        done.add(k)
        for cell in changed:
            for j in search.geometry.containing(cell):
                if j != k and use[j] and not queued[j]:
                    queued[j] = True
                    heapq.heappush(heap, (subs[j].depth, j))
        progress(
            ProgressEvent(
                message=f"Hypercube: subtable {len(done)} of {sum(use)} ({visits} visits)",
                fraction=len(done) / max(sum(use), 1),
                incumbent=float(search.cost[search.sup & ~problem.primary].sum()),
                elapsed=watch.elapsed,
            )
        )
    return done, visits, cancelled, timed_out, capped


def _search_log(
    search: HypercubeSearch,
    opts: HypercubeOptions,
    n_done: int,
    visits: int,
    n_box: int,
    capped: bool,
    cancelled: bool,
    timed_out: bool,
) -> list[str]:
    """What the box search did and left to the repair step, for the log."""
    log: list[str] = []
    log.append(
        f"hypercubes: {search.n_boxes} boxes in {n_done} subtables ({visits} visits), "
        f"{n_box} secondary cells, a-priori bounds {opts.apriori_percent:g} %"
        + (", large model" if opts.large_model else "")
    )
    if search.added_up:
        log.append(f"hypercubes: {search.added_up} targets protected by several boxes added up")
    if search.partial:
        log.append(
            f"hypercubes: {len(search.partial)} targets get less than their need from boxes; "
            "left to the repair step"
        )
    if search.unprotected:
        log.append(
            f"hypercubes: {len(search.unprotected)} targets without any box (zero, empty or "
            "protected cells around them); left to the repair step"
        )
    if search.singles_short:
        log.append(
            f"hypercubes: {len(search.singles_short)} singleton cells in one box only; left to "
            "the insider audit"
        )
    if capped:
        log.append("hypercubes: visits per subtable capped; the repair step completes the pattern")
    if cancelled:
        log.append("hypercubes: cancelled; the repair step completes the pattern")
    if timed_out:
        log.append("hypercubes: time limit reached; the repair step completes the pattern")
    return log


def solve_hypercube(
    problem: CSPProblem,
    params: GhOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Boxes subtable by subtable, then the full audit and the modular repair; statuses 11/12.

    params: apriori_percent (100), model_size / large_model (0/1), singleton_protection
    (True), max_time (seconds, None), cleanup (True: publish again the secondaries the audited
    pattern does not need), subtable_filter (linked tables), audit_intervals.
    On cancel or time-out the box search stops; the repair step completes the pattern if it
    fits in CANCEL_GRACE seconds after a cancel (else Cancelled: no pattern).
    """
    given = GhOptions.of(params)
    opts = HypercubeOptions.from_options(given)
    watch = Stopwatch()
    deadline = Deadline(opts.max_time)
    if not problem.dims:
        raise MethodError("the hypercube method needs the table's dimensions (codelists)")
    dims = list(problem.dims)
    require_additive(problem)
    full = problem
    problem = _table_part(full)
    subs = subtables(dims)
    log: list[str] = []
    note = check_model_size(dims, subs, opts.large_model)
    if note:
        log.append(note)
    only = given.subtable_filter
    use = [only is None or bool(only(s)) for s in subs]
    search = HypercubeSearch(problem, dims, subs, opts)
    if search.singleton is None and opts.singletons and problem.freq is None:
        log.append("singleton protection off: the table has no respondent counts")
    done, visits, cancelled, timed_out, capped = _box_search(
        problem, subs, use, search, deadline, cancel, progress, watch
    )
    sup = search.sup.copy()
    n_box = int((sup & ~problem.primary).sum())
    log += _search_log(search, opts, len(done), visits, n_box, capped, cancelled, timed_out)
    # virtual cells of a caller (singleton options of other methods) stay suppressed
    n_extra = full.n_cells - problem.n_cells
    if n_extra:
        sup = np.r_[sup, full.primary[problem.n_cells :]]
    problem = full
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    before = sup.copy()
    progress(ProgressEvent(message="Hypercube: full-table audit and repair"))
    sup, rounds = repair(problem, sup, grace, progress)
    added = int((sup & ~before).sum())
    log.append(
        f"repair after the full-table audit: {added} cells added in {rounds} rounds"
        if added
        else "full-table audit: the hypercube pattern passes, no repair needed"
    )
    if given.cleanup and not cancelled and not timed_out:
        # boxes are chosen one target at a time, so later boxes often make earlier corners
        # redundant: publish those again (each primary keeps an attacker move as witness)
        n_kept = int((sup & ~problem.primary).sum())
        sup, info = cleanup(
            problem,
            sup,
            time_limit=deadline.part(0.8),
            progress=progress,
            cancel=cancel,
        )
        log.append(
            f"clean-up: {info['removed']} of {n_kept} secondary cells published again, "
            f"{info['lps']} LPs ({info['elapsed']:.1f} s)"
            + (f" — stopped early ({info['stopped']})" if info["stopped"] else "")
        )
        cancelled = cancel is not None and cancel.cancelled
        timed_out = info["stopped"] == "time limit"
        # the clean-up keeps a witness only for primaries it finds one for on a neighbourhood
        # (7,290-cell 3-D table: 1 of 1,408 primaries lost its protection): repair again
        before = sup.copy()
        sup, more = repair(problem, sup, grace, progress)
        again = int((sup & ~before).sum())
        added += again
        rounds += more
        if again:
            log.append(f"repair after the clean-up: {again} cells added in {more} rounds")
    final, exact = final_audit(problem, sup, given.audit_intervals, grace)
    if not final.ok:  # repair() returns audited patterns only; never report a failing one
        raise MethodError("hypercube pattern failed the final audit")
    figures = {
        "subtables": len(subs),
        "boxes": search.n_boxes,
        "visits": visits,
        "repair_added": added,
        "repair_rounds": rounds,
        "added_up": search.added_up,
        "partial": len(search.partial),
    }
    return suppression_result(
        "GH",
        problem,
        sup,
        final,
        exact,
        watch=watch,
        log=log,
        figures=figures,
        cancelled=cancelled,
        timed_out=timed_out,
        progress=progress,
        finished="Hypercube",
    )


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class GhParams(MethodParams):
    """`GH(t, aprioriPercentage, modelSize, applySingleton)` as in τ-Argus's batch files."""

    METHOD: ClassVar[str] = "GH"
    apriori_percent: float = param(
        100.0,
        position=1,
        batch="aprioriPercentage",
        label="A-priori bounds",
        unit="%",
        minimum=0,
        exclusive_minimum=True,
        help="The attacker is taken to know every cell within ± this percentage of its value; "
        "each box must still move a primary out of its protection interval.",
    )
    model_size: int = param(
        0,
        position=2,
        batch="modelSize",
        label="Model size",
        choices={0: "normal", 1: "large"},
        help="Normal: subtables up to 6,000 cells and 200 codes per parent (as τ-Argus); "
        "large: any size.",
    )
    apply_singleton: bool = param(
        True,
        position=3,
        batch="applySingleton",
        label="Protect singletons",
        help="A cell with a single respondent is a corner of two boxes, so that respondent "
        "cannot recompute the others (only for tables with respondent counts).",
    )


def _gh_options(p: GhParams, facts: TableFacts) -> GhOptions:
    # GH's singleton handling is its own (two boxes), not the SS/SM/MF options
    return GhOptions(
        apriori_percent=p.apriori_percent,
        model_size=p.model_size,
        singleton_protection=bool(p.apply_singleton and facts.has_frequency),
        singleton_singleton=False,
        singleton_multiple=False,
        min_freq=0,
    )


DESCRIPTOR = register(
    MethodDescriptor(
        name="GH",
        kind="suppress",
        label="Hypercube (GHMITER)",
        help="τ-Argus's hypercube method: boxes of suppressed cells around every primary, "
        "subtable by subtable; quick, but suppresses more than the others.",
        params=GhParams,
        solve=solve_hypercube,
        solver_options=_gh_options,
        linked="cover",
        singletons="method",
        order=25,
    )
)
