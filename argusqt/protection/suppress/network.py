"""Network-flow suppression of 2-D tables, at most one hierarchy (argusqt/docs/methods.md §8).

Such a table is a circulation: every cell is an arc and every relation is flow conservation
at a node (after the sign of some relations is flipped). Moving a primary by its protection
level while every relation holds is sending that amount around a cycle through its arc, so
each primary and direction is one shortest-path problem (Dijkstra) on the arcs that have room
for the move, new cells costing their cost and suppressed ones almost nothing. The cycle is
an attacker move on the whole table, so the pattern is protected by construction; our audit
confirms it and the modular repair step stands by.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled, MethodError
from argusqt.model.status import is_secondary
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit.outsider import audit
from argusqt.protection.audit.publication import CANCEL_GRACE
from argusqt.protection.core.budget import Deadline
from argusqt.protection.core.options import SuppressOptions
from argusqt.protection.core.params import MethodParams, TableFacts
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult
from argusqt.protection.lp.cleanup import Witnesses, cleanup
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.lp.protector import primary_order
from argusqt.protection.lp.separation import require_additive
from argusqt.protection.suppress.epilogue import final_audit, suppression_result
from argusqt.protection.suppress.table_repair import repair

#: the rule τ-Argus states for its network method, quoted in every refusal
SHAPE_RULE = (
    "the network method protects 2-dimensional tables with at most one hierarchical variable"
)


@dataclass
class Network:
    """Arc `tail[c] → head[c]` of every cell c; conservation at every node is a relation."""

    tail: np.ndarray
    head: np.ndarray
    n_nodes: int


def check_shape(problem: CSPProblem) -> tuple[int, int]:
    """(hierarchical dimension, flat dimension), or MethodError naming the rule."""
    dims = problem.dims
    if not dims or len(dims) != 2:
        n = len(dims) if dims else 0
        raise MethodError(f"{SHAPE_RULE}; this table has {n} dimension{'s' if n != 1 else ''}")
    nested = [len(d.parents) > 1 for d in dims]
    if all(nested):
        raise MethodError(
            f"{SHAPE_RULE}; both {dims[0].name} and {dims[1].name} have hierarchy levels "
            "(use the modular or the hypercube method)"
        )
    size = len(dims[0]) * len(dims[1])
    if problem.n_cells != size:
        raise MethodError(
            f"{SHAPE_RULE} and its own cells only; this problem has {problem.n_cells - size} "
            "extra cells (linked tables or singleton cells)"
        )
    return (1, 0) if nested[1] else (0, 1)


def build_network(problem: CSPProblem) -> Network:
    """Arcs of the table's cells; node equations equal the table relations up to sign.

    Nodes: H(P, j) for every parent P of the hierarchical dimension and every code j of the
    flat one (the relation P = Σ children in column j), R(i) for every leaf i (row i's total
    = Σ of its cells) and one node Z closing the circulation through the totals. The row
    relations of non-leaf codes are implied by the others and have no node.
    """
    h, f = check_shape(problem)
    dims = list(problem.dims or [])
    dh, df = dims[h], dims[f]
    nh, nf = len(dh), len(df)
    parent = np.asarray(dh.parent)
    par_pos = np.full(nh, -1, dtype=np.int64)
    par_pos[dh.parents] = np.arange(len(dh.parents))
    leaves = np.flatnonzero(dh.is_leaf)
    leaf_pos = np.full(nh, -1)
    leaf_pos[leaves] = np.arange(leaves.size)
    n_hnodes = len(dh.parents) * nf
    z_node = n_hnodes + leaves.size

    def hnode(p: np.ndarray, j: np.ndarray) -> np.ndarray:
        return par_pos[p] * nf + j

    i_grid, j_grid = np.meshgrid(np.arange(nh), np.arange(nf), indexing="ij")
    i_idx, j_idx = i_grid.ravel(), j_grid.ravel()
    tail = np.empty(i_idx.size, dtype=np.int64)
    head = np.empty(i_idx.size, dtype=np.int64)
    is_leaf = dh.is_leaf[i_idx]
    root = i_idx == 0
    col0 = j_idx == 0
    par = np.where(root, 0, parent[i_idx])
    # leaf rows: R(i) → H(parent, j) inside the table, H(parent, 0) → R(i) in the total column
    m = is_leaf & ~root & ~col0
    tail[m], head[m] = n_hnodes + leaf_pos[i_idx[m]], hnode(par[m], j_idx[m])
    m = is_leaf & ~root & col0
    tail[m], head[m] = hnode(par[m], j_idx[m]), n_hnodes + leaf_pos[i_idx[m]]
    # subtotal rows: H(i, j) → H(parent, j) inside, H(parent, 0) → H(i, 0) in the total column
    m = ~is_leaf & ~root & ~col0
    tail[m], head[m] = hnode(i_idx[m], j_idx[m]), hnode(par[m], j_idx[m])
    m = ~is_leaf & ~root & col0
    tail[m], head[m] = hnode(par[m], j_idx[m]), hnode(i_idx[m], j_idx[m])
    # the total row: H(0, j) → Z, and Z → H(0, 0) for the grand total
    m = root & ~col0
    tail[m], head[m] = hnode(i_idx[m], j_idx[m]), z_node
    m = root & col0
    tail[m], head[m] = z_node, hnode(i_idx[m], j_idx[m])
    if nh == 1:  # a hierarchy without codes: nothing but the total
        raise MethodError(f"{SHAPE_RULE}; {dh.name} has no codes")
    # cell ids of the table are row-major over (dims[0], dims[1])
    cells = i_idx * nf + j_idx if h == 0 else j_idx * nh + i_idx
    t = np.empty_like(tail)
    hd = np.empty_like(head)
    t[cells], hd[cells] = tail, head
    return Network(tail=t, head=hd, n_nodes=z_node + 1)


def incidence(net: Network) -> sp.csr_matrix:
    """Nodes × cells: +1 where the arc enters, −1 where it leaves (rows = relations ± sign)."""
    n = net.tail.size
    cols = np.r_[np.arange(n), np.arange(n)]
    rows = np.r_[net.head, net.tail]
    vals = np.r_[np.ones(n), -np.ones(n)]
    return sp.csr_matrix((vals, (rows, cols)), shape=(net.n_nodes, n))


class CyclePlanner:
    """Shortest augmenting cycles through a primary's arc on the arcs with room for the move."""

    def __init__(self, problem: CSPProblem, net: Network, ctx: MoveContext):
        self.net = net
        self.ctx = ctx
        w = np.abs(np.asarray(problem.cost, dtype=float))
        pos = w[w > 0]
        scale = float(pos.mean()) if pos.size else 1.0
        # a new cell costs its cost plus a little (fewer cells at equal cost), a suppressed
        # one almost nothing (Dijkstra needs positive lengths)
        self.new_cost = w + 1e-3 * scale
        self.sup_cost = 1e-6 * scale
        self.n_paths = 0

    def cycle(self, cell: int, direction: int, sup: np.ndarray) -> np.ndarray | None:
        """Cells (other than `cell`) and their signed moves of a cheapest cycle, or None."""
        ctx, net = self.ctx, self.net
        amount = ctx.required(cell, direction)
        room = ctx.ub[cell] if direction == UP else ctx.lb[cell]
        if amount <= 0 or room < amount - 1e-9 * max(1.0, amount):
            return None
        need = amount - 1e-9 * max(1.0, amount)
        usable = ctx.movable.copy()
        usable[cell] = False
        fwd = np.flatnonzero(usable & (ctx.ub >= need))
        bwd = np.flatnonzero(usable & (ctx.lb >= need))
        length = np.where(sup, self.sup_cost, self.new_cost)
        src = np.r_[net.tail[fwd], net.head[bwd]]
        dst = np.r_[net.head[fwd], net.tail[bwd]]
        edge_cell = np.r_[fwd, bwd]
        edge_sign = np.r_[np.ones(fwd.size), -np.ones(bwd.size)]
        # one edge per node pair (the cheapest), so the path names its cells unambiguously
        key = src * net.n_nodes + dst
        by = np.lexsort((length[edge_cell], key))
        first = np.r_[True, key[by][1:] != key[by][:-1]]
        keep = by[first]
        key, edge_cell, edge_sign = key[keep], edge_cell[keep], edge_sign[keep]
        graph = sp.csr_matrix(
            (length[edge_cell], (src[keep], dst[keep])), shape=(net.n_nodes, net.n_nodes)
        )
        # raising the primary's arc brings `amount` into its head: send it back to its tail
        start, goal = int(net.head[cell]), int(net.tail[cell])
        if direction == DOWN:
            start, goal = goal, start
        self.n_paths += 1
        dists, preds = dijkstra(
            graph, directed=True, indices=np.array([start]), return_predecessors=True
        )
        dist, pred = dists[0], preds[0]
        if not np.isfinite(dist[goal]):
            return None
        steps = []
        v = goal
        while v != start:
            u = int(pred[v])
            steps.append(u * net.n_nodes + v)
            v = u
        at = np.searchsorted(key, np.asarray(steps, dtype=np.int64))  # key is sorted
        sign = 1.0 if direction == UP else -1.0
        cells = np.r_[cell, edge_cell[at]]
        moves = amount * np.r_[sign, edge_sign[at]]
        return np.c_[cells, moves]


