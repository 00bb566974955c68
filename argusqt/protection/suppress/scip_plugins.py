"""The SCIP plug-ins of OPT's branch-and-cut (argusqt/docs/methods.md §3): the capacity-cut
constraint handler (attacker LPs, insiders, bridgeless rows), the LP-guided heuristic, the
progress event handler and the run's stop and certificate bookkeeping.

Apart from branch_and_cut.py, which builds the model and reads its outcome (solve_pattern).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp
from pyscipopt import SCIP_EVENTTYPE, SCIP_RESULT, SCIP_STAGE, Conshdlr, Eventhdlr, Heur, Model

from argusqt.model import smallcsr
from argusqt.model.smallcsr import SmallCompressed, pattern_of, scipy_of
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch
from argusqt.protection.core.budget import Deadline
from argusqt.protection.lp.covers import cover_cut, cover_cuts
from argusqt.protection.lp.move_pool import MovePool
from argusqt.protection.lp.separation import Certificates, Cut, MoveBoard, Separator

#: seconds between two progress events
PROGRESS_EVERY = 0.25
#: share of the branch-and-cut's work (its attacker LPs) the LP-guided heuristic's path and
#: clean-up LPs may take (see _GuidedHeur); counts, not seconds, so that the runs it makes —
#: and the pattern SCIP ends with — are the same on every machine and load (issue 22)
GUIDED_SHARE = 0.3
#: the guided heuristic runs only while the gap exceeds this: near the bound, branching
#: closes it sooner (1H2D 2,508 cells, 5 seeds: 9 runs found nothing and cost 7.6 s of 35 s;
#: b520 at load 8.7: runs at gaps of 6–15 % took 2.0 s of SCIP's 5.7 s; the sample data's
#: gap is 40–60 % while it runs)
GUIDED_GAP = 0.20


#: (primary, cells its attacker knows) of an insider disclosure; a respondent sharing cells
#: (D-91) adds (cells it is in, its lower bound on each)
InsiderFind = tuple[int, np.ndarray] | tuple[int, np.ndarray, np.ndarray, np.ndarray]
#: a 0/1 pattern and the run's stop → an InsiderFind per insider disclosure, or None when
#: the stop came first
InsiderCheck = Callable[[np.ndarray, Any], list[InsiderFind] | None]
#: a 0/1 pattern → (published total, suppressed parts, published parts) of each relation
#: whose determined sum the rule on combined cells makes unsafe (CSPProblem.pattern_rule)
PatternRule = Callable[[np.ndarray], list[tuple[int, np.ndarray, np.ndarray]]]
#: (suppressed parts, published parts, free cells) of such a relation → its lifted no-good
#: (core, cure: rules.combined.lifted_nogood)
Lift = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

#: the master's LP point over all cells, the incumbent's cost, a stop token and a seconds cap
#: (None: none) → a protected 0/1 pattern cheaper than the incumbent, or None (_GuidedHeur)
Guide = Callable[[np.ndarray, float, CancelToken, "float | None"], np.ndarray | None]


def sum_nogood(free: np.ndarray, total: int, group: np.ndarray, others: np.ndarray) -> Cut | None:
    """x_total + Σ_others x − Σ_group x ≥ 1 − |group| over the free cells: the configuration
    (total published, group suppressed, others published) is cut off; None when no free cell
    can change it (the verdict then says NOT PUBLISHABLE)."""
    up = np.r_[total, others].astype(np.int64)
    up = up[free[up]]
    down = np.asarray(group, dtype=np.int64)
    down = down[free[down]]
    if up.size + down.size == 0:
        return None
    cells = np.r_[up, down]
    coef = np.r_[np.ones(up.size), -np.ones(down.size)]
    rhs = 1.0 - down.size
    return Cut(-1, "combined", cells, coef, rhs, cells, coef, rhs)


def forced_sum_cuts(rule: PatternRule | None, sep: Separator) -> list[Cut]:
    """The rule's no-goods every pattern keeps from the start (a rule offering `forced`:
    relations whose primaries alone have an unsafe sum, rules.combined.forced_nogoods) and
    their capacity rows (`forced_weights`), as rows of the first LP: a bound from the root
    on (D-55)."""
    forced = getattr(rule, "forced", None)
    if forced is None:
        return []
    free = sep.free
    always = (~free) & (np.nan_to_num(sep.fixed) > 0.5)
    cuts = [c for c in (sum_nogood(free, *f) for f in forced(always, free)) if c is not None]
    weights = getattr(rule, "forced_weights", None)
    for total, parts, w in weights(always, free) if weights is not None else []:
        # x_total + Σ w·x ≥ 1 (rules.combined.forced_capacities); none when no pattern can
        # meet it (the verdict then says NOT PUBLISHABLE, as for sum_nogood)
        if not free[total] and w.sum() < 1.0:
            continue
        cells = np.r_[[total] if free[total] else [], parts].astype(np.int64)
        coef = np.r_[[1.0] if free[total] else [], w]
        cuts.append(Cut(-1, "combined", cells, coef, 1.0, cells, coef, 1.0))
    return cuts


def rule_capacity_cuts(
    rows: Callable[[np.ndarray, np.ndarray], list], sep: Separator, x: np.ndarray
) -> list[Cut]:
    """The rule's capacity rows violated at the master point x (rules.combined.
    fractional_capacities: x_total + Σ w·x_others − Σ x_group ≥ 1 − |group| over the free
    cells) and, for a row whose group is fixed suppressed (a knapsack row Σ a·x ≥ 1), its
    cover cut (lp/covers.py); each holds for every pattern the rule accepts (D-66)."""
    free = sep.free
    xf = sep.full_point(x)
    out: list[Cut] = []
    for total, group, others, w in rows(xf, free):
        down = group[free[group]]
        up_cells = np.r_[[total] if free[total] else [], others].astype(np.int64)
        up_coef = np.r_[[1.0] if free[total] else [], w]
        cells = np.r_[up_cells, down].astype(np.int64)
        coef = np.r_[up_coef, -np.ones(down.size)]
        rhs = 1.0 - down.size
        if cells.size == 0:
            continue
        cut = Cut(-1, "combined", cells, coef, rhs, cells, coef, rhs)
        if cut.lhs(x) < rhs - 1e-6:
            out.append(cut)
        if down.size == 0 and up_cells.size:
            knap = Cut(-1, "upper", up_cells, np.minimum(up_coef, 1.0), 1.0, up_cells, up_coef, 1.0)
            cc = cover_cut(knap, x)
            if cc is not None:
                out.append(Cut(-1, "combined", cc.cells, cc.coef, 1.0, cc.cells, cc.coef, 1.0))
    return out


# ---------------------------------------------------------------------- SCIP plug-ins
class _CapacityHandler(Conshdlr):
    """Separates capacity cuts and accepts an integer point only if every primary passes."""

    def __init__(
        self,
        sep: Separator,
        free: np.ndarray,
        xvars: list,
        run: _Run,
        insiders: InsiderCheck | None = None,
        combined: PatternRule | None = None,
    ):
        self.sep = sep
        #: the rule on combined cells as a check of a 0/1 pattern (None: not asked)
        self.combined = combined
        self.free_idx = free
        self.xvars = xvars
        self.run = run
        self.tvars: list | None = None
        self.obj: np.ndarray | None = None
        self.store = _CutStore(sep.values.shape[0], small=isinstance(sep.rel, SmallCompressed))
        #: the insider check of a 0/1 pattern (None: outsiders only)
        self.insiders = insiders
        #: per respondent (its known cells): its attacker LPs and the primaries it recomputed
        self.insider_pool: dict[bytes, tuple[Separator, set[int]]] = {}
        self.pending: list[Cut] = []  # cuts found in conscheck, added at the next separation
        #: every attacker's newest moves, each attacker trying the others' under its own
        #: bounds before an LP (None: off; D-113)
        self.board: MoveBoard | None = None
        #: ... tried at the root too (False: posted there, tried once the tree starts, so the
        #: root's LP points, cuts and guided runs are those without the board; D-116)
        self.board_root = True
        #: the tree has started (SCIP's node count above 1: a count, never the clock)
        self.board_open = False
        #: 0/1 points the enforcement judged protected in full (see _key)
        self.proven: set[bytes] = set()
        self.bridgeless: _Bridgeless | None = None
        #: the root gap from which the run starts again with the rule-aware bridgeless cuts
        #: (None: no switch; docs/design.md, D-75)
        self.late_bridgeless: float | None = None
        #: derive cover cuts from the capacity cuts at fractional points (lp/covers.py)
        self.covers = True
        #: the rule's lifted no-goods (None: the no-good of the whole configuration)
        self.lift: Lift | None = None
        #: the rule's lifted no-goods at fractional points (None: at 0/1 points only, D-60)
        self.fractional: Callable[[np.ndarray, np.ndarray], list] | None = None
        #: the rule's capacity rows at fractional points (None: off, D-66)
        self.rule_capacity: Callable[[np.ndarray, np.ndarray], list] | None = None
        #: only at points where the attacker LPs found no capacity cut (D-66)
        self.rule_capacity_stalled = False
        #: (root gap, filter): the cut selector's filter in the tree when the root ends
        #: below that gap (None: unchanged; docs/design.md, D-82)
        self.tree_filter: tuple[float, float] | None = None
        #: ... and from then on the last this many attacker moves start each block's running
        #: extremes (lp/move_pool.py; 0: no pool)
        self.tree_pool = 0
        #: Pareto duals (Separator.pareto, μ) only at nodes this deep at most (None: at
        #: every node) and only while the node's gap is at least `pareto_gap` (D-88)
        self.pareto_mu = 0.0
        self.pareto_depth: int | None = None
        self.pareto_gap = 0.0
        #: known insiders at fractional points: a miss in a row doubles the rounds to the
        #: next try, up to this many (0: every insider every round; D-95)
        self.insider_backoff = 0
        #: per insider (its pool key): misses in a row and the round it is due again
        self.insider_wait: dict[bytes, tuple[int, int]] = {}
        self.frac_rounds = 0  # fractional separation rounds with known insiders
        #: insider audits of a fractional root point left (its cells above `probe_level`
        #: suppressed) once the outsider finds no cut there: respondents to separate (D-108)
        self.insider_probes = 0
        self.probe_level = 0.5
        self.n_probes = 0  # probes made
        self.root_rounds = 0  # fractional separation rounds at the root

    # -- helpers
    def _pareto_here(self) -> None:
        """The Pareto duals on or off at this node by its depth and gap (count-bound state,
        never the clock): where they pay, the root's bound, without the tree's other path."""
        if self.pareto_mu <= 0 or (self.pareto_depth is None and self.pareto_gap <= 0):
            return
        on = self.pareto_depth is None or self.model.getDepth() <= self.pareto_depth
        if on and self.pareto_gap > 0:
            inc, node = float(self.model.getPrimalbound()), self.model.getCurrentNode()
            low = float(node.getLowerbound()) if node is not None else -np.inf
            if abs(inc) < 1e19 and abs(low) < 1e19:
                on = inc - low >= self.pareto_gap * max(abs(inc + self.run.offset), 1e-9)
        self.sep.pareto = self.pareto_mu if on else 0.0

    def _x(self, sol=None) -> np.ndarray:
        x = np.zeros(self.sep.values.shape[0])
        x[self.free_idx] = [self.model.getSolVal(sol, v) for v in self.xvars]
        return x

    def _x_lp(self) -> np.ndarray:
        """The current LP solution, as _x() gives it where an LP is solved: read from the
        variables (getSolVal wraps a solution object per call, D-66)."""
        x = np.zeros(self.sep.values.shape[0])
        x[self.free_idx] = [v.getLPSol() for v in self.xvars]
        return x

    def _obj(self) -> np.ndarray:
        if self.obj is None:
            self.obj = np.zeros(self.sep.values.shape[0])
            self.obj[self.free_idx] = [v.getObj() for v in self.xvars]
        return self.obj

    def _trans(self) -> list:
        if self.tvars is None:
            self.tvars = [self.model.getTransformedVar(v) for v in self.xvars]
        return self.tvars

    def attacker_lps(self) -> int:
        """Attacker LPs of the separation so far (outsider and insiders): the work count. The
        checks an attacker's own remembered move settled (Separator.certs) cost ~1/50 of an
        LP and are not counted: the guided heuristic's share stays a share of the LP work
        (D-46); those another attacker's move settled are (D-113)."""
        lps = self.solved_lps()
        if self.board is not None:
            # the LPs another attacker's move spared count as work: the guided heuristic's
            # share and delay stay those of the search without the board (D-113)
            lps += self.sep.certs.borrowed
            lps += sum(sep.certs.borrowed for sep, _ in self.insider_pool.values())
        return lps

    def solved_lps(self) -> int:
        """Attacker LPs solved so far (outsider and insiders), none spared counted."""
        return self.sep.n_lps + sum(sep.n_lps for sep, _ in self.insider_pool.values())

    def _insider_sep(
        self, known: np.ndarray, floor: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[Separator, set[int]]:
        """The attacker LPs of the respondent that alone makes up `known` (those cells are
        constants to it: fixed published in the model of its LPs); with `floor` (cells, lower
        bounds: a respondent sharing them, D-91) each of those cells may go down only to it."""
        key = np.sort(known).tobytes()
        if floor is not None:
            key += b"|" + floor[0].tobytes() + b"|" + floor[1].tobytes()
        hit = self.insider_pool.get(key)
        if hit is None:
            fixed = self.sep.fixed.copy()
            fixed[known] = 0.0
            sep = Separator(self.sep.problem, fixed)
            if floor is not None:
                cells, low = floor
                sep.lb[cells] = np.minimum(sep.lb[cells], np.maximum(sep.values[cells] - low, 0.0))
                sep.certs = Certificates(sep.lb, sep.ub)
            sep.deadline = self.sep.deadline
            sep.sweep = self.sep.sweep
            sep.reuse = self.sep.reuse
            if self.board is not None:  # its moves posted, the others' tried (D-113)
                sep.certs.board = self.board
                sep.board = self.board if self._borrowing() else None
            # the blocks of a point depend on the relations and the point alone: the
            # outsider's and every insider's separation of one point share them (D-95)
            sep._comp_cache = self.sep._comp_cache
            sep._block_cache = self.sep._block_cache
            hit = self.insider_pool[key] = (sep, set())
        return hit

    def _insider_due(self, key: bytes) -> bool:
        """Whether a known insider is separated at this fractional round: every round, or
        (with `insider_backoff`) after its misses in a row, 2^misses rounds later at most
        `insider_backoff` (counts, never the clock; fractional cuts are optional: every
        0/1 candidate is still checked in full, so the bound stays a proof, D-95)."""
        if self.insider_backoff <= 0:
            return True
        wait = self.insider_wait.get(key)
        return wait is None or self.frac_rounds >= wait[1]

    def _insider_after(self, key: bytes, cut: bool) -> None:
        """Its next round: the next one after a cut, later after each miss in a row."""
        if self.insider_backoff <= 0:
            return
        misses = 0 if cut else self.insider_wait.get(key, (0, 0))[0] + 1
        step = 1 if cut else min(2**misses, self.insider_backoff)
        self.insider_wait[key] = (misses, self.frac_rounds + step)

    def _insider_cuts(self, x: np.ndarray) -> tuple[list[Cut], bool]:
        """At a 0/1 point every outsider passes: the insider audit's disclosures, and the
        capacity cuts of each insider's LP (valid for every pattern an insider cannot break:
        Σ over cells it does not know ≥ the level; a sharing respondent's cells count only
        down to its bound)."""
        if self.insiders is None:
            return [], False
        found = self.insiders(self.sep.full_point(x) > 0.5, self.run.stop)
        if found is None:  # stopped by the deadline or a cancel: not checked
            self.sep.interrupted = True
            return [], True
        cuts: list[Cut] = []
        for cell, known, *floor in found:
            sep, cells = self._insider_sep(known, (floor[0], floor[1]) if floor else None)
            cells.add(int(cell))
            outcomes = self._separate(sep, x, np.array([cell]))
            cuts += [c for o in outcomes for c in o.cuts if c.lhs(x) < c.rhs - 1e-6]
        if found and not cuts:
            cuts.append(self._nogood(x))
        self.run.n_insider_cuts += len(cuts)
        return cuts, bool(found)

    def _cuts_for(self, x: np.ndarray, x_int: bool) -> tuple[list[Cut], bool]:
        """Violated cuts at x and whether some primary fails (at a 0/1 point x: to an
        outsider, or else to an insider)."""
        outcomes = self._separate(self.sep, x)
        if x_int and not outcomes and not self.sep.interrupted:
            cuts, fails = self._insider_cuts(x)
            if fails or self.sep.interrupted:
                return cuts, fails
            sums = self._combined_cuts(x)
            return (sums, True) if sums else (cuts, False)
        cuts = [c for o in outcomes for c in o.cuts]
        if not x_int and self._probe_due(not outcomes):
            self._probe(x)
        if not x_int and self.insider_pool:
            # the respondents met so far, at the fractional point too: a tighter bound
            self.frac_rounds += 1
            for key, (sep, cells) in list(self.insider_pool.items()):
                if not self._insider_due(key):
                    continue
                more = self._separate(sep, x, np.array(sorted(cells)))
                self._insider_after(key, bool(more))
                cuts += [c for o in more for c in o.cuts]
        if x_int and outcomes:
            # an unprotected integer point must be cut off: a capacity cut violated only by
            # LP round-off (a shortfall of a few eps on a large level) would not, and SCIP
            # would enforce the same point again; the no-good always does
            cuts = [c for c in cuts if c.lhs(x) < c.rhs - 1e-6]
            if not cuts:
                cuts.append(self._nogood(x))
        return cuts, bool(outcomes)

    def _probe_due(self, converged: bool) -> bool:
        """A probe left, an insider check to make, at the root: when the outsider finds no
        cut, or at its 1st, 2nd, 4th, 8th … round (SCIP may end the root on a stall before
        the outsider converges; counts, never the clock)."""
        if self.insider_probes <= 0 or self.insiders is None:
            return False
        if self.model.getDepth() != 0 or self.model.inProbing():
            return False
        self.root_rounds += 1
        r = self.root_rounds
        return converged or r & (r - 1) == 0

    def _probe(self, x: np.ndarray) -> None:
        """Audit the pattern x rounds to (cells above `probe_level` suppressed) for the
        insiders: each respondent it finds joins the pool of known insiders, whose capacity
        cuts hold for every pattern (they name the respondent's knowledge, not the point), so
        the root's bound gets the floors' cuts before any 0/1 point is enforced (D-108)."""
        self.insider_probes -= 1
        self.n_probes += 1
        assert self.insiders is not None
        found = self.insiders(self.sep.full_point(x) > self.probe_level, self.run.stop)
        for cell, known, *floor in found or []:
            _, cells = self._insider_sep(known, (floor[0], floor[1]) if floor else None)
            cells.add(int(cell))

    def _combined_cuts(self, x: np.ndarray) -> list[Cut]:
        """At a 0/1 point every attacker passes: a relation whose published total gives an
        unsafe sum of its suppressed parts (the rule on combined cells, US#160) is cut off
        by the no-good of that relation's configuration — Σ published parts and total ≥ 1 +
        Σ suppressed parts − |those parts| over its free cells, lifted (D-55): only the parts
        that can cure the sum and a core of the suppressed ones whose sum stays unsafe
        whatever the others are. It names only the relation's cells, so it holds for every
        pattern the rule accepts: the bound stays a proof."""
        if self.combined is None:
            return []
        free = self.sep.free
        found = self.combined(self.sep.full_point(x) > 0.5)
        if self.lift is not None:
            found = [(t, *self.lift(g, o, free)) for t, g, o in found]
        cuts = [c for c in (sum_nogood(free, *f) for f in found) if c is not None]
        self.run.n_combined_cuts += len(cuts)
        return cuts

    def _borrowing(self) -> bool:
        """Whether attackers try each other's moves now: always with `board_root`, else once
        the tree has started (the root's path is then the path without the board, D-116)."""
        if self.board is None:
            return False
        if (
            not (self.board_root or self.board_open)
            and self.model.getStage() == SCIP_STAGE.SOLVING
            and self.model.getNNodes() > 1
        ):
            self.board_open = True
            for s in [self.sep] + [s for s, _ in self.insider_pool.values()]:
                s.board = self.board
        return self.board_root or self.board_open

    def _separate(self, sep: Separator, x: np.ndarray, primaries=None, **kw) -> list:
        """sep.separate under the run's stop; a check stopped early (the stop's poll, or an
        attacker LP stopped by HiGHS's time limit, set to what the deadline leaves) ends the
        run as the stop does (_Stop.halt)."""
        self._borrowing()  # the board opens with the tree (D-116)
        out = sep.separate(x, primaries, cancel=self.run.stop, **kw)
        if sep.interrupted:
            self.run.stop.halt()
        return out

    def _nogood(self, x: np.ndarray) -> Cut:
        """An unprotected 0/1 pattern and all its subsets fail: some published cell must go."""
        zero = np.flatnonzero(self.sep.free & (x < 0.5))
        return Cut(-1, "nogood", zero, np.ones(zero.size), 1.0, zero, np.ones(zero.size), 1.0)

    def _pos(self, cells: np.ndarray) -> np.ndarray:
        return self.run.pos_of[cells]

    def _add_conss(self, cuts: list[Cut]) -> None:
        self.store.add(cuts)
        for c in cuts:
            pos = self._pos(c.cells)
            expr = sum(float(k) * self.xvars[int(j)] for k, j in zip(c.coef, pos, strict=True))
            self.model.addCons(expr >= c.rhs, name=f"cap{self.run.n_cuts}", removable=False)
            self.run.n_cuts += 1

    def _cancelled(self) -> bool:
        """The run must stop: a cancel, its deadline, or a node already left unproven (SCIP
        clears its interrupt flag once seen, so every callback asks again)."""
        if self.run.stop.cancelled or self.run.uncertified is not None:
            self.model.interruptSolve()
            return True
        return False

    def _give_up(self, why: str) -> dict:
        """Leave a node whose check did not finish: SCIP needs an answer, and a cut-off node
        makes every later bound and "optimal" of SCIP unproven (run.uncertified)."""
        self.run.uncertify(self.model, why)
        self.model.interruptSolve()
        return {"result": SCIP_RESULT.CUTOFF}

    def _enforce(self, sol=None) -> dict:
        if self._cancelled():
            return self._give_up(self.run.uncertified or _stop_reason(self.run))
        x = self._x(sol)
        self._pareto_here()
        cuts, fails = self._cuts_for(np.round(x), True)
        if fails:
            # a primary that fails was judged in full: its cuts (or the no-good) hold for
            # every protected pattern, however the rest of the check ended
            if any(c.cells.size == 0 and c.rhs > 0 for c in cuts):
                # no free cell can help (e.g. a subtable whose margins are fixed): this node
                # is infeasible; "0 ≥ rhs" is not a constraint SCIP accepts
                return {"result": SCIP_RESULT.CUTOFF}
            if cuts:
                self._add_conss(cuts)
                return {"result": SCIP_RESULT.CONSADDED}
        if self._cancelled() or self.sep.interrupted:  # not every primary was checked
            return self._give_up(_stop_reason(self.run))
        if not fails:
            # SCIP prunes the node and then offers this point to conscheck: it must be
            # accepted there even if the clock has run out by then (a proven pattern lost
            # with its node would leave a bound above a protected pattern's cost)
            self.proven.add(_key(x))
            return {"result": SCIP_RESULT.FEASIBLE}
        return self._give_up("a failing pattern without a cut")

    # -- callbacks
    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        return self._enforce()

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return self._enforce()

    def conscheck(
        self, constraints, solution, checkintegrality, checklprows, printreason, completely
    ):
        obj = float(self.model.getSolObjVal(solution))
        x = np.round(self._x(solution))
        if _key(x) in self.proven:  # judged in full by the enforcement
            self.run.best = min(self.run.best, obj)
            return {"result": SCIP_RESULT.FEASIBLE}
        if self.run.stop.cancelled:  # out of time: reject (never accept an unchecked pattern)
            return {"result": SCIP_RESULT.INFEASIBLE}
        if obj >= self.run.best - 1e-9 * max(1.0, abs(self.run.best)):
            # no cheaper than a pattern already proven protected: not worth an attacker LP
            # (SCIP keeps that one; on big tables such candidates — "suppress all" from the
            # trivial heuristic — meant blocks of the whole table and minutes per check)
            return {"result": SCIP_RESULT.INFEASIBLE}
        self.run.n_checks += 1
        if self.store.violated(x):  # a known valid cut rejects it without any LP
            return {"result": SCIP_RESULT.INFEASIBLE}
        protected = not self._separate(self.sep, x, stop_at_first=True)
        if protected and not self.sep.interrupted and not self.run.stop.cancelled:
            cuts, fails = self._insider_cuts(x)
            if not (fails or self.run.stop.cancelled):
                cuts = self._combined_cuts(x)  # the rule on combined cells (US#160)
                fails = bool(cuts)
            if fails or self.run.stop.cancelled:
                # rejected by an insider or by an unsafe sum: its cuts join the model at the
                # next separation
                self.store.add(cuts)
                self.pending.extend(c for c in cuts if c.cells.size)
                return {"result": SCIP_RESULT.INFEASIBLE}
            self.run.best = min(self.run.best, obj)
            return {"result": SCIP_RESULT.FEASIBLE}
        return {"result": SCIP_RESULT.INFEASIBLE}

    def conssepalp(self, constraints, nusefulconss):
        if self._cancelled():
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if self.model.getDepth() > self.run.sepa_depth:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        x = self._x_lp()
        self._pareto_here()
        if (
            self.model.getDepth() == 0
            and self.model.getLPSolstat() == 1
            and not self.model.inProbing()
        ):
            # an optimal root LP (global bounds, valid rows only) is a valid global lower
            # bound; a heuristic's probing LP has local bounds and is not
            _report(self.model, self.run, lp_value=float(np.dot(self._obj(), x)))
        cuts, _ = self._cuts_for(x, False)
        # valid wherever their capacity cuts are: a stronger LP bound at no LP's cost
        # (docs/design.md, D-44)
        covers = cover_cuts(cuts, x) if self.covers else []
        self.run.n_cover_cuts += len(covers)
        if self.fractional is not None:
            # valid for every pattern the rule accepts (rules.combined.fractional_nogoods)
            free = self.sep.free
            found = self.fractional(self.sep.full_point(x), free)
            sums = [c for c in (sum_nogood(free, *f) for f in found) if c is not None]
            sums = [c for c in sums if c.lhs(x) < c.rhs - 1e-6]
            self.run.n_fractional_sums += len(sums)
            covers += sums
        if self.rule_capacity is not None and not (self.rule_capacity_stalled and cuts):
            more = rule_capacity_cuts(self.rule_capacity, self.sep, x)
            self.run.n_rule_capacities += len(more)
            covers += more
        cuts, self.pending = cuts + covers + self.pending, []
        # the bridgeless cuts hold for some optimal pattern, not for every protected one: they
        # never join the store that rejects candidates
        self.store.add(cuts)
        if self.late_bridgeless is not None and self.model.getNNodes() > 1:
            if not self.model.inProbing():
                self._root_switch()
        if self.tree_filter is not None and self.model.getNNodes() > 1:
            if not self.model.inProbing():
                self._tree_filter()
        if self.bridgeless is not None:
            more = self.bridgeless.cuts(self.sep.full_point(x))
            self.run.n_bridgeless_cuts += len(more)
            cuts += more
        if not cuts:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        tvars = self._trans()
        added = False
        for c in cuts:
            pos = self._pos(c.cells)
            if float(np.dot(c.coef, x[c.cells])) >= c.rhs - 1e-6:
                continue
            row = self.model.createEmptyRowUnspec(
                name=f"capr{self.run.n_cuts}", lhs=c.rhs, rhs=None, local=False, removable=True
            )
            self.model.cacheRowExtensions(row)
            for k, j in zip(c.coef, pos, strict=True):
                self.model.addVarToRow(row, tvars[int(j)], float(k))
            self.model.flushRowExtensions(row)
            self.model.addPoolCut(row)
            self.model.addCut(row, forcecut=False)
            self.model.releaseRow(row)
            self.run.n_cuts += 1
            added = True
        return {"result": SCIP_RESULT.SEPARATED if added else SCIP_RESULT.DIDNOTFIND}

    def _root_gap(self) -> float | None:
        """The gap of SCIP's incumbent and dual bound now (count-bound state, never the
        clock); None without an incumbent or a bound."""
        inc, bound = float(self.model.getPrimalbound()), float(self.model.getDualbound())
        if abs(inc) >= 1e19 or abs(bound) >= 1e19:
            return None
        return max(0.0, inc - bound) / max(abs(inc + self.run.offset), 1e-9)

    def _tree_filter(self) -> None:
        """Once, at the first separation after the root: below the root gap `tree_filter[0]`
        the cut selector's filter in the tree becomes `tree_filter[1]` and the pool of moves
        starts (`tree_pool`, D-82). Which valid rows enter the LP, never which rows are
        valid (D-77); which LPs run, never which primaries fail (D-82)."""
        rule, self.tree_filter = self.tree_filter, None
        assert rule is not None
        gap = self._root_gap()
        if gap is not None and gap < rule[0]:
            self.model.setParam("cutselection/hybrid/minortho", float(rule[1]))
            self.run.tree_filter = float(rule[1])
            if self.tree_pool > 0 and self.sep.reuse and self.sep.pool is None:
                # with every cut in the LP the pool pays: g04 −18 % LPs (D-82)
                self.sep.pool = MovePool(self.sep.lb, self.sep.ub, self.tree_pool)

    def _root_switch(self) -> None:
        """Once, at the first separation after the root: the root gap (SCIP's incumbent and
        dual bound, count-bound state, never the clock) decides a new start with the cuts."""
        threshold, self.late_bridgeless = self.late_bridgeless, None
        assert threshold is not None
        gap = self._root_gap()
        if gap is None:
            return
        self.run.root_gap = gap
        if gap >= threshold:  # solve_pattern starts again with the cuts from the root
            self.run.late_bridgeless = True
            self.model.interruptSolve()

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        # rounding a suppression down may unprotect a primary; rounding up never does
        for v in self.xvars:
            self.model.addVarLocks(v, nlockspos + nlocksneg, 0)


class _Bridgeless:
    """Bridgeless cuts x_i ≤ Σ_{j ∈ r, j ≠ i} x_j for a free cell i of relation r.

    A secondary alone suppressed in a relation is recomputed from it by every attacker
    (outsider or insider), so publishing it again leaves every attacker's range as it was:
    some optimal pattern (every one, with positive costs) has no such cell. These cuts may
    cut off protected patterns, so they are LP rows only, never a reason to reject a
    candidate (argusqt/docs/methods.md §3.2).

    `rule_aware` (the rule on combined cells is on, D-60): publishing the bridge i may make a
    sum of suppressed parts determined in another relation r' through i, which the rule then
    reads; that needs two more suppressed cells of r' besides i, so the cut gets
    ½·Σ_{j ∈ r' ∖ i} x_j on its right for every such r'. A least-cardinality optimal
    pattern keeps every such cut: where one fails, publishing i leaves it protected, no
    dearer and accepted by the rule.
    """

    #: most cuts per separation round, the most violated first
    MAX_CUTS = 500

    def __init__(self, sep: Separator, rule_aware: bool = False):
        rel = sep.rel.tocsr()
        self.pattern = pattern_of(rel)
        row = np.repeat(np.arange(rel.shape[0]), np.diff(rel.indptr))
        col = rel.indices.astype(np.int64)
        # relations with a suppressed non-free cell (a primary) already hold the cut
        fixed_one = (~sep.free) & (np.nan_to_num(sep.fixed) > 0.5)
        others = self.pattern @ fixed_one.astype(float)
        keep = sep.free[col] & (others[row] == 0)
        self.rule_aware = rule_aware
        if rule_aware:
            # the suppressed non-free cells of the other relations through i give ½ each on
            # the right: two of them hold the cut already
            through = self.pattern.T @ others  # per cell: Σ over its relations
            keep &= through[col] - others[row] < 2
        self.row, self.col = row[keep], col[keep]
        self.free = sep.free
        self.fixed_one = fixed_one.astype(float)
        self.rel = rel
        self.pattern_csc = self.pattern.tocsc()
        self.count = np.asarray(self.pattern.sum(axis=0)).ravel()  # relations per cell

    def _extra(self, xf: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Per kept pair (r, i): ½·Σ over the other relations r' through i of Σ_{r' ∖ i} x."""
        if not self.rule_aware:
            return np.zeros(self.row.size)
        through = self.pattern.T @ total  # per cell: Σ over its relations of their sums
        i, r = self.col, self.row
        return 0.5 * (through[i] - self.count[i] * xf[i] - (total[r] - xf[i]))

    def cuts(self, xf: np.ndarray) -> list[Cut]:
        if self.row.size == 0:
            return []
        total = self.pattern @ xf
        viol = 2.0 * xf[self.col] - total[self.row] - self._extra(xf, total)
        hit = np.flatnonzero(viol > 1e-6)
        hit = hit[np.argsort(-viol[hit], kind="stable")][: self.MAX_CUTS]
        out = []
        for k in hit:
            out.append(self._cut(int(self.row[k]), int(self.col[k])))
        return out

    def _cut(self, r: int, i: int) -> Cut:
        """The cut of the pair (r, i) over the free cells (suppressed non-free cells of the
        other relations folded into the right-hand side)."""
        ind, ptr = self.rel.indices, self.rel.indptr
        if not self.rule_aware:
            cells = ind[ptr[r] : ptr[r + 1]]
            cells = cells[self.free[cells] & (cells != i)]
            all_cells = np.r_[cells, i]
            coef = np.r_[np.ones(cells.size), -1.0]
            return Cut(-1, "bridgeless", all_cells, coef, 0.0, all_cells, coef, 0.0)
        weight = np.zeros(self.free.size)
        csc = self.pattern_csc
        for r2 in csc.indices[csc.indptr[i] : csc.indptr[i + 1]]:
            if r2 != r:
                weight[ind[ptr[r2] : ptr[r2 + 1]]] += 0.5
        weight[ind[ptr[r] : ptr[r + 1]]] += 1.0
        weight[i] = 0.0
        # Σ w·x ≥ x_i with the suppressed non-free cells' weights moved to the right
        fixed_part = float(np.dot(weight, self.fixed_one))
        named = np.flatnonzero(self.free & (weight > 0))
        with_i = np.r_[named, i]
        w = np.r_[weight[named], -1.0]
        return Cut(-1, "bridgeless", with_i, w, -fixed_part, with_i, w, -fixed_part)


class _StopToken(CancelToken):
    """The run's stop (cancel or deadline) and a deadline of its own, as a CancelToken whose
    grace is itself: a guided heuristic stopped early is simply dropped."""

    def __init__(self, stop: _Stop, seconds: float | None = None):
        super().__init__()
        self.stop = stop
        self.deadline = Deadline(seconds)

    @property
    def cancelled(self) -> bool:
        if not self._event.is_set() and (self.stop.cancelled or self.deadline.expired):
            self.cancel()
        return self._event.is_set()

    def grace(self, seconds: float) -> Any:
        return self


def offer(heur: Heur, hdlr: Any, mask: np.ndarray) -> bool:
    """Hand `heur`'s 0/1 pattern (over all cells) to SCIP, which keeps it only if its full
    check passes (capacity handler: every attacker, insiders, the rule on combined cells)."""
    model = heur.model
    sol = model.createSol(heur)
    for v, i in zip(hdlr.xvars, hdlr.free_idx, strict=True):
        model.setSolVal(sol, v, 1.0 if mask[i] else 0.0)
    return bool(model.trySol(sol))


class _GuidedHeur(Heur):
    """LP-guided primal heuristic (Fischetti–Salazar): the start heuristic again with every
    cell's cost scaled by (1 − x*) at the master's LP point, so it prefers the cells the LP
    suppresses. Its pattern (insider-repaired by `guide`) goes through SCIP's check like any
    other candidate. Throttled by work, never by the clock: its LPs stay within GUIDED_SHARE
    of the branch-and-cut's attacker LPs (HEUR's; its insider repair's only with
    optimal.COUNT_REPAIR, D-102), and it runs only at new LP points."""

    def __init__(
        self,
        hdlr: _CapacityHandler,
        guide: Guide,
        delay: float,
        root_runs: int | None = None,
        root_wait: bool = False,
    ):
        self.hdlr = hdlr
        self.guide = guide
        #: runs at the root at most (None: no cap): the root's bound before more runs (D-108)
        self.root_runs = root_runs
        #: ... counted only once some respondent is known (the pool of insiders not empty):
        #: until then the runs' candidates may be what finds them (D-110)
        self.root_wait = root_wait
        self.root_counted = 0  # the root's runs counted against `root_runs`
        #: a run's insider repair LPs counted too while no respondent is known (D-116)
        self.repair_alone = False
        self.spent = 0  # LPs of the guided runs so far
        self.seconds = 0.0  # their time, for the log only
        self.calls = 0
        self.found = 0
        self.last_x: np.ndarray | None = None
        self.next_at = float(delay)  # in attacker LPs of the branch-and-cut
        self.misses = 0  # runs in a row that found nothing: the wait grows with them

    def heurexec(self, heurtiming, nodeinfeasible):
        run = self.hdlr.run
        now = self.hdlr.attacker_lps()
        if run.stop.cancelled or now < self.next_at or self.spent > GUIDED_SHARE * now:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if self.model.getLPSolstat() != 1:  # not an optimal LP point
            return {"result": SCIP_RESULT.DIDNOTRUN}
        root = self.model.getDepth() == 0
        if root and self.root_runs is not None and self.root_counted >= self.root_runs:
            return {"result": SCIP_RESULT.DIDNOTRUN}  # a count: the root's separation first
        x = self.hdlr.sep.full_point(self.hdlr._x())
        if self.last_x is not None and np.abs(x - self.last_x).max() < 0.05:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        inc = self.model.getPrimalbound()
        incumbent = float(inc) + run.offset if abs(inc) < 1e19 else np.inf
        bound = max(
            run.bound if run.bound is not None else -np.inf,
            float(self.model.getDualbound()) if abs(self.model.getDualbound()) < 1e19 else -np.inf,
        )
        if np.isfinite(incumbent) and incumbent - (bound + run.offset) <= GUIDED_GAP * abs(
            incumbent
        ):
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.last_x = x
        t0 = run.watch.elapsed
        mask = self.guide(x, incumbent, _StopToken(run.stop), None)
        self.seconds += run.watch.elapsed - t0
        took = max(1, int(getattr(self.guide, "last_lps", 1)))
        if self.repair_alone and not self.hdlr.insider_pool:
            took += int(getattr(self.guide, "last_repair_lps", 0))
        self.spent += took
        self.calls += 1
        if root and not (self.root_wait and not self.hdlr.insider_pool):
            self.root_counted += 1
        # the next run no sooner than this one's LPs again, times the misses in a row
        self.next_at = self.hdlr.attacker_lps() + took * (1 + self.misses)
        if mask is not None and not run.stop.cancelled:
            if offer(self, self.hdlr, mask):
                self.found += 1
                self.misses = 0
                return {"result": SCIP_RESULT.FOUNDSOL}
        self.misses += 1
        return {"result": SCIP_RESULT.DIDNOTFIND}


class _CutStore:
    """Every cut generated so far as sparse matrices (the newest rows in their own chunks, so
    a check does not copy the whole store), to reject candidates cheaply."""

    #: chunks kept before they are stacked into one matrix (scipy's vstack of them)
    CHUNKS = 32

    def __init__(self, n: int, small: bool = False):
        self.n = n
        self.pending: list[Cut] = []
        #: a small table's store is a SmallCompressed, its rows the same (D-78)
        self.small = small
        #: (rows, their right-hand sides), oldest first; stacked, they are `mat` and `rhs`
        self.chunks: list[tuple[Any, np.ndarray]] = []

    def add(self, cuts: list[Cut]) -> None:
        self.pending.extend(c for c in cuts if c.cells.size)

    def _chunk(self) -> tuple[Any, np.ndarray]:
        """The pending cuts as one matrix of rows (as the store always built them)."""
        rows = np.concatenate([np.full(c.cells.size, k) for k, c in enumerate(self.pending)])
        cols = np.concatenate([c.cells for c in self.pending])
        vals = np.concatenate([c.coef for c in self.pending])
        shape = (len(self.pending), self.n)
        small = smallcsr.from_triplets(vals, rows, cols, shape) if self.small else None
        # (None: a repeated cell in a cut: scipy sums it, in its order)
        mat = small if small is not None else sp.csr_matrix((vals, (rows, cols)), shape=shape)
        rhs = np.array([c.rhs for c in self.pending], dtype=float)
        self.pending = []
        return mat, rhs

    @staticmethod
    def _stack(chunks: list[tuple[Any, np.ndarray]]) -> tuple[Any, np.ndarray]:
        """One matrix of the chunks' rows in order: CSR arrays one after the other."""
        mat, rhs = chunks[0]
        for m, r in chunks[1:]:
            if isinstance(mat, SmallCompressed) and isinstance(m, SmallCompressed):
                mat = smallcsr.vstack_csr(mat, m)
            else:
                mat = sp.vstack([scipy_of(mat), scipy_of(m)]).tocsr()
            rhs = np.r_[rhs, r]
        return mat, rhs

    def _flush(self) -> None:
        if self.pending:
            self.chunks.append(self._chunk())
            if len(self.chunks) > self.CHUNKS:
                self.chunks = [self._stack(self.chunks)]

    def _stacked(self) -> tuple[Any, np.ndarray]:
        """Every cut's row and right-hand side, in the order they came, as one chunk."""
        self._flush()
        if not self.chunks:
            empty = smallcsr.empty((0, self.n)) if self.small else sp.csr_matrix((0, self.n))
            return empty, np.zeros(0)
        self.chunks = [self._stack(self.chunks)]
        return self.chunks[0]

    @property
    def mat(self) -> Any:
        return self._stacked()[0]

    @property
    def rhs(self) -> np.ndarray:
        return self._stacked()[1]

    def violated(self, x: np.ndarray) -> bool:
        self._flush()
        # a clear violation only: cut coefficients carry LP round-off. Each row's product is
        # its own entries' sum in their stored order (scipy's matvec, SmallCompressed's
        # np.add.at), so the chunks give the values of the stacked matrix (D-118)
        return any(bool(np.any(m @ x < r - 1e-6)) for m, r in self.chunks)


