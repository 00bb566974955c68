"""The floor audit (D-91) of HEUR's pattern on a big table: plain vs with running points.

One HEUR run (as batch runs it) on a synthetic survey, its pattern kept in the workdir, then
`floor_audit` of that pattern, plain (`shortcuts=False`, the session-19 path) and/or with
the running points and neighbourhood LPs (D-100). Prints CPU seconds of this process (the
machine is shared: wall time is not comparable), LPs, peak RSS and whether the disclosures
agree. Timing only: no test asserts them.

Usage:
    python benchmarks/bench_floor_audit.py --instance b7290 --workdir DIR [--mode both|fast|plain]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from business_tables import SURVEYS, cpu, load, tabulated  # noqa: E402


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", default="b7290", choices=sorted(SURVEYS))
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--mode", default="both", choices=("both", "fast", "plain"))
    ap.add_argument("--no-near", action="store_true", help="no neighbourhood LPs")
    ap.add_argument("--no-anchor", action="store_true", help="group LPs not anchored (D-103)")
    args = ap.parse_args(argv)
    survey = SURVEYS[args.instance]
    folder, table = tabulated(args.instance, args.workdir)

    from argusqt.model.status import is_suppressed
    from argusqt.protection.audit.insider_floor import floor_audit
    from argusqt.protection.core import registry
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.heuristic import solve_heur_method

    problem = CSPProblem.from_table(table)
    print(f"{survey.name}: {problem.n_cells:,} cells; load {load()}", flush=True)
    kept = folder / "heur_pattern.npy"
    if kept.exists():
        sup = np.load(kept)
    else:
        desc = registry.get("HEUR")
        opts = desc.options_for(desc.params.coerce({}), registry.table_facts(table, 1))
        c0 = cpu()
        result = solve_heur_method(problem, opts)
        print(f"HEUR: {cpu() - c0:.1f} CPU-s", flush=True)
        sup = is_suppressed(result.status) | problem.primary
        np.save(kept, sup)
    print(f"pattern: {int(sup.sum()):,} suppressed, {int((sup & problem.primary).sum()):,} "
          "primaries", flush=True)  # fmt: skip
    from argusqt.protection.audit import insider_floor

    c_start = cpu()

    def trace(phase: str, figs: dict) -> None:
        print(f"  [{cpu() - c_start:7.1f} CPU-s] {phase}: {figs}", flush=True)

    if args.no_near:
        insider_floor.LOCAL_MIN_CELLS = 1 << 60
    if args.no_anchor:
        insider_floor.ANCHOR_MIN_CELLS = 1 << 60
    spent = {"near s": 0.0, "full s": 0.0, "retried s": 0.0}

    def extreme(self, *a, **k):
        c0, r0 = cpu(), self.n_retries
        try:
            return plain_extreme(self, *a, **k)
        finally:
            spent["full s" if self.n_retries == r0 else "retried s"] += cpu() - c0

    plain_extreme = insider_floor._Lp.extreme

    def timed(fn, name):
        def wrapper(*a, **k):
            c0 = cpu()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += cpu() - c0

        return wrapper

    if os.environ.get("FLOOR_TRACE"):
        insider_floor.TRACE = lambda phase, figs: trace(
            phase, {**figs, **{k: round(v, 1) for k, v in spent.items()}}
        )
        insider_floor._LocalAttacker.improve = timed(insider_floor._LocalAttacker.improve, "near s")
        insider_floor._Lp.extreme = extreme
        statuses: dict[str, int] = {}
        plain_solve = insider_floor.solve

        def solve(h):
            c0 = cpu()
            out = plain_solve(h)
            if out[0] != "optimal":
                key = f"{h.getModelStatus()} {h.getOptionValue('simplex_strategy')}"
                key += f" {cpu() - c0:.2f}s"
                statuses[key] = statuses.get(key, 0) + 1
                print("  failed solve:", key, flush=True)
            return out

        insider_floor.solve = solve
    found = {}
    modes = ("plain", "fast") if args.mode == "both" else (args.mode,)
    for mode in modes:
        c0 = cpu()
        out = floor_audit(problem, sup, problem.floors, shortcuts=mode == "fast")
        keys = [(d.cell, d.direction, d.row) for d in out.disclosures]
        found[mode] = keys
        print(
            f"{mode}: {cpu() - c0:.1f} CPU-s, {out.n_lps:,} LPs {out.lp_counts}, "
            f"{out.pairs_left:,} pairs left by the coalition, {len(keys):,} disclosures "
            f"({len(out.failed):,} pairs), peak RSS {rss_mb():.0f} MB; load {load()}",
            flush=True,
        )
        np.save(folder / f"floor_{mode}.npy", np.array(keys, dtype=np.int64).reshape(-1, 3))
    other = folder / "floor_plain.npy"
    if "fast" in found and other.exists():
        plain = sorted(map(tuple, np.load(other).tolist()))
        same = plain == sorted(found["fast"])
        print(f"same disclosures as plain: {same}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
