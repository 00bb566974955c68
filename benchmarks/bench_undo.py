"""What undo/redo costs (argusqt/history.py): the time a manual status change takes with and
without the step being kept, the bytes one step holds, and the time of undo and redo, for
one table of 10^4 to 4·10^6 cells (a synthetic two-dimensional table, flat codes).

Usage:
    python benchmarks/bench_undo.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argusqt.history import History  # noqa: E402
from argusqt.model.codelist import CodeList  # noqa: E402
from argusqt.model.table import Table, TableSpec  # noqa: E402
from argusqt.session import Session  # noqa: E402


def big_session(side: int) -> Session:
    """A Session holding one (side+1) × (side+1) table with random values (no microdata)."""
    rows = CodeList.flat("A", [f"{i:05d}" for i in range(side)])
    cols = CodeList.flat("B", [f"{i:05d}" for i in range(side)])
    rng = np.random.default_rng(1)
    n = (side + 1) ** 2
    value = rng.integers(1, 1000, n).astype(float)
    freq = rng.integers(1, 30, n).astype(float)
    top = np.stack([value * 0.5, value * 0.2], axis=1)
    t = Table(TableSpec(["A", "B"], "V"), [rows, cols], value, freq, value, value, top)
    s = Session()
    s.kind = "microdata"
    s.tables = [t]
    return s


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(side: int) -> None:
    """One row of the table: a (side+1)² table's change, step size, undo and redo."""
    from argusqt.history import capture

    s = big_session(side)
    t = s.table(1)
    safe = np.flatnonzero(t.status == 1)

    def change(cell: int) -> None:
        s.set_status(1, [cell], "unsafe")
        s.set_status(1, [cell], "safe")

    s.history.depth = 1  # as inside another action: no capture, the action alone
    plain = best(lambda: change(int(safe[0]))) / 2
    s.history = History()
    kept = best(lambda: change(int(safe[1]))) / 2
    nbytes = s.history.undo_steps[-1].nbytes
    undo = best(lambda: (s.undo(), s.redo()))
    s.undo()
    redo = best(lambda: (s.redo(), s.undo()))
    half = safe[: safe.size // 2]  # a protection-sized change: half the statuses at once

    def wide_step() -> None:
        cap = capture(s)
        new = t.status.copy()
        new[half] = 11
        t.status = new
        s.history.record("wide", cap, s)
        s.history.undo(s)

    protect_like = best(wide_step)
    print(
        f"{t.n_cells:>10,} {plain * 1e3:>16.1f} ms {kept * 1e3:>15.1f} ms "
        f"{nbytes:>11,} {undo / 2 * 1e3:>6.1f} ms {redo / 2 * 1e3:>6.1f} ms "
        f"{protect_like * 1e3:>17.1f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="only the two smaller tables")
    args = ap.parse_args()
    sides = [99, 999] if args.quick else [99, 999, 1999]
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'cells':>10} {'change, no history':>19} {'change, with step':>18} "
        f"{'step bytes':>11} {'undo':>9} {'redo':>9} {'protect-like (50 %)':>20}"
    )
    for side in sides:
        measure(side)


if __name__ == "__main__":
    main()