def _protect(
    ctx: MoveContext,
    planner: CyclePlanner,
    sup: np.ndarray,
    wit: Witnesses,
    cell: int,
    direction: int,
) -> str:
    """Protect one (primary, direction) by a cycle, else by a min-cost flow LP; 'path'/'lp'."""
    found = planner.cycle(cell, direction, sup)
    if found is not None:
        idx = found[:, 0].astype(np.int64)
        d = found[:, 1]
        how = "path"
    else:
        # no single cycle has the room: split the move over several (min-cost flow LP)
        cost = np.where(sup, planner.sup_cost, planner.new_cost)
        allc = np.arange(ctx.problem.n_cells)
        full = ctx.path_move(cell, direction, allc, cost)
        if full is None:
            word = "upper" if direction == UP else "lower"
            raise MethodError(
                f"primary cell {cell} cannot be protected ({word} protection level "
                f"{ctx.required(cell, direction):g}): no attacker move within the bounds"
            )
        moved = full != 0
        idx, d = allc[moved], full[moved]
        how = "lp"
    sup[idx] = True
    wit.add_move(idx, d, ctx)
    wit.ensure(cell, direction, idx)
    return how


def solve_network(
    problem: CSPProblem,
    params: NetOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Shortest cycles per primary and direction, clean-up, audit; statuses 11/12 set.

    params: cleanup (True: publish again secondaries the cycles of later primaries made
    redundant), max_time (seconds, None), audit_intervals. On cancel the remaining primaries
    are still protected and audited if that fits in CANCEL_GRACE seconds, else Cancelled.
    """
    opts = NetOptions.of(params)
    watch = Stopwatch()
    deadline = Deadline(opts.max_time)
    net = build_network(problem)
    require_additive(problem)
    ctx = MoveContext(problem)
    planner = CyclePlanner(problem, net, ctx)
    sup = ctx.primary | is_secondary(problem.status)
    wit = Witnesses()
    order = primary_order(ctx)
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    counts = {"path": 0, "lp": 0}
    for n, cell in enumerate(order.tolist()):
        if grace is not None and grace.cancelled:
            raise Cancelled("cancelled before every primary cell was protected")
        for direction in (UP, DOWN):
            if wit.covered(cell, direction, ctx):
                continue
            counts[_protect(ctx, planner, sup, wit, cell, direction)] += 1
        if n % 50 == 0:
            progress(
                ProgressEvent(
                    message=f"Network: primary {n + 1} of {order.size}",
                    fraction=(n + 1) / max(order.size, 1),
                    incumbent=float(np.abs(problem.cost)[sup & ~ctx.primary].sum()),
                    elapsed=watch.elapsed,
                )
            )
    n_before = int((sup & ~ctx.primary).sum())
    log = [
        f"network: {n_before} secondary cells from {counts['path']} shortest cycles"
        + (f" and {counts['lp']} min-cost flows" if counts["lp"] else "")
        + f" ({watch.elapsed:.1f} s)"
    ]
    cancelled = cancel is not None and cancel.cancelled
    timed_out = deadline.expired
    if opts.cleanup and not cancelled and not timed_out:
        sup, info = cleanup(
            problem,
            sup,
            wit,
            ctx=ctx,
            time_limit=deadline.part(0.8),
            progress=progress,
            cancel=cancel,
        )
        log.append(
            f"clean-up: {info['removed']} cells published again, {info['lps']} LPs "
            f"({info['elapsed']:.1f} s)" + (" — stopped early" if info["stopped"] else "")
        )
        cancelled = cancel is not None and cancel.cancelled
        timed_out = timed_out or bool(info["stopped"]) and not cancelled
    final, exact = final_audit(problem, sup, opts.audit_intervals, grace, hints=wit.hints())
    if not final.ok:
        # cannot happen for cycles (they are attacker moves); the repair step stands by

        before = sup.copy()
        sup, rounds = repair(problem, sup, grace, progress)
        log.append(f"repair after the audit: {int((sup & ~before).sum())} cells added")
        final = audit(problem, sup, intervals=exact, cancel=grace)
        if not final.ok:
            raise MethodError("network pattern failed the final audit")
    figures = {
        "cycles": counts["path"],
        "flows": counts["lp"],
        "paths_tried": planner.n_paths,
        "secondaries_before_cleanup": n_before,
    }
    return suppression_result(
        "NET",
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
        finished="Network",
    )


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class NetParams(MethodParams):
    """`NET(t)`: τ-Argus's network method has no parameters in batch files."""

    METHOD: ClassVar[str] = "NET"


@dataclass(frozen=True, kw_only=True)
class NetOptions(SuppressOptions):
    """What solve_network reads: the clean-up switch, max_time and the final audit's kind."""


def _net_options(p: NetParams, facts: TableFacts) -> NetOptions:
    # no singleton options in τ-Argus's network method (the insider audit still runs)
    return NetOptions(singleton_singleton=False, singleton_multiple=False, min_freq=0)


DESCRIPTOR = register(
    MethodDescriptor(
        name="NET",
        kind="suppress",
        label="Network flow (2-D)",
        help="2-dimensional tables with at most one hierarchy: shortest paths in the table's "
        "network, then a clean-up; fast.",
        params=NetParams,
        solve=solve_network,
        solver_options=_net_options,
        singletons="method",
        order=35,
    )
)
