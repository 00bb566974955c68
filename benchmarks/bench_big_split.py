"""A whole `argusqt batch` run split by phase with CPU-seconds and call counts (D-115).

The batch file runs in this process with the audit's phases wrapped: CPU-s (process time) and
calls of the first publication audit, the floor attacks and their respondents' and
coalition's decisions, the insider audit and its path moves, the recheck after growth, HEUR's
search; with the decisions' HiGHS runs and simplex iterations (counts the load does not
change). Run it on the batch files of `bench_vs_tauargus.py` (its --workdir keeps them);
with PYTHONPATH set to another tree it splits that tree's run. Timing only: nothing asserts.

Usage:
    python benchmarks/bench_big_split.py FOLDER/our_HEUR.arb
"""

from __future__ import annotations

import collections
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(HERE.parent))

from argusqt import cli  # noqa: E402
from argusqt.protection import run as prun  # noqa: E402
from argusqt.protection.audit import (  # noqa: E402
    floor_decide,
    insider,
    insider_cover,
    insider_floor,
    insider_repair,
)
from argusqt.protection.suppress import heuristic  # noqa: E402

CPU: collections.Counter[str] = collections.Counter()
CALLS: collections.Counter[str] = collections.Counter()
HIGHS = {"runs": 0, "iterations": 0}

PHASES = [
    (prun, "make_publishable", "make_publishable"),
    (heuristic, "solve_heuristic", "HEUR search"),
    (insider_repair, "publication_audit", "publication audit (first)"),
    (insider_repair, "recheck_after_growth", "recheck after growth"),
    (insider_repair, "repair_insiders", "insider repair"),
    (insider, "_insider_audit", "insider audit"),
    (insider, "_coalition", "insider coalition"),
    (insider._Attacks, "run", "insider attacks"),
    (insider_cover.Cover, "run", "insider cover (path moves)"),
    (insider_cover.Cover, "path", "cover path LPs"),
    (insider_floor, "_respondents", "floor respondents"),
    (insider_floor, "_decide", "respondents' decisions"),
    (insider_floor, "_coalition_decide", "coalition decisions"),
    (insider_floor, "_member_reach", "member reach"),
    (insider_floor._Running, "try_near", "coalition near LPs"),
    (insider_floor._Pool, "offer", "pool offers"),
    (insider_floor._Attackers, "together", "together"),
    (insider_floor._Attackers, "__init__", "attackers built"),
    (floor_decide.Decider, "_neighbourhood", "neighbourhood asked"),
]


def _wrap(owner, name: str, label: str) -> None:
    """Count the calls and CPU of owner.name (nested phases each count their own)."""
    real = getattr(owner, name, None)
    if real is None:  # another tree without this phase
        return

    def timed(*args, **kwargs):
        start = time.process_time()
        CALLS[label] += 1
        try:
            return real(*args, **kwargs)
        finally:
            CPU[label] += time.process_time() - start

    setattr(owner, name, timed)


def _count_runs() -> None:
    """The decisions' HiGHS runs and their simplex iterations."""
    real = floor_decide.solve

    def counted(h):
        out = real(h)
        HIGHS["runs"] += 1
        HIGHS["iterations"] += h.getInfo().simplex_iteration_count
        return out

    floor_decide.solve = counted


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for owner, name, label in PHASES:
        _wrap(owner, name, label)
    _count_runs()
    start = time.process_time()
    rc = cli.main(["batch", args[0]])
    total = time.process_time() - start
    print(f"argusqt from {cli.__file__}; load {os.getloadavg()}")
    print(f"total {total:.1f} CPU-s; decisions' HiGHS runs {HIGHS['runs']:,}, "
          f"iterations {HIGHS['iterations']:,}")  # fmt: skip
    for label, cpu in sorted(CPU.items(), key=lambda kv: -kv[1]):
        print(f"{cpu:8.1f} CPU-s {100 * cpu / total:5.1f} %  {CALLS[label]:8,} calls  {label}")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
