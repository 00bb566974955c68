"""Issue 26 goal 2 (D-86): our whole `argusqt batch` process against the τ-Argus engine's whole
run of the same case, both in one interleaved loop, as a ratio per round with its spread.

Each round runs every case once in this checkout, once in each `--baseline` tree and once in
the engine (pytauargus), back to back, so a round's ratio sees one load; the median, the
quartiles and the range of the per-round ratios are printed with the load. Cases come from
`bench_vs_tauargus.py --workdir WORKDIR` (batch_ex1; b520 and p78 with `our_M.arb` beside
the engine's `tau_M.arb`). CPU seconds are user + system of the child (os.wait4).

Usage:
    python benchmarks/bench_ratio_spread.py WORKDIR [--cases batch_ex1,b520:MOD,p78:OPT]
        [--rounds 15] [--baseline TREE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from bench_start import cpu_of  # one way to time a whole process (user + system CPU)

ROOT = Path(__file__).resolve().parents[1]


def quartiles(xs: list[float]) -> str:
    """Median, quartiles and range of a list, for the printed spread."""
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return f"median {q[1]:.2f} (IQR {q[0]:.2f}–{q[2]:.2f}, range {min(xs):.2f}–{max(xs):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--cases", default="batch_ex1,b520:MOD,p78:OPT,p78:MOD")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--baseline", type=Path, action="append", default=[])
    args = ap.parse_args()
    trees = [("this", ROOT)] + [(f"base:{b.name}", b.resolve()) for b in args.baseline]
    cases = []
    for c in args.cases.split(","):
        name, _, method = c.partition(":")
        folder = args.workdir / name
        ours, theirs = (
            ("batch_ex1.arb", "batch_ex1.arb")
            if not method
            else (f"our_{method}.arb", f"tau_{method}.arb")
        )
        cases.append((c, folder, ours, theirs))
    py = sys.executable
    print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()}")
    cpu: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for c, folder, ours, theirs in cases:
            for name, tree in trees:
                argv = [py, "-m", "argusqt", "batch", ours, "ratio.log"]
                cpu.setdefault((c, name), []).append(cpu_of(argv, folder, tree, blas=True))
            argv = [py, "-m", "pytauargus.cli", "run", str(folder / theirs)]
            cpu.setdefault((c, "engine"), []).append(cpu_of(argv, folder, ROOT, blas=True))
    print(f"{args.rounds} interleaved rounds; load now {os.getloadavg()}")
    for c, *_ in cases:
        eng = cpu[(c, "engine")]
        print(f"== {c}: engine median {statistics.median(eng):.3f} s (min {min(eng):.3f})")
        for name, _ in trees:
            ours = cpu[(c, name)]
            ratios = [a / b for a, b in zip(ours, eng, strict=True)]
            print(
                f"   {name:20} median {statistics.median(ours):.3f} s (min {min(ours):.3f}); "
                f"ratio per round {quartiles(ratios)}; ratio of medians "
                f"{statistics.median(ours) / statistics.median(eng):.2f}"
            )


if __name__ == "__main__":
    main()
