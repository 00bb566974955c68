"""D-105: the insider repair's `spare` with and without its shortcuts (a cell proven needed
without an LP, the pairs that failed before first) on opt700 tables: make_publishable of
HEUR's pattern, as OPT's guided heuristic runs it. Prints witness LPs, CPU-s, the pattern's
cost and whether both settings give the same pattern (they must).

Usage:
    python benchmarks/bench_spare.py [--only opt_bound,g22] [--tables 32]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from opt700_tables import opt700_set, read_problem  # noqa: E402


def problem_of(t, work: Path):  # type: ignore[no-untyped-def]
    """The table's CSP problem as OPT sees it, in a folder of its own under `work`."""
    folder = work / re.sub(r"\W+", "_", t.name).strip("_")
    folder.mkdir(parents=True, exist_ok=True)
    return read_problem(t, folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="opt_bound,g22,g12,sample")
    ap.add_argument("--tables", type=int, default=32)
    args = ap.parse_args()
    import numpy as np

    from argusqt.model.status import is_suppressed
    from argusqt.protection.audit import insider_repair
    from argusqt.protection.lp.components import MoveContext
    from argusqt.protection.suppress.heuristic import solve_heuristic

    paths = [0]  # path LPs solved (the repair's and spare's witness areas)
    path_move = MoveContext.path_move

    def counted(self, *a, **k):  # type: ignore[no-untyped-def]
        paths[0] += 1
        return path_move(self, *a, **k)

    MoveContext.path_move = counted  # type: ignore[method-assign]
    only = args.only.split(",")
    print(f"load {os.getloadavg()}")
    print("| table | cells | setting | witness calls | path LPs | all LPs | CPU-s | cost | same |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for t in opt700_set(args.tables, extras=True):
            if not any(t.name.startswith(o) for o in only):
                continue
            p = problem_of(t, Path(tmp))
            sup = is_suppressed(solve_heuristic(p).status) | p.primary
            cost = np.asarray(p.cost, dtype=float)
            got = {}
            for on in (False, True):
                insider_repair.SPARE_SHORTCUTS = on
                work = insider_repair.RepairWork()
                paths[0] = 0
                c0 = time.process_time()
                fixed, _, _ = insider_repair.make_publishable(p, sup, intervals=False, work=work)
                cpu = time.process_time() - c0
                got[on] = fixed
                same = "" if not on else str(bool(np.array_equal(got[False], fixed)))
                print(
                    f"| {t.name} | {p.n_cells} | {'shortcuts' if on else 'plain'} | "
                    f"{work.spare:,} | {paths[0]:,} | {work.total:,} | {cpu:.1f} | "
                    f"{cost[fixed & ~p.primary].sum():,.0f} | {same} |",
                    flush=True,
                )
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
