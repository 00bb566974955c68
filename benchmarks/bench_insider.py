"""Cost of the insider audit beside the outsider audit, on generated 3-D tables.

For each size: the HEUR pattern without singleton options (so that insiders find cells to
recompute) and the repaired, publishable pattern of run_method; for both the outsider audit
(pass/fail) and the insider audit are timed. Usage:
    python benchmarks/bench_insider.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from protect_helpers import sized_problem  # noqa: E402

from argusqt.model.status import is_suppressed  # noqa: E402
from argusqt.protection.audit.insider import insider_audit  # noqa: E402
from argusqt.protection.audit.insider_repair import make_publishable  # noqa: E402
from argusqt.protection.audit.outsider import audit  # noqa: E402
from argusqt.protection.suppress.heuristic import solve_heuristic  # noqa: E402


def row(label: str, p, sup) -> str:
    t0 = time.perf_counter()
    out = audit(p, sup, intervals=False)
    t_out = time.perf_counter() - t0
    t0 = time.perf_counter()
    ins = insider_audit(p, sup)
    t_ins = time.perf_counter() - t0
    return (
        f"{p.n_cells:>8}  {label:<22}{int(sup.sum()):>7}{ins.attackers:>8}{ins.n_lps:>8}"
        f"{len(ins.disclosures):>8}{t_out:>10.1f}{t_ins:>10.1f}  {'ok' if out.ok else 'FAILS'}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores; {load}")
    print(
        f"{'cells':>8}  {'pattern':<22}{'sup':>7}{'resp':>8}{'LPs':>8}{'found':>8}"
        f"{'outsider s':>10}{'insider s':>10}"
    )
    for n in args.sizes:
        p = sized_problem("3D", n, seed=1)
        res = solve_heuristic(p, {})
        sup = is_suppressed(res.status)
        print(row("HEUR, no singletons", p, sup), flush=True)
        t0 = time.perf_counter()
        fixed, verdict, added = make_publishable(p, sup, intervals=False)
        took = time.perf_counter() - t0
        print(row(f"repaired (+{added} cells)", p, fixed), flush=True)
        print(f"{'':>10}repair loop with its verdicts: {took:.1f} s", flush=True)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"after: {load}")


if __name__ == "__main__":
    main()