class _Progress(Eventhdlr):
    """Rate-limited progress events and cancellation from SCIP's event loop."""

    def __init__(self, run: _Run):
        self.run = run

    def eventinit(self):
        self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)
        self.model.catchEvent(SCIP_EVENTTYPE.NODESOLVED, self)
        self.model.catchEvent(SCIP_EVENTTYPE.LPSOLVED, self)

    def eventexit(self):
        self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)
        self.model.dropEvent(SCIP_EVENTTYPE.NODESOLVED, self)
        self.model.dropEvent(SCIP_EVENTTYPE.LPSOLVED, self)

    def eventexec(self, event):
        run = self.run
        if run.stop.cancelled or run.uncertified is not None:
            self.model.interruptSolve()
            return
        forced = event.getType() == SCIP_EVENTTYPE.BESTSOLFOUND
        _report(self.model, run, forced=forced)


def _report(model: Model, run: _Run, forced: bool = False, lp_value: float | None = None) -> None:
    """One rate-limited progress event with SCIP's incumbent, lower bound and gap.

    Called from the event handler and from the cut separator: on a large table one root
    separation round can outlast many seconds, and no node or LP event fires meanwhile.
    While the root node is open SCIP's dual bound is still -inf; the root LP value is then
    a valid lower bound (the LP holds a subset of the valid constraints: a relaxation).
    """
    run.note_bound(model, lp_value)
    now = time.perf_counter()
    if not forced and now - run.last_report < PROGRESS_EVERY:
        return
    run.last_report = now
    inc = model.getPrimalbound()
    inc_v = float(inc) + run.offset if abs(inc) < 1e19 else None
    b = run.bound + run.offset if run.bound is not None else None
    if inc_v is not None and b is not None:
        b = min(b, inc_v)
    gap = None
    if inc_v is not None and b is not None:
        gap = max(0.0, inc_v - b) / max(abs(inc_v), 1e-9)
    run.progress(
        ProgressEvent(
            message="Optimal suppression: branch-and-cut",
            bound=b,
            incumbent=inc_v,
            gap=gap,
            cuts=run.n_cuts,
            elapsed=run.watch.elapsed,
            extra={"nodes": model.getNNodes(), "phase": "branch-and-cut"},
        )
    )


