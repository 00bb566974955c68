"""Tables of the same records published one after another (D-81): what the joint work costs.

tau_testW's GUI acceptance pair (Size × Region with Size recoded by GK.GRC, Year × Size ×
Region, p%(15,1)): table 1 by OPT (`--first`: RND, IP or CTA, D-93), saved; then table 2 by
each method, grown beside the saved workbook and saved (its joint verdict). Prints per method: cells, secondaries, cells added
beside, cost, CPU-s of the protection (growth included) and of the save (joint verdict).
Usage: python benchmarks/bench_shared_cells.py [--methods HEUR,MOD,OPT] [--first OPT]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tauargus" / "tau_testW"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="HEUR,MOD,OPT")
    ap.add_argument("--first", default="OPT", help="table 1's method: OPT, RND, IP or CTA")
    args = ap.parse_args()
    from argusqt.errors import PublicationError
    from argusqt.model.table import TableSpec
    from argusqt.rules.parse import parse_safety_rule
    from argusqt.session import Session

    work = Path(tempfile.mkdtemp()) / "w"
    shutil.copytree(DATA, work)
    print(f"{'method':<6} {'cells':>6} {'second.':>8} {'added':>6} {'cost':>12} "
          f"{'protect CPU-s':>14} {'save CPU-s':>11}  saved")  # fmt: skip
    for method in args.methods.split(","):
        s = Session()
        s.open_microdata(work / "tau_testW.asc", work / "tau_testW.rda")
        for names in (["Size", "Region"], ["Year", "Size", "Region"]):
            s.specify_table(TableSpec(names, "Var2"))
            s.set_safety_rules(parse_safety_rule("P(15,1)"))
        s.compute_tables()
        s.recode(1, "Size", work / "GK.GRC")
        if args.first == "RND":  # the base the dialog proposes
            facts = s.table_facts(1)
            base = max(facts.covering_rounding_base, facts.min_rounding_base, 1)
            s.protect(1, "RND", {"base": base})
        else:
            s.protect(1, args.first, {"max_minutes": 1})
        s.write_table(1, 1, "", work / f"table1_{method}.xlsx")
        t0 = time.process_time()
        result = s.protect(2, method)
        t1 = time.process_time()
        try:
            s.write_table(2, 1, "", work / f"table2_{method}.xlsx")
            saved = "yes"
        except PublicationError as exc:
            saved = f"refused: {str(exc)[:60]}"
        t2 = time.process_time()
        added = next((line.split()[0] for line in result.log if "in addition" in line), "0")
        n_sec = int(np.isin(s.table(2).status, (11, 12)).sum())
        print(f"{method:<6} {s.table(2).n_cells:>6} {n_sec:>8} {added:>6} {result.cost:>12,.0f} "
              f"{t1 - t0:>14.2f} {t2 - t1:>11.2f}  {saved}")  # fmt: skip


if __name__ == "__main__":
    main()
