"""Benchmark of the suppression methods on generated 2-D, 1H2D and 3-D tables.

Usage: python benchmarks/bench_suppression.py [--methods HEUR,OPT,MOD] [--sizes 100,1000]
       [--kinds 2D,1H2D,3D] [--time-limit 60] [--seed 0]
Prints one line per (kind, size, method): cells, primaries, secondaries, cost, lower bound,
gap, time and the audit verdict (the audit is included in the time).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protect_helpers import sized_problem  # noqa: E402

from argusqt.errors import ArgusError  # noqa: E402
from argusqt.protection.run import run_method  # noqa: E402


def _fmt(x, spec: str = ".0f") -> str:
    return "-" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="HEUR")
    ap.add_argument("--sizes", default="100,1000,10000,100000")
    ap.add_argument("--kinds", default="2D,1H2D,3D")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    header = (
        f"{'kind':5} {'cells':>7} {'prim':>6} {'method':6} {'second':>6} {'cost':>12} "
        f"{'bound':>12} {'gap':>7} {'time s':>8}  audit"
    )
    print(header)
    print("-" * len(header))
    for kind in args.kinds.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            problem = sized_problem(kind, size, seed=args.seed)
            n_prim = int(problem.primary.sum())
            for method in args.methods.split(","):
                params = {"max_time": args.time_limit}
                t0 = time.perf_counter()
                try:
                    res = run_method(problem, method, params)
                except ArgusError as err:
                    print(f"{kind:5} {problem.n_cells:7d} {n_prim:6d} {method:6} {err}")
                    continue
                elapsed = time.perf_counter() - t0
                verdict = "passed" if res.audit is not None and res.audit.ok else "FAILED"
                gap = None if res.gap is None else 100 * res.gap
                print(
                    f"{kind:5} {problem.n_cells:7d} {n_prim:6d} {method:6} {res.n_secondary:6d} "
                    f"{res.cost:12.0f} {_fmt(res.lower_bound):>12} {_fmt(gap, '.2f'):>6}% "
                    f"{elapsed:8.1f}  {verdict}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