class _Stop:
    """What the callbacks poll: the user's cancel, the end of the run's time (a safety cap)
    or the end of its work budget (`max_lps` attacker LPs, counted by `work`).

    SCIP checks its time limit only between callbacks, and one separation round on a big
    fractional point can take minutes: the separator stops at this deadline too. The LP
    count grows the same way on every machine, so a stop at it is reproducible.
    """

    def __init__(
        self,
        cancel: CancelToken | None,
        deadline: Deadline,
        max_lps: int | None = None,
        work: Callable[[], int] | None = None,
    ):
        self.cancel = cancel
        self.deadline = deadline
        self.max_lps = max_lps
        self.work = work
        #: the work budget stopped the run (not the clock, not the user)
        self.work_hit = False
        #: a check stopped early (an attacker LP at HiGHS's time limit, a cancel, the work
        #: budget): the run ends there, as at the deadline (see halt)
        self.halted = False

    @property
    def user_cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.cancelled

    @property
    def cancelled(self) -> bool:
        if self.user_cancelled:
            return True
        if self.work_hit or self.halted:
            return True
        if self.max_lps is not None and self.work is not None and self.work() >= self.max_lps:
            self.work_hit = True
            return True
        return self.deadline.expired

    def halt(self) -> None:
        """A check stopped before every primary was judged: the run ends there. Unless the
        user or the work budget stopped it, the clock did (HiGHS's time limit inside an
        attacker LP is what the deadline left), so the result may differ elsewhere."""
        if not self.work_hit and not self.user_cancelled:
            self.deadline.hit = True
        self.halted = True

    def reason(self) -> str:
        """Why a check stopped: the user's cancel, the work budget or the run's time."""
        if self.user_cancelled:
            return "cancelled"
        if self.work_hit:
            return f"a check stopped by the work limit ({self.max_lps:,} attacker LPs)"
        return "a check stopped by the time limit"


