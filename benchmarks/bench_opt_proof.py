"""Issue 26 goal 1 (D-70): which side keeps a generated table unproven — OPT's captured
branch-and-cut subproblem solved to its proof from its own start (cold), from its optimum
(warm: the incumbent known from the first node), with SCIP branching priorities, or with
solve_pattern keywords (a variant `key=json`, e.g. rule_capacities=false).

The subproblem is bench_opt_root.capture's (after the singleton options and the start
heuristic; guided heuristic, insiders and the rule as OPT runs it), on CPU clocks as
bench_opt_700 sets them. Printed per variant: cost, bound, proven, nodes, attacker LPs,
CPU-s. Nodes and LPs are counts (the same on every machine); CPU-s depends on the load.
A warm variant needs a cold run that proves the optimum first (same process).

Usage:
    python benchmarks/bench_opt_proof.py --only g04 [--seconds 200]
        [--variants cold,warm,totals,cost,fractional_sums=true]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_opt_700 import _cpu_clock  # noqa: E402
from bench_opt_root import capture_table  # noqa: E402
from opt700_tables import opt700_set  # noqa: E402


def priorities(problem, kwargs: dict, variant: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    """SCIP branching priority per cell: `totals` a cell's count of relations it totals,
    `cost` its cost rank in steps of 50 cells; anything else none."""
    n = problem.n_cells
    prio = np.zeros(n, dtype=np.int64)
    table = kwargs["combined"].table
    if variant == "totals":
        rel = table.relations.tocsr()
        tot = rel.indices[rel.data < 0]
        np.add.at(prio, tot[tot < n], 1)
    elif variant == "cost":
        cost = np.asarray(problem.cost, dtype=float)
        prio[:] = np.argsort(np.argsort(cost, kind="stable"), kind="stable") // 50
    return prio


def solve(args: tuple, kwargs: dict, seconds: float, prio: np.ndarray, start=None):  # type: ignore[no-untyped-def]
    """One run of the captured subproblem with `prio` on the cells' variables (`kwargs` as
    solve_pattern takes them)."""
    from argusqt.protection.suppress import branch_and_cut

    base = branch_and_cut.Model

    class PrioModel(base):  # type: ignore[misc, valid-type]
        def optimizeNogil(self):  # type: ignore[no-untyped-def]
            for v in self.getVars():
                name = v.name[2:] if v.name.startswith("t_") else v.name
                if name.startswith("x") and prio[int(name[1:])]:
                    self.chgVarBranchPriority(v, int(prio[int(name[1:])]))
            return super().optimizeNogil()

    branch_and_cut.Model = PrioModel  # type: ignore[attr-defined, misc]
    kw = dict(kwargs)
    kw.update(max_time=seconds, progress=lambda e: None)
    if start is not None:
        kw["start"] = start
    c0 = time.process_time()
    try:
        out = branch_and_cut.solve_pattern(*args, **kw)
    finally:
        branch_and_cut.Model = base  # type: ignore[attr-defined, misc]
    return out, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="g04")
    ap.add_argument("--seconds", type=float, default=200.0)
    ap.add_argument("--variants", default="cold,warm")
    a = ap.parse_args(argv)
    _cpu_clock()
    t = next(t for t in opt700_set() if t.name.startswith(a.only))
    args, kwargs = capture_table(t, Path(tempfile.mkdtemp(prefix="optproof_")))
    print(f"{t.name}: load at start {os.getloadavg()[0]:.1f}")
    print("| variant | cost | bound | proven | nodes | attacker LPs | CPU s | load |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    optimum = None
    for variant in a.variants.split(","):
        start = None
        if variant == "warm":
            if optimum is None:
                print("| warm | (needs a cold run that proves the optimum first) |")
                continue
            start = optimum[: len(kwargs["start"])] if kwargs.get("start") is not None else optimum
        kw = dict(kwargs)
        if "=" in variant:  # a solve_pattern keyword
            key, val = variant.split("=", 1)
            kw[key] = json.loads(val)
        out, cpu = solve(args, kw, a.seconds, priorities(args[0], kwargs, variant), start)
        if variant == "cold" and out.optimal:
            optimum = out.mask
        bound = "-" if out.bound is None else f"{out.bound:,.0f}"
        print(f"| {variant} | {out.cost:,.0f} | {bound} | {'yes' if out.optimal else 'no'} | "
              f"{out.nodes} | {out.lps} | {cpu:.1f} | {os.getloadavg()[0]:.1f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
