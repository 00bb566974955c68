"""Issue 22's re-protection scenario: a method after another one on the sample table, next to
a fresh run of it (same Session calls, same parameters).

sample_data activity × region | turnover, P(15,1)|FREQ(3,20)|MAN(20) (738 cells, as
demo.arb's table 1). Before the fix OPT after HEUR returned HEUR's pattern "proven optimal".
Prints per sequence: secondaries, cost, OPT's optimal flag and bound, seconds; the load
(`os.getloadavg`) is printed first. Usage:
    python benchmarks/bench_protect_again.py [--minutes 2] [--sequence HEUR,OPT]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argusqt.batch.arb import parse_specify_table  # noqa: E402
from argusqt.model.status import is_secondary  # noqa: E402
from argusqt.rules.parse import parse_safety_rule  # noqa: E402
from argusqt.session import Session  # noqa: E402


def _session(folder: Path) -> Session:
    s = Session()
    s.open_microdata(folder / "enterprise.asc", folder / "enterprise.rda")
    s.specify_table(parse_specify_table('"activity""region"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(3,20)|MAN(20)"))
    s.compute_tables()
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=2.0, help="max_minutes of every method")
    ap.add_argument("--sequence", default="HEUR,OPT", help="methods run one after the other")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="argusqt-bench-"))
    for f in (ROOT / "sample_data").iterdir():
        if f.is_file():
            shutil.copy(f, folder / f.name)
    print(f"load average {os.getloadavg()}")
    seq = args.sequence.split(",")
    for label, methods in (("after", seq), ("fresh", seq[-1:])):
        s = _session(folder)
        for m in methods:
            t0 = time.perf_counter()
            r = s.protect(1, m, {"max_minutes": args.minutes})
            n = int(is_secondary(s.table(1).status).sum())
            print(
                f"{label:5s} {m:4s}: {n} secondaries, cost {r.cost:,.0f}, optimal {r.optimal}, "
                f"bound {r.lower_bound}, {time.perf_counter() - t0:.1f} s"
            )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