@dataclass
class _Run:
    """One branch-and-cut's shared state: its cancel, progress, counts and log."""

    cancel: CancelToken | None
    progress: ProgressCallback
    watch: Stopwatch
    pos_of: np.ndarray
    stop: _Stop
    offset: float = 0.0
    sepa_depth: int = 10**9
    n_cuts: int = 0
    n_checks: int = 0
    n_insider_cuts: int = 0
    n_cover_cuts: int = 0
    #: bridgeless cuts offered to the LP (_Bridgeless; some may be already satisfied)
    n_bridgeless_cuts: int = 0
    #: no-goods of the rule on combined cells (_combined_cuts)
    n_combined_cuts: int = 0
    #: the rule's no-goods known from the start (forced_sum_cuts)
    n_forced_cuts: int = 0
    #: the rule's lifted no-goods separated at fractional points (D-60)
    n_fractional_sums: int = 0
    #: the rule's capacity rows and their covers separated at fractional points (D-66)
    n_rule_capacities: int = 0
    #: the root gap the late bridgeless switch read (None: not read) and its verdict (D-75)
    root_gap: float | None = None
    #: the cut selector's filter set in the tree by the root gap (None: unchanged, D-82)
    tree_filter: float | None = None
    late_bridgeless: bool = False
    #: the best certified lower bound on the free cost (SCIP's dual bound or the root LP
    #: value, read only while every step so far was exact)
    bound: float | None = None
    best: float = np.inf  # objective of the cheapest candidate proven protected
    last_report: float = 0.0  # perf_counter of the last progress event
    #: why a node was left without a finished check (None: none was): from then on SCIP's
    #: dual bound, "optimal" and "infeasible" are not proofs (argusqt/docs/methods.md §3.4)
    uncertified: str | None = None

    def note_bound(self, model: Model, lp_value: float | None = None) -> None:
        """Raise the certified bound to SCIP's dual bound (while every step was exact) or
        to an optimal root LP value (a relaxation of valid rows: always a bound)."""
        cands = [lp_value] if lp_value is not None else []
        if self.uncertified is None:
            cands.append(float(model.getDualbound()))
        for b in cands:
            if np.isfinite(b) and abs(b) < 1e19:
                self.bound = max(self.bound if self.bound is not None else -np.inf, b)

    def uncertify(self, model: Model, why: str) -> None:
        """A node is about to be cut off without a finished check: keep the bound proven up
        to now, and trust nothing SCIP concludes after it."""
        if self.uncertified is None:
            self.note_bound(model)
            self.uncertified = why


def _key(x: np.ndarray) -> bytes:
    """A 0/1 master point (free cells) as a set key."""
    return np.packbits(np.asarray(x) > 0.5).tobytes()


def _stop_reason(run: _Run) -> str:
    """Why a check stopped: the user's cancel, the work budget or the run's time."""
    return run.stop.reason()
