"""HEUR and MOD against OPT on a fixed set of random tables of at most 550 cells.

Tables come from tests/protect_helpers (2-D, one hierarchy × flat, two hierarchies, 3-D),
random leaf values and ~10–25 % primaries with p%-like levels, seeds 0..N-1. Each method
runs through run_method (so every pattern passes the publication audit); the ratio is the
method's cost over OPT's. OPT's own gap is reported: a ratio against an unproven OPT is
only an upper estimate. Prints one line per table (with --verbose) and the summary
(median, p90, max per method).

Usage: python benchmarks/bench_random_set.py [--n 190] [--opt-time 60] [--verbose]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))

from protect_helpers import (  # noqa: E402
    flat_codelist,
    hier_codelist,
    random_problem,
)

from argusqt.protection.run import run_method  # noqa: E402

SHAPES = [
    ("2D 12×15", lambda: [flat_codelist("r", 12), flat_codelist("c", 15)]),
    ("2D 20×20", lambda: [flat_codelist("r", 20), flat_codelist("c", 20)]),
    ("1H2D 3×3 × 12", lambda: [hier_codelist("h", [3, 3]), flat_codelist("c", 12)]),
    ("1H2D 4×4 × 8", lambda: [hier_codelist("h", [4, 4]), flat_codelist("c", 8)]),
    ("2H2D 3×3 × 3×4", lambda: [hier_codelist("a", [3, 3]), hier_codelist("b", [3, 4])]),
    ("2H2D 4×3 × 4×2", lambda: [hier_codelist("a", [4, 3]), hier_codelist("b", [4, 2])]),
    ("3D 2×2 × 3 × 6", lambda: [hier_codelist("a", [2, 2]), flat_codelist("b", 3), flat_codelist("c", 6)]),
    ("3D 5 × 5 × 5", lambda: [flat_codelist("a", 5), flat_codelist("b", 5), flat_codelist("c", 5)]),
]  # fmt: skip


def table(seed: int):
    """The seed's random problem: shape, primary share and levels drawn from the seed."""
    rng = np.random.default_rng(seed)
    name, dims = SHAPES[seed % len(SHAPES)]
    share = float(rng.uniform(0.08, 0.25))
    p = random_problem(rng, dims(), primary_share=share, zero_share=float(rng.uniform(0, 0.1)))
    p.cost = np.abs(p.values)
    return name, p


def stats(r: list[float]) -> str:
    if not r:
        return "-"
    a = np.asarray(r)
    return f"median {np.median(a):.3f}  p90 {np.percentile(a, 90):.3f}  max {a.max():.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=190)
    ap.add_argument("--opt-time", type=float, default=60.0)
    ap.add_argument("--methods", default="HEUR,MOD")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    methods = [m.strip().upper() for m in args.methods.split(",")]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores; load {load}; {args.n} tables, OPT {args.opt_time:g} s")
    ratios: dict[str, list[float]] = {m: [] for m in methods}
    times: dict[str, list[float]] = {m: [] for m in ["OPT", *methods]}
    unproven = 0
    for seed in range(args.n):
        name, p = table(seed)
        t0 = time.perf_counter()
        opt = run_method(p, "OPT", {"max_time": args.opt_time})
        times["OPT"].append(time.perf_counter() - t0)
        unproven += not opt.optimal
        line = [f"{seed:4d} {name:16} {p.n_cells:4d} cells {int(p.primary.sum()):3d} prim"]
        line.append(
            f"OPT {opt.cost:12.0f}{'' if opt.optimal else f' (gap {100 * (opt.gap or 0):.1f}%)'}"
        )
        for m in methods:
            t0 = time.perf_counter()
            res = run_method(p, m, {"max_time_per_subtable": 60} if m == "MOD" else {})
            times[m].append(time.perf_counter() - t0)
            ratio = res.cost / opt.cost if opt.cost > 0 else 1.0
            ratios[m].append(ratio)
            line.append(f"{m} {ratio:.3f}")
        if args.verbose:
            print("  ".join(line), flush=True)
    print(f"OPT not proven optimal on {unproven} of {args.n} tables")
    for m in methods:
        print(f"{m}/OPT cost: {stats(ratios[m])}")
    for m, t in times.items():
        print(f"{m} time: median {np.median(t):.2f} s, max {max(t):.1f} s")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load after: {load}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
