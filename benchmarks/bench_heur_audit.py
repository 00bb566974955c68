"""HEUR's publication audit on a big table with and without the method's moves (D-49).

One HEUR run (as batch runs it, singleton options on) on a synthetic survey, then the
publication audit of its pattern (outsider reused, insiders attacked) twice: plain, and
started from HEUR's kept moves (Cover.seed). Prints CPU seconds (this process, user +
system: the machine is shared, so wall time is not comparable), LPs, the cover's figures
and whether both verdicts and repaired patterns agree. Timing only: no test asserts them.

Usage:
    python benchmarks/bench_heur_audit.py [--instance b31808] [--workdir DIR]
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
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    survey = SURVEYS[args.instance]
    folder, table = tabulated(args.instance, args.workdir)

    from argusqt.model.status import is_suppressed
    from argusqt.protection.audit.insider_repair import make_publishable
    from argusqt.protection.core import registry
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.heuristic import solve_heur_method

    problem = CSPProblem.from_table(table)
    desc = registry.get("HEUR")
    opts = desc.options_for(desc.params.coerce({}), registry.table_facts(table, 1))
    print(f"{survey.name}: {problem.n_cells:,} cells; load {load()}", flush=True)
    c0 = cpu()
    result = solve_heur_method(problem, opts)
    print(f"HEUR: {cpu() - c0:.1f} CPU-s; {len(result.moves):,} kept moves", flush=True)
    for line in result.log[:2]:
        print("  ", line)
    sup = is_suppressed(result.status) | problem.primary
    out = {}
    for name, moves in (("plain", None), ("from HEUR's moves", result.moves)):
        c0 = cpu()
        fixed, verdict, added = make_publishable(
            problem, sup, outsider=result.audit, intervals=False, moves=moves
        )
        ins = verdict.insider
        assert ins is not None
        # the last verdict's figures: the recheck after the repair when there was one
        figs = {k: v for k, v in ins.figures.items() if k in ("seeded", "rechecked_respondents")}
        print(
            f"publication audit + repair, {name}: {cpu() - c0:.1f} CPU-s, {added} cells added, "
            f"{ins.n_lps:,} insider LPs, {figs}; load {load()}",
            flush=True,
        )
        out[name] = fixed
    same = np.array_equal(*out.values())
    print(f"same repaired pattern: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
