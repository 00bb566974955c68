"""How fast Cancel answers in every phase of OPT, MOD and HEUR, and what it leaves.

Each run starts `run_method` in a thread, waits until the method reports the phase (its
progress messages), cancels, and measures the time until `run_method` returns. The outcome
is either an audited pattern (outsider and insider) or "no safe pattern" (Cancelled: the
table stays unprotected) — never "every candidate suppressed". Usage:
    python benchmarks/bench_cancel.py [--quick] [--methods HEUR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from protect_helpers import sized_problem  # noqa: E402

from argusqt.errors import Cancelled  # noqa: E402
from argusqt.model.status import is_suppressed  # noqa: E402
from argusqt.progress import CancelToken, ProgressEvent  # noqa: E402
from argusqt.protection.run import run_method  # noqa: E402

#: (method, table kind, cells, phase: start of a progress message, params)
CASES = [
    ("OPT", "3D", 100_000, "Optimal suppression: start pattern", {"max_time": 600}),
    ("OPT", "1H2D", 2_500, "Optimal suppression: branch-and-cut", {"max_time": 600}),
    ("OPT", "1H2D", 2_500, "Auditing the pattern", {"max_time": 20}),
    ("MOD", "3D", 10_000, "Modular: subtable", {"max_time_per_subtable": 60}),
    ("MOD", "3D", 10_000, "Auditing the pattern", {"max_time_per_subtable": 60}),
    ("HEUR", "3D", 100_000, "Heuristic: primary", {}),
    ("HEUR", "3D", 10_000, "Cleanup", {}),
    ("HEUR", "3D", 10_000, "Auditing the pattern", {}),
]


def run_case(method: str, kind: str, cells: int, phase: str, params: dict) -> tuple:
    p = sized_problem(kind, cells, seed=1)
    token = CancelToken()
    reached = threading.Event()
    box: dict = {}

    def progress(ev: ProgressEvent) -> None:
        if ev.message.startswith(phase):
            reached.set()

    def work() -> None:
        try:
            box["out"] = run_method(p, method, params, progress=progress, cancel=token)
        except Exception as err:  # noqa: BLE001 - reported in the table
            box["out"] = err
        box["done"] = time.perf_counter()

    t0 = time.perf_counter()
    th = threading.Thread(target=work, daemon=True)
    th.start()
    while not reached.is_set() and th.is_alive():
        reached.wait(0.01)
    t_cancel = time.perf_counter()
    if not th.is_alive() and "done" in box:
        return p.n_cells, t_cancel - t0, float("nan"), "finished before the phase"
    token.cancel()
    th.join(600)
    took = box["done"] - t_cancel
    out = box["out"]
    if isinstance(out, Cancelled):
        what = "no safe pattern: table left unprotected"
    elif isinstance(out, Exception):
        what = f"ERROR {type(out).__name__}: {out}"
    else:
        sup = is_suppressed(out.status)
        everything = p.candidate | p.primary | p.secondary
        if np.array_equal(sup, everything):
            what = "SUPPRESS-ALL (defect)"
        else:
            ok = out.verdict is not None and out.verdict.ok
            what = f"{'audited' if ok else 'UNAUDITED'} pattern, {out.n_secondary} secondaries"
    return p.n_cells, t_cancel - t0, took, what


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="the small tables only")
    ap.add_argument("--methods", default="OPT,MOD,HEUR", help="e.g. HEUR")
    args = ap.parse_args()
    methods = {m.strip().upper() for m in args.methods.split(",")}
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores; {load}")
    print(f"{'method':<6}{'cells':>8}  {'phase':<38}{'at s':>7}{'answer s':>10}  outcome")
    for method, kind, cells, phase, params in CASES:
        if (args.quick and cells > 20_000) or method not in methods:
            continue
        n, at, took, what = run_case(method, kind, cells, phase, params)
        print(f"{method:<6}{n:>8}  {phase:<38}{at:>7.1f}{took:>10.2f}  {what}", flush=True)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"after: {load}")


if __name__ == "__main__":
    main()
