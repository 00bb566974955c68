"""Would a convex combination of the respondents' pool points settle a pair's first group?

Measures D-106's dropped lead on a sample as `bench_floor_pairs.py` draws it: before each
pair's first group LP, an LP over the weights of the pool's points (each a point of the
table's bounds and relations): Σλ = 1, the group's bounds that some point breaks, the
primary's extreme. Counts the first groups it settles; observes only, changes no answer.

Usage:
    python benchmarks/bench_floor_combo.py --instance b31808 --workdir DIR [--targets 40]
"""

from __future__ import annotations

import resource
import runpy
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    import highspy

    from argusqt.protection.audit import insider_floor as fa

    state: dict = {"pool": None, "first": False}
    stats = {"groups": 0, "settled": 0, "cpu": 0.0}
    real_offer = fa._Pool.offer
    real_together = fa._Attackers.together

    def offer(self, points, members, j, need, d, tol):
        state.update(pool=self, first=True, need=need, d=d, tol=tol)
        return real_offer(self, points, members, j, need, d, tol)

    def together(self, group, j, lo, hi):
        out = real_together(self, group, j, lo, hi)
        pool = state["pool"]
        if not state["first"] or pool is None:
            return out
        state["first"] = False
        c0 = cpu()
        gc, glo, ghi = out
        k = min(pool.n, fa.POOL_SIZE)
        pts = pool.rows[:k][:, np.searchsorted(self.cells, gc)]
        broken = ~np.all((pts >= glo - 1e-9) & (pts <= ghi + 1e-9), axis=0)
        settled = False
        if k:
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            pj = pool.rows[:k, j]
            h.addVars(k, np.zeros(k), np.full(k, highspy.kHighsInf))
            cost = -pj if state["d"] == fa.UP else pj
            h.changeColsCost(k, np.arange(k, dtype=np.int32), cost.astype(float))
            h.addRow(1.0, 1.0, k, np.arange(k, dtype=np.int32), np.ones(k))
            for r, lo_r, hi_r in zip(pts[:, broken].T, glo[broken], ghi[broken], strict=True):
                nz = np.flatnonzero(r)
                h.addRow(float(lo_r), float(hi_r), nz.size, nz.astype(np.int32), r[nz])
            h.run()
            if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
                val = float(np.asarray(h.getSolution().col_value) @ pj)
                settled = fa._reaches(val, state["need"], state["d"], state["tol"])
        stats["groups"] += 1
        stats["settled"] += int(settled)
        stats["cpu"] += cpu() - c0
        print(f"  first group {group.size}: pool {k}, rows {int(broken.sum())}, "
              f"settled {settled}", flush=True)  # fmt: skip
        return out

    fa._Pool.offer = offer
    fa._Attackers.together = together
    sys.argv = ["bench_floor_pairs.py", *sys.argv[1:]]
    try:
        runpy.run_path(str(HERE / "bench_floor_pairs.py"), run_name="__main__")
    finally:
        print("combinations:", stats)


if __name__ == "__main__":
    main()
