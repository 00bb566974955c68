"""Where MOD's CPU goes on the synthetic surveys, phase by phase, in one warm process
(docs/design.md, D-63).

The batch file `MOD(1,1,1,1,1)` of bench_vs_tauargus.py runs through the batch runner
`--repeat` times after one warm-up run; each phase's process CPU is summed inclusively by
wrapping the function that does it (subtable enumeration, per-subtable set-up, path start
and branch-and-cut, the whole-table repair, the polish with its insider checks and its
publication, the rule on combined cells, writing), and the mean per run is printed with
the number of calls (the batch run less Protect and writing: reading and tabulating).
CPU seconds grow with the machine's load: the load is printed, and only phases measured
in the same run compare.

Usage:
    python benchmarks/bench_mod_phases.py [--instances b520,p78] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from business_tables import RULES, SURVEYS, batch_text, write_survey  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Phases:
    """Inclusive process CPU and calls per phase; `polish` tells the polish's calls apart."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.in_polish = False
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, name: str, label: str, split: bool = False) -> None:
        """Time owner.name as `label` (prefixed "polish:" inside the polish when `split`)."""
        real = getattr(owner, name)

        def timed(*args: Any, **kw: Any) -> Any:
            key = f"polish: {label}" if split and self.in_polish else label
            t = time.process_time()
            try:
                return real(*args, **kw)
            finally:
                self.cpu[key] += time.process_time() - t
                self.calls[key] += 1

        self._undo.append((owner, name, real))
        setattr(owner, name, timed)

    def mark_polish(self, owner: Any, name: str) -> None:
        real = getattr(owner, name)

        def marked(*args: Any, **kw: Any) -> Any:
            self.in_polish = True
            try:
                return real(*args, **kw)
            finally:
                self.in_polish = False

        self._undo.append((owner, name, real))
        setattr(owner, name, marked)

    def restore(self) -> None:
        for owner, name, real in reversed(self._undo):
            setattr(owner, name, real)
        self._undo.clear()


@contextmanager
def instrumented() -> Iterator[Phases]:
    """MOD's phases wrapped for the duration (restored after)."""
    import argusqt.protection.run as run
    import argusqt.protection.suppress.combined as combined
    import argusqt.protection.suppress.modular as modular
    import argusqt.protection.suppress.modular_insiders as modular_insiders
    from argusqt.session import Session

    ph = Phases()
    ph.wrap(Session, "protect", "Protect (the Session's door)")
    ph.wrap(Session, "write_table", "writing the table")
    ph.wrap(run, "run_method", "run_method")
    ph.wrap(modular, "subtables", "subtables: enumeration")
    ph.wrap(modular, "_solve_subtable", "subtables: one by one")
    if hasattr(modular, "_solve_depth"):  # D-63: the subtables of a depth at once
        ph.wrap(modular, "_solve_depth", "subtables: a depth at once")
    ph.wrap(modular, "_subproblem", "subtables: local problems")
    ph.wrap(modular, "with_singleton_cells", "singleton cells", split=True)
    ph.wrap(modular, "_path_start", "subtables: path start")
    ph.wrap(modular, "solve_pattern", "branch-and-cut", split=True)
    ph.wrap(modular, "_finish", "whole-table repair, clean-up, audit")
    ph.wrap(modular, "_polish", "polish: all")
    ph.wrap(modular_insiders.PolishInsiders, "__call__", "polish: insider checks")
    ph.wrap(modular, "publish_cheaply", "publication (polish or large table)")
    ph.wrap(run, "make_publishable", "run_method's publication audit")
    ph.wrap(combined, "_grow", "rule on combined cells: growth and verdict")
    ph.wrap(combined, "_finish", "rule on combined cells: statuses")
    ph.mark_polish(modular, "_polish")
    try:
        yield ph
    finally:
        ph.restore()


def measure(key: str, folder: Path, repeat: int) -> tuple[Phases, float]:
    """Phases of MOD on one survey, summed over `repeat` warm runs; the total CPU too."""
    from argusqt.batch.runner import run_batch
    from argusqt.session import Session

    survey = SURVEYS[key]
    write_survey(survey, folder)
    arb = folder / "mod.arb"
    arb.write_text(
        batch_text(
            "survey.asc",
            "survey.rda",
            survey.variables,
            "turnover",
            RULES,
            "MOD(1, 1, 1, 1, 1)",
            "mod.txt",
            "turnover",
        )
    )
    run_batch(arb, session=Session())  # warm-up: imports and caches, not counted
    with instrumented() as ph:
        t = time.process_time()
        for _ in range(repeat):
            run_batch(arb, session=Session())
        total = time.process_time() - t
    return ph, total


def report(key: str, ph: Phases, total: float, repeat: int, out: Callable[[str], None]) -> None:
    out(f"{key}: {total / repeat:.3f} CPU-s per batch run (mean of {repeat}), load {_load()}")
    for label in sorted(ph.cpu, key=lambda k: -ph.cpu[k]):
        out(
            f"  {label:45s} {ph.cpu[label] / repeat * 1000:8.1f} ms  {ph.calls[label] / repeat:6.1f} calls"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="b520,p78")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores; load {_load()}")
    with tempfile.TemporaryDirectory(prefix="bench_mod_phases_") as tmp:
        for key in args.instances.split(","):
            ph, total = measure(key.strip(), Path(tmp) / key.strip(), args.repeat)
            report(key.strip(), ph, total, args.repeat, print)
    print(f"load after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
