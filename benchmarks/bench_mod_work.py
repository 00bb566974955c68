"""MOD's work on the synthetic surveys, in one process: HiGHS solves, insider audits, the
branch-and-cut's attacker LPs, CPU seconds of the method, cost (docs/design.md, D-48, D-58).

The batch file `MOD(1,1,1,1,1)` of bench_vs_tauargus.py runs through the batch runner;
`run_method` is timed (process CPU, after one warm-up run) and the solves are counted, so
a change's effect shows in counts that do not depend on the machine's load. The load is
printed: CPU seconds grow with it on a shared machine.

Usage:
    python benchmarks/bench_mod_work.py [--instances b520,p78] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from business_tables import RULES, SURVEYS, batch_text, write_survey  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(key: str, folder: Path, repeat: int) -> dict:
    """Counts and CPU of MOD on one survey (median CPU of `repeat` warm runs)."""
    import highspy

    import argusqt.protection.audit.publication as publication
    import argusqt.protection.run as run
    import argusqt.protection.suppress.branch_and_cut as branch_and_cut
    import argusqt.protection.suppress.modular as modular
    import argusqt.protection.suppress.modular_insiders as modular_insiders
    from argusqt.batch.runner import run_batch
    from argusqt.session import Session

    survey = SURVEYS[key]
    write_survey(survey, folder)
    arb = folder / "mod.arb"
    arb.write_text(
        batch_text(
            "survey.asc",
            "survey.rda",
            survey.variables,
            "turnover",
            RULES,
            "MOD(1, 1, 1, 1, 1)",
            "mod.txt",
            "turnover",
        )
    )
    counts = {"solves": 0, "insider": 0, "bc_lps": 0}
    cpu: list[float] = []
    results = []
    real_run = highspy.Highs.run
    real_insider = publication.insider_audit
    real_method = run.run_method
    real_solve = modular.solve_pattern

    def solves(self, *args, **kw):  # type: ignore[no-untyped-def]
        counts["solves"] += 1
        return real_run(self, *args, **kw)

    def insider(*args, **kw):  # type: ignore[no-untyped-def]
        counts["insider"] += 1
        return real_insider(*args, **kw)

    def solve_pattern(*args, **kw):  # type: ignore[no-untyped-def]
        out = real_solve(*args, **kw)
        counts["bc_lps"] += out.lps
        return out

    def method(*args, **kw):  # type: ignore[no-untyped-def]
        for k in counts:
            counts[k] = 0
        t = time.process_time()
        res = real_method(*args, **kw)
        cpu.append(time.process_time() - t)
        results.append((res, dict(counts)))
        return res

    highspy.Highs.run = solves
    publication.insider_audit = insider
    branch_and_cut.insider_audit = insider
    modular_insiders.insider_audit = insider
    modular.solve_pattern = solve_pattern
    run.run_method = method
    try:
        for _ in range(repeat + 1):  # the first run warms caches and is not counted
            run_batch(arb, session=Session())
    finally:
        highspy.Highs.run = real_run
        publication.insider_audit = real_insider
        branch_and_cut.insider_audit = real_insider
        modular_insiders.insider_audit = real_insider
        modular.solve_pattern = real_solve
        run.run_method = real_method
    res, work = results[-1]
    return {
        "cpu": statistics.median(cpu[1:]),
        "cpu_min": min(cpu[1:]),
        "cost": float(res.cost),
        "verdict": bool(res.verdict is not None and res.verdict.ok),
        **work,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="b520,p78")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores; load {_load()}")
    print(
        f"{'table':8} {'CPU s':>7} {'min':>7} {'HiGHS':>7} {'B&C LPs':>8} {'insider':>8} "
        f"{'cost':>16}  verdict"
    )
    with tempfile.TemporaryDirectory(prefix="bench_mod_") as tmp:
        for key in args.instances.split(","):
            r = measure(key.strip(), Path(tmp) / key.strip(), args.repeat)
            print(
                f"{key:8} {r['cpu']:7.3f} {r['cpu_min']:7.3f} {r['solves']:7d} "
                f"{r['bc_lps']:8d} {r['insider']:8d} {r['cost']:16,.2f}  "
                f"{'pass' if r['verdict'] else 'FAIL'}",
                flush=True,
            )
    print(f"load after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
