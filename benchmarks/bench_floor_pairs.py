"""The floor audit's respondents' phase on a big block, measured pair by pair (D-103).

HEUR's pattern (kept in the workdir by bench_floor_audit.py), then `floor_audit` restricted
(`only`) to a seeded random sample of the largest component's (primary, side) targets: the
coalition settles some, the rest go to the respondents' group tests. Per group LP: depth of
the halving, group size, bounds changed, simplex iterations, CPU; per pair: LPs, whether the
first group settled it, disclosures. CPU of this process; timing only, no test asserts it.

Usage:
    python benchmarks/bench_floor_pairs.py --instance b31808 --workdir DIR [--targets 60]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from business_tables import SURVEYS, cpu, load, tabulated  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", default="b31808", choices=sorted(SURVEYS))
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--targets", type=int, default=60)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--plain", action="store_true", help="shortcuts=False")
    ap.add_argument(
        "--both-sides",
        action="store_true",
        help="targets/2 random primaries, both sides of each (a primary's other side, D-120)",
    )
    ap.add_argument("--save", default="", help="disclosures to this .npy")
    ap.add_argument("--compare", default="", help="an earlier --save to compare with")
    ap.add_argument(
        "--no-anchor", action="store_true", help="group LPs not from the anchor (D-103)"
    )
    ap.add_argument("--local-depth", type=int, default=None, help="floor_local.LOCAL_DEPTH (D-106)")
    ap.add_argument(
        "--decide-depth", type=int, default=None, help="floor_decide.LOCAL_DEPTH (D-112; 0: off)"
    )
    args = ap.parse_args(argv)
    folder, table = tabulated(args.instance, args.workdir)

    from argusqt.protection.audit import insider_floor as fa
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.lp.components import DOWN, UP, variable_components

    problem = CSPProblem.from_table(table)
    sup = np.load(folder / "heur_pattern.npy")
    comps = list(variable_components(problem.relations.tocsr(), sup))
    big = max(comps, key=lambda c: c.cells.size)
    prim = problem.primary & sup
    cells = big.cells[prim[big.cells]]
    all_t = [(int(c), d) for c in cells.tolist() for d in (UP, DOWN)
             if (problem.upl[c] if d == UP else problem.lpl[c]) > 0]  # fmt: skip
    rng = np.random.default_rng(args.seed)
    if args.both_sides:
        prims = sorted({c for c, _ in all_t})
        size = min(args.targets // 2, len(prims))
        chosen = set(rng.choice(prims, size=size, replace=False).tolist())
        pick = [k for k, t in enumerate(all_t) if t[0] in chosen]
    else:
        pick = sorted(rng.choice(len(all_t), size=min(args.targets, len(all_t)), replace=False))
    only = [all_t[k] for k in pick]
    print(f"{args.instance}: block {big.cells.size:,} cells, {len(all_t):,} targets, "
          f"sample {len(only)}; load {load()}", flush=True)  # fmt: skip

    lps: list[dict] = []
    state = {"pair": -1, "group": 0, "gc": 0, "phase": "coalition"}
    plain_extreme = fa._Lp.extreme
    plain_together = fa._Attackers.together
    plain_points = fa._Points.__init__
    plain_resp = fa._respondents
    plain_anchor = fa._anchor
    if args.no_anchor:
        fa.ANCHOR_MIN_CELLS = 1 << 60
    if args.local_depth is not None:
        from argusqt.protection.audit import floor_local

        floor_local.LOCAL_DEPTH = args.local_depth
    if args.decide_depth is not None:
        from argusqt.protection.audit import floor_decide

        floor_decide.LOCAL_DEPTH = args.decide_depth

    def anchor(*a, **k):
        state["group"], state["gc"] = -1, 0
        return plain_anchor(*a, **k)

    def extreme(self, cell, direction, strict=True):
        c0 = cpu()
        it0 = self.h.getInfo().simplex_iteration_count
        r0 = self.n_retries
        reach, x = plain_extreme(self, cell, direction, strict)
        lps.append({"phase": state["phase"], "pair": state["pair"], "cell": cell, "d": direction,
                    "group": state["group"], "gc": state["gc"], "reach": reach,
                    "iters": self.h.getInfo().simplex_iteration_count - it0,
                    "retried": self.n_retries - r0, "cpu": cpu() - c0})  # fmt: skip
        return reach, x

    def together(self, group, j, lo, hi):
        out = plain_together(self, group, j, lo, hi)
        state["group"], state["gc"] = int(group.size), int(out[0].size)
        return out

    def points_init(self, att, j):
        state["pair"] += 1
        plain_points(self, att, j)

    def respondents(*a, **k):
        state["phase"] = "respondents"
        try:
            return plain_resp(*a, **k)
        finally:
            state["phase"] = "coalition"

    fa._Lp.extreme = extreme
    fa._Attackers.together = together
    fa._Points.__init__ = points_init
    fa._respondents = respondents
    fa._anchor = anchor
    c0 = cpu()
    out = fa.floor_audit(problem, sup, problem.floors, only=only, shortcuts=not args.plain)
    total = cpu() - c0
    need = {(c, d): problem.values[c] + (problem.upl[c] if d == UP else -problem.lpl[c])
            for c, d in only}  # fmt: skip
    tol = problem.tolerance
    resp = [r for r in lps if r["phase"] == "respondents"]
    coal = [r for r in lps if r["phase"] == "coalition"]
    print(f"floor audit of the sample: {total:.1f} CPU-s, {out.pairs_left} pairs left, "
          f"{len(out.disclosures)} disclosures ({len(out.failed)} pairs), {out.lp_counts}")  # fmt: skip
    if coal:
        cc = np.array([r["cpu"] for r in coal])
        ci = np.array([r["iters"] for r in coal])
        print(f"coalition LPs {len(coal)}: CPU median {np.median(cc):.3f} s, sum {cc.sum():.1f};"
              f" iterations median {np.median(ci):.0f}, max {ci.max()}")  # fmt: skip
    by_pair: dict[int, list[dict]] = {}
    for r in resp:
        by_pair.setdefault(r["pair"], []).append(r)
    print(
        "pair  cell   d  LPs  anchor(iters,cpu)  first(group,gc,iters,cpu,reach?)  iters  cpu  found"
    )
    firsts = 0
    for p, rs in sorted(by_pair.items()):
        key = (rs[0]["cell"], rs[0]["d"])
        a = [r for r in rs if r["group"] == -1]
        g = [r for r in rs if r["group"] != -1]
        anc = f"({a[0]['iters']},{a[0]['cpu']:.2f})" if a else "-"
        first = "-"
        if g:
            f = g[0]
            ok = f["reach"] == f["reach"] and fa._reaches(f["reach"], need[key], f["d"], tol)
            firsts += ok
            first = f"({f['group']},{f['gc']},{f['iters']},{f['cpu']:.2f},{ok})"
        n_disc = sum(1 for d in out.disclosures if (d.cell, d.direction) == key)
        print(f"{p:4} {key[0]:6} {key[1]:2} {len(rs):4}  {anc}  {first}  "
              f"{sum(r['iters'] for r in rs):6} {sum(r['cpu'] for r in rs):6.2f}  {n_disc}")  # fmt: skip
    if resp:
        rc = np.array([r["cpu"] for r in resp])
        ri = np.array([r["iters"] for r in resp])
        n_a = sum(1 for r in resp if r["group"] == -1)
        print(f"respondents' LPs {len(resp)} ({n_a} outsider) over {len(by_pair)} pairs: "
              f"first group settles {firsts}; "
              f"CPU sum {rc.sum():.1f} s, median {np.median(rc):.3f}; iterations median "
              f"{np.median(ri):.0f}, mean {ri.mean():.0f}, max {ri.max()}; "
              f"ms/iteration {1000 * rc.sum() / max(ri.sum(), 1):.3f}; retried "
              f"{sum(r['retried'] for r in resp)}; load {load()}")  # fmt: skip
    if args.save:
        keys = sorted((d.cell, d.direction, d.row) for d in out.disclosures)
        np.save(args.save, np.array(keys, dtype=np.int64).reshape(-1, 3))
        other = Path(args.compare) if args.compare else None
        if other is not None and other.exists():
            print(
                "same disclosures as",
                other,
                ":",
                np.load(other).tolist() == [list(k) for k in keys],
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
