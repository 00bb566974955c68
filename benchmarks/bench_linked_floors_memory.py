"""D-91 (fl19): the memory of the floors of tables judged together (`floors_over`) on the
enterprise data's linked set (act × product, act × region, p% on holdings): the joint
problem's build (tracemalloc peak, the floors' stored bytes) and, one fresh process per
method, the linked run's peak RSS, CPU-seconds, statuses and verdicts.

    .venv/bin/python benchmarks/bench_linked_floors_memory.py [MOD GH]
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data/tauargus/enterprise")


def session():
    """The two tables of tests/enterprise_linked.py, computed (nothing written)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from enterprise_linked import computed

    return computed(DATA)


def _bytes(floors) -> int:
    """What the joint floors keep: their sparse matrices and arrays."""
    total = 0
    for m in (floors.amount, floors.exempt):
        total += m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
    for name in ("alone", "table_of", "cells_of"):
        a = getattr(floors, name, None)
        total += 0 if a is None else a.nbytes
    return total


def build() -> dict:
    """The joint problem's build alone, in this process."""
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.linked import build_linked_problem

    s = session()
    problems = [CSPProblem.from_table(t) for t in s.tables]
    tracemalloc.start()
    t0 = time.process_time()
    joint = build_linked_problem(problems)[0]
    cpu = time.process_time() - t0
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    fl = joint.floors
    return {"cells": joint.n_cells, "attackers": fl.count, "exempt_nnz": int(fl.exempt.nnz),
            "kept_MB": _bytes(fl) / 1e6, "peak_MB": peak / 1e6, "cpu_s": cpu}  # fmt: skip


def one(method: str) -> dict:
    """The linked run of `method` (run in its own process: ru_maxrss is per process)."""
    s = session()
    t0 = time.process_time()
    results = s.protect_linked(method, {"max_minutes": 10} if method == "MOD" else {})
    cpu = time.process_time() - t0
    digest = hashlib.md5(b"".join(t.status.tobytes() for t in s.tables)).hexdigest()[:12]
    return {
        "method": method,
        "cpu_s": cpu,
        "maxrss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
        "cost": [r.cost for r in results],
        "statuses": digest,
        "states": [s.protection_state(no) for no in (1, 2)],
        "verdicts": [r.audit.summary() for r in results],
    }


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2])))
        return
    methods = sys.argv[1:] or ["MOD", "GH"]
    b = build()
    print(f"joint problem: {b['cells']} cells, {b['attackers']} floor attackers, "
          f"exempt entries {b['exempt_nnz']:,}, floors kept {b['kept_MB']:.1f} MB, "
          f"build peak {b['peak_MB']:.1f} MB (tracemalloc), {b['cpu_s']:.2f} CPU-s")  # fmt: skip
    print("| method | CPU-s | peak RSS MB | cost (table 1, 2) | statuses md5 | states |")
    print("|---|---|---|---|---|---|")
    for m in methods:
        out = subprocess.run([sys.executable, __file__, "--one", m], capture_output=True,
                             text=True, check=True)  # fmt: skip
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {m} | {r['cpu_s']:.1f} | {r['maxrss_MB']:.0f} | "
              f"{', '.join(f'{c:,.0f}' for c in r['cost'])} | {r['statuses']} | "
              f"{', '.join(r['states'])} |")  # fmt: skip
        for v in r["verdicts"]:
            print(f"  {v}")


if __name__ == "__main__":
    main()
