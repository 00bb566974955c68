"""Benchmark of the optimal suppression (argusqt/docs/methods.md §3) on generated tables, and GIL
check.

Usage: python benchmarks/bench_optimal.py --kind 1H2D --cells 1000 --seeds 10 --max-time 60
       python benchmarks/bench_optimal.py --gil          (GUI responsiveness while OPT runs)
Tables come from tests/protect_helpers.py (p%-like symmetric PLs, ~10 % primaries);
cost = |value|.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protect_helpers import sized_problem  # noqa: E402

from argusqt.protection.suppress.optimal import solve_optimal  # noqa: E402


def run_one(kind: str, cells: int, seed: int, max_time: float, **params) -> dict:
    """Solve one generated table; figures of the result."""
    p = sized_problem(kind, cells, seed=seed)
    p.cost = np.abs(p.values)
    t0 = time.perf_counter()
    r = solve_optimal(p, {"max_time": max_time, **params})
    dt = time.perf_counter() - t0
    return {
        "seed": seed,
        "cells": p.n_cells,
        "primaries": int(p.primary.sum()),
        "cost": r.cost,
        "bound": r.lower_bound,
        "gap": r.gap if r.gap is not None else float("nan"),
        "optimal": r.optimal,
        "seconds": dt,
        "audit": bool(r.audit is not None and r.audit.ok),
        **r.figures,
    }


def gil_check(
    nogil: bool | None, kind: str = "1H2D", cells: int = 1000, seconds: float = 5.0
) -> tuple[float, float]:
    """10 ms sleeps per second completed by the main thread while OPT runs in a thread,
    and the longest single sleep (ms); nogil None = no OPT running (baseline)."""
    p = sized_problem(kind, cells, seed=1)
    p.cost = np.abs(p.values)
    done = threading.Event()

    def work():
        if nogil is not None:
            solve_optimal(p, {"max_time": seconds + 5, "nogil": nogil})
        else:
            time.sleep(seconds + 1)
        done.set()

    t = threading.Thread(target=work, daemon=True)
    t.start()
    time.sleep(0.5)  # past the start pattern, into SCIP
    t0 = time.perf_counter()
    count = 0
    worst = 0.0
    while time.perf_counter() - t0 < seconds and not done.is_set():
        t1 = time.perf_counter()
        time.sleep(0.01)
        worst = max(worst, time.perf_counter() - t1)
        count += 1
    rate = count / (time.perf_counter() - t0)
    t.join()
    return rate, 1000 * worst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default="1H2D")
    ap.add_argument("--cells", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--max-time", type=float, default=60.0)
    ap.add_argument("--gap", type=float, default=0.0)
    ap.add_argument("--gil", action="store_true")
    args = ap.parse_args()
    if args.gil:
        for nogil in (None, False, True):
            rate, worst = gil_check(nogil)
            name = {None: "idle baseline", False: "optimize", True: "optimizeNogil"}[nogil]
            print(
                f"{name}: main thread completed {rate:.1f} sleeps of 10 ms per second, "
                f"longest {worst:.1f} ms"
            )
        return
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        row = run_one(args.kind, args.cells, seed, args.max_time, gap=args.gap)
        rows.append(row)
        print(
            f"seed {seed}: {row['cells']} cells, {row['primaries']} primaries, cost "
            f"{row['cost']:.0f}, bound {row['bound']}, gap {100 * row['gap']:.3f} %, "
            f"{row['seconds']:.1f} s, optimal {row['optimal']}, audit {row['audit']}, "
            f"nodes {row.get('nodes')}, LPs {row.get('attacker_lps')}",
            flush=True,
        )
    secs = [r["seconds"] for r in rows]
    gaps = [r["gap"] for r in rows]
    print(
        f"{args.kind} ~{args.cells} cells: median {statistics.median(secs):.1f} s, "
        f"max {max(secs):.1f} s, max gap {100 * max(gaps):.3f} %, "
        f"gap<=0.1%: {sum(g <= 0.001 for g in gaps)}/{len(rows)}, "
        f"gap<=1%: {sum(g <= 0.01 for g in gaps)}/{len(rows)}, "
        f"all audited ok: {all(r['audit'] for r in rows)}"
    )


if __name__ == "__main__":
    main()
