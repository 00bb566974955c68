"""D-94: count tables on τ-Argus's tutorial data with and without the count floor (a
suppressed cell of a count table is known non-empty): secondaries, cost, CPU-seconds, and
the primaries an outsider who reads '-' narrows (independent LP, tests/test_count_floor.py).

    .venv/bin/python benchmarks/bench_count_floor.py [METHODS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import argusqt
import argusqt.protection.core.problem as problem_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_count_floor import shortfalls  # noqa: E402

DATA = Path("/work/shared/data/tauargus/tau_testW")
TABLES = {
    "Size×Region": (["Size", "Region"], {"Region": str(DATA / "region2.hrc")}),
    "Industry×Size": (["IndustryCode", "Size"], {"IndustryCode": [3, 1, 1]}),
    "Year×Size×Region": (["Year", "Size", "Region"], {"Region": str(DATA / "region2.hrc")}),
}
RULES = ["FREQ(3,10)", "FREQ(5,30)"]


def frame() -> pd.DataFrame:
    """The tutorial's categorical fields (positions from tau_testW.rda)."""
    spec = [("Year", 0, 2), ("IndustryCode", 3, 8), ("Size", 8, 10), ("Region", 11, 13)]
    lines = (DATA / "tau_testW.asc").read_text().splitlines()
    return pd.DataFrame({n: [ln[a:b].strip() for ln in lines] for n, a, b in spec})


def run(data: pd.DataFrame, dims, hier, rule: str, method: str, floor: bool) -> str:
    real = problem_module.count_floor
    if not floor:
        problem_module.count_floor = lambda *a: None
    t0 = time.process_time()
    try:
        prot = argusqt.protect(
            data, explanatory=dims, response=None, rules=rule, method=method,
            hierarchies=hier, progress=False,
        )  # fmt: skip
    except argusqt.errors.ArgusError as exc:
        return f"{type(exc).__name__:>22} {time.process_time() - t0:7.2f}"
    finally:
        problem_module.count_floor = real
    cpu = time.process_time() - t0
    t = prot.tables[0].table
    sec = np.isin(np.asarray(t.status), [11, 12])
    cost = float(np.asarray(t.cost)[sec].sum())
    short = len(shortfalls(t)) if t.n_cells <= 1500 else -1
    return f"{int(sec.sum()):5d} {cost:9.0f} {cpu:7.2f} {short:5d}"


def main() -> None:
    methods = sys.argv[1].split(",") if len(sys.argv) > 1 else ["OPT", "MOD", "HEUR", "GH"]
    data = frame()
    print("table | rule | method | before: sec cost cpu-s short | after: sec cost cpu-s short")
    for name, (dims, hier) in TABLES.items():
        for rule in RULES:
            for method in methods:
                if name == "Industry×Size" and method == "OPT":
                    continue  # 1,000+ cells: OPT beyond a benchmark's minutes here
                before = run(data, dims, hier, rule, method, floor=False)
                after = run(data, dims, hier, rule, method, floor=True)
                print(f"{name} | {rule} | {method} | {before} | {after}", flush=True)


if __name__ == "__main__":
    main()
