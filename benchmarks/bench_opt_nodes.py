"""Issue 26 goal 1 (docs/design.md D-74): OPT's variants compared at the same work, not the
same seconds.

OPT's own branch-and-cut subproblem of one table (singleton options, start heuristic, guided
heuristic, insider check and the rule on combined cells as OPT runs it; bench_opt_root.capture)
is solved to `--nodes` nodes once per variant (solve_pattern keywords as JSON), in one
process. A node count bounds each run, so the search, its incumbent and its bound are the
same at any load (a CPU-second buys less work at load 9 than at 3, D-45); CPU-seconds are
printed beside them as a measurement only. `{}` is OPT's default.

Usage:
    python benchmarks/bench_opt_nodes.py --only sample --nodes 100 \
        --variant '{}' --variant '{"bridgeless_rule": true}'
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_opt_700 import _cpu_clock  # noqa: E402
from bench_opt_root import capture_table  # noqa: E402
from opt700_tables import opt700_set  # noqa: E402


def run(args: tuple, kwargs: dict, variant: dict, nodes: int, seconds: float) -> dict:
    """One run of the captured subproblem to `nodes` nodes; its figures."""
    from argusqt.protection.suppress.branch_and_cut import solve_pattern

    kw = dict(kwargs)
    kw.update(max_time=seconds, progress=lambda e: None, max_nodes=nodes)
    kw.update(variant)
    c0 = time.process_time()
    out = solve_pattern(*args, **kw)
    cpu = time.process_time() - c0
    gap = None
    if out.bound is not None and out.mask is not None and out.cost > 0:
        gap = (out.cost - out.bound) / out.cost
    return {"cost": out.cost, "bound": out.bound, "gap": gap, "nodes": out.nodes,
            "lps": out.lps, "cpu": cpu, "timed_out": out.timed_out,
            "log": next((x for x in out.log if x.startswith("SCIP status")), "")}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="sample")
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--variant", action="append", default=[], metavar="JSON")
    ap.add_argument("--seconds", type=float, default=3600.0, help="safety cap (CPU) per run")
    a = ap.parse_args(argv)
    _cpu_clock()
    variants = [json.loads(v) for v in a.variant] or [{}]
    keys = tuple(k.strip() for k in a.only.split(",") if k.strip())
    tables = [t for t in opt700_set() if t.name.startswith(keys)]
    work = Path(tempfile.mkdtemp(prefix="optnodes_"))
    print(f"load at start {os.getloadavg()[0]:.1f}; nodes {a.nodes}")
    print("| table | variant | cost | bound | gap | nodes | attacker LPs | CPU s |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    for t in tables:
        args, kwargs = capture_table(t, work)
        for v in variants:
            r = run(args, kwargs, v, a.nodes, a.seconds)
            gap = "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %"
            bound = "-" if r["bound"] is None else f"{r['bound']:,.0f}"
            cap = " (time cap)" if r["timed_out"] else ""
            print(f"| {t.name} | {json.dumps(v)} | {r['cost']:,.0f} | {bound} | {gap} | "
                  f"{r['nodes']} | {r['lps']} | {r['cpu']:.1f}{cap} |", flush=True)  # fmt: skip
            print(f"  {r['log']}", flush=True)
    print(f"load at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
