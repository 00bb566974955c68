"""Linked tables: what the gate's verdict costs when it comes with the protection (D-50).

The enterprise linked case (act × product and act × region, p% on holdings, MOD on the
cover table built from the microdata, as tests/test_linked_enterprise.py) through the
Session: CPU seconds of `protect_linked`, of the verdict step in it (measured alone on the
result) and of saving both tables for publication afterwards. Before D-50 the verdict ran
at the first save; run this script from an older checkout (`--repo`) to compare.
Usage: python benchmarks/bench_linked_verdict.py [--repo DIR] [--method MOD]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tauargus" / "enterprise"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--method", default="MOD")
    args = ap.parse_args()
    sys.path.insert(0, str(args.repo))
    from argusqt.model.rulespec import PRule, SafetyRules
    from argusqt.model.table import CostSpec, TableSpec
    from argusqt.session import Session

    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "enterprise"
        shutil.copytree(DATA, folder)
        s = Session()
        s.open_microdata(folder / "example_enterprise.asc", folder / "example_enterprise.rda")
        for ex in (["act", "product"], ["act", "region"]):
            s.specify_table(
                TableSpec(ex, "turnover", cost=CostSpec("variable", "turnover"), rules=rules)
            )
        s.compute_tables()
        params = {"max_minutes": 2} if args.method in ("MOD", "OPT") else None
        c0 = time.process_time()
        s.protect_linked(args.method, params)
        c1 = time.process_time()
        states = [s.protection_state(no) for no in (1, 2)]
        verdict_cpu = None
        try:  # the verdict step alone, on the tables as protected (D-50's addition)
            from argusqt.export.gate import linked_table_verdicts

            tables = [s.table(n) for n in s.linked]
            v0 = time.process_time()
            linked_table_verdicts(tables, s.linked)
            verdict_cpu = time.process_time() - v0
        except ImportError:
            pass  # a checkout before D-50
        from argusqt.errors import PublicationError

        w0 = time.process_time()
        saved = "both written"
        for no in (1, 2):
            try:
                s.write_table(no, 3, "", folder / f"t{no}.txt")
            except PublicationError as exc:
                saved = f"table {no} refused: {str(exc)[:160]}…"
                break
        w1 = time.process_time()
    load = os.getloadavg()[0]
    print(f"repo {args.repo}  method {args.method}  load {load:.1f}")
    print(f"protect_linked CPU {c1 - c0:.2f} s; states after it {states}")
    if verdict_cpu is not None:
        print(f"verdict step alone (linked_table_verdicts) CPU {verdict_cpu:.2f} s")
    print(f"first save of both tables CPU {w1 - w0:.2f} s ({saved})")
    print(f"protect + save CPU {c1 - c0 + w1 - w0:.2f} s")


if __name__ == "__main__":
    main()
