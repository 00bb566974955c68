"""Issue 26 goal 1 (D-70): which side keeps a generated table unproven — OPT's captured
branch-and-cut subproblem solved to its proof from its own start (cold), from its optimum
(warm: the incumbent known from the first node), with SCIP branching priorities, with
solve_pattern keywords (a variant `key=json[;key=json…]`, e.g. rule_capacities=false or
pareto_cuts=1e-6;covers=false, D-88) or with SCIP
parameters (a variant `scip:name=json[;name=json…]`, e.g. `scip:conflict/enable=false`,
or `scip:emphasis=optimality`; D-77). `--stats DIR` writes SCIP's statistics per variant.

The subproblem is bench_opt_root.capture's (after the singleton options and the start
heuristic; guided heuristic, insiders and the rule as OPT runs it), on CPU clocks as
bench_opt_700 sets them. Printed per variant: cost, bound, proven, nodes, attacker LPs,
CPU-s. Nodes and LPs are counts (the same on every machine); CPU-s depends on the load.
A warm variant needs a cold run that proves the optimum first (same process).

Usage:
    python benchmarks/bench_opt_proof.py --only g04 [--seconds 200] [--log]
        [--variants cold,warm,totals,cost,fractional_sums=true,scip:separating/maxcuts=50]
        [--stats /tmp/stats]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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


#: CPU-s inside SCIP's optimize per run (the rest of a run: the separator's set-up, the
#: first LP's rows, the start's repair, reading the outcome)
INSIDE: list[float] = []


def scip_settings(variant: str) -> dict:
    """SCIP parameters of a `scip:name=json;…` variant (`emphasis=NAME` for a preset)."""
    if not variant.startswith("scip:"):
        return {}
    out = {}
    for item in variant[5:].split(";"):
        key, val = item.split("=", 1)
        raw = key in ("emphasis", "heuristics", "presolving", "separating")
        out[key] = val if raw else json.loads(val)
    return out


def solve(  # type: ignore[no-untyped-def]
    args: tuple,
    kwargs: dict,
    seconds: float,
    prio: np.ndarray,
    start=None,
    settings: dict | None = None,
    stats: Path | None = None,
):
    """One run of the captured subproblem with `prio` on the cells' variables (`kwargs` as
    solve_pattern takes them), SCIP's `settings` over OPT's, its statistics to `stats`."""
    from argusqt.protection.suppress import branch_and_cut

    base = branch_and_cut.Model

    class PrioModel(base):  # type: ignore[misc, valid-type]
        def optimizeNogil(self):  # type: ignore[no-untyped-def]
            from pyscipopt import SCIP_PARAMEMPHASIS, SCIP_PARAMSETTING

            for key, val in (settings or {}).items():
                if key == "emphasis":
                    self.setEmphasis(getattr(SCIP_PARAMEMPHASIS, val.upper()), True)
                elif key in ("heuristics", "presolving", "separating"):
                    setting = getattr(SCIP_PARAMSETTING, val.upper())
                    getattr(self, "set" + key.capitalize())(setting)
                else:
                    self.setParam(key, val)
            for v in self.getVars():
                name = v.name[2:] if v.name.startswith("t_") else v.name
                if name.startswith("x") and prio[int(name[1:])]:
                    self.chgVarBranchPriority(v, int(prio[int(name[1:])]))
            c0 = time.process_time()
            out = super().optimizeNogil()
            INSIDE.append(time.process_time() - c0)
            if stats is not None:
                self.writeStatistics(str(stats))
            return out

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
    ap.add_argument("--variants", default="cold,warm", help="comma-separated")
    ap.add_argument("--stats", type=Path, default=None, help="SCIP's statistics per variant here")
    ap.add_argument("--log", action="store_true", help="print SCIP's status line per variant")
    a = ap.parse_args(argv)
    _cpu_clock()
    t = next(t for t in opt700_set() if t.name.startswith(a.only))
    args, kwargs = capture_table(t, Path(tempfile.mkdtemp(prefix="optproof_")))
    print(f"{t.name}: load at start {os.getloadavg()[0]:.1f}")
    print("| variant | cost | bound | proven | nodes | attacker LPs | CPU s | in optimize | load |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    optimum = None
    for variant in re.split(r",(?![^\[]*\])", a.variants):  # not inside [..]: tree_filter=[0.25,0]
        start = None
        if variant == "warm":
            if optimum is None:
                print("| warm | (needs a cold run that proves the optimum first) |")
                continue
            start = optimum[: len(kwargs["start"])] if kwargs.get("start") is not None else optimum
        kw = dict(kwargs)
        settings = scip_settings(variant)
        if "=" in variant and not settings:  # solve_pattern keywords, `;` between them
            for item in variant.split(";"):
                key, val = item.split("=", 1)
                kw[key] = json.loads(val)
        stats = None
        if a.stats is not None:
            a.stats.mkdir(parents=True, exist_ok=True)
            name = "".join(c if c.isalnum() else "_" for c in variant)
            stats = a.stats / f"{t.name}-{name}.txt"
        out, cpu = solve(args, kw, a.seconds, priorities(args[0], kwargs, variant), start,
                         settings, stats)  # fmt: skip
        if variant == "cold" and out.optimal:
            optimum = out.mask
        bound = "-" if out.bound is None else f"{out.bound:,.0f}"
        print(f"| {variant} | {out.cost:,.0f} | {bound} | {'yes' if out.optimal else 'no'} | "
              f"{out.nodes} | {out.lps} | {cpu:.1f} | {sum(INSIDE):.1f} | "
              f"{os.getloadavg()[0]:.1f} |", flush=True)  # fmt: skip
        if a.log:
            print("  " + next((x for x in out.log if x.startswith("SCIP status")), ""), flush=True)
        INSIDE.clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
