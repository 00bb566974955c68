"""HEUR on a big table, phase by phase (issue 26 goal 4, D-56): where a batch run's CPU goes.

Runs the batch file of `bench_vs_tauargus.py` (read, tabulate, rules, SUPPRESS HEUR, write)
in this process with each phase's function wrapped: CPU seconds (user + system of the whole
process: the machine is shared, so wall time is not comparable) and calls, inclusive (a
phase inside another is counted in both). Prints the pattern's secondaries and cost, and
the load. Timing only: no test asserts them.

Usage:
    python benchmarks/bench_heur_phases.py [--instance b31808] [--method HEUR] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from business_tables import RULES, SURVEYS, batch_text, cpu, load, write_survey  # noqa: E402

#: (module, attribute, label): the phases, outermost first; a class method as "Class.name"
PHASES = [
    ("argusqt.session", "Session.open_microdata", "read (metadata)"),
    ("argusqt.session", "Session.compute_tables", "read + tabulate + rules"),
    ("argusqt.session", "Session.protect", "protect (whole)"),
    ("argusqt.protection.run", "run_method", "  run_method (one run of the method)"),
    ("argusqt.protection.suppress.heuristic", "protect_all", "    HEUR path LPs"),
    ("argusqt.protection.suppress.heuristic", "cleanup", "    HEUR clean-up"),
    ("argusqt.protection.suppress.heuristic", "_audit_in_time", "    HEUR's own outsider audit"),
    ("argusqt.protection.run", "make_publishable", "    publication audit + insider repair"),
    ("argusqt.protection.audit.insider_repair", "publication_audit", "      publication audit"),
    ("argusqt.protection.audit.publication", "insider_audit", "        insider audit"),
    ("argusqt.protection.audit.insider_repair", "repair_insiders", "      insider repair"),
    ("argusqt.protection.audit.insider_repair", "recheck_after_growth", "      recheck"),
    ("argusqt.protection.suppress.combined", "_more_secondaries", "  rule's check (sums)"),
    ("argusqt.protection.suppress.combined", "_judge_again", "  judged again (cells added)"),
    ("argusqt.protection.suppress.combined", "_grow", "  rule's cells added (growth, D-56)"),
    ("argusqt.protection.suppress.combined", "grown_verdict", "    grown pattern's verdict"),
    ("argusqt.session", "Session.write_table", "write"),
]


def _wrap(module: str, attr: str, label: str, figures: dict[str, list[float]]) -> None:
    """Replace module.attr by a wrapper adding its CPU seconds and calls to figures[label]."""
    mod = importlib.import_module(module)
    owner: object = mod
    name = attr
    if "." in attr:
        cls, name = attr.split(".")
        owner = getattr(mod, cls)
    if not hasattr(owner, name):
        return  # not in this checkout (before/after comparisons)
    inner = getattr(owner, name)
    figures[label] = [0.0, 0]

    @functools.wraps(inner)
    def timed(*args, **kwargs):
        c0 = cpu()
        try:
            return inner(*args, **kwargs)
        finally:
            figures[label][0] += cpu() - c0
            figures[label][1] += 1

    setattr(owner, name, timed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", default="b31808", choices=sorted(SURVEYS))
    ap.add_argument("--method", default="HEUR")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument(
        "--rerun", action="store_true", help="the rule's reruns for every method (before D-56)"
    )
    args = ap.parse_args(argv)
    survey = SURVEYS[args.instance]
    folder = write_survey(survey, (args.workdir or Path(tempfile.mkdtemp())) / survey.name)
    batch = folder / "phases.arb"
    method = "HEUR(1,10)" if args.method == "HEUR" else args.method
    text = batch_text(
        "survey.asc", "survey.rda", survey.variables, "turnover", RULES, method, "out.csv",
        "turnover",
    )  # fmt: skip
    batch.write_text(text)
    (folder / "out.csv").unlink(missing_ok=True)

    c_start = cpu()
    figures: dict[str, list[float]] = {}
    for module, attr, label in PHASES:
        _wrap(module, attr, label, figures)
    from argusqt.batch.runner import run_batch
    from argusqt.model.status import is_secondary
    from argusqt.protection.suppress import combined

    if args.rerun and hasattr(combined, "GROWN"):
        combined.GROWN = frozenset()

    how = " (reruns)" if args.rerun else ""
    print(f"{survey.name} {args.method}{how}: load at start {load()}", flush=True)
    c0 = cpu()
    outcome = run_batch(batch, logbook=folder / "phases_log.txt")
    total = cpu() - c0
    outcome.raise_for_error()
    table = outcome.session.tables[0]
    sec = is_secondary(table.status)
    cost = float(table.cost[sec].sum())
    print(f"{'phase':48s} {'CPU-s':>8s} {'calls':>6s}")
    for label, (secs, calls) in figures.items():
        if calls:
            print(f"{label:48s} {secs:8.1f} {int(calls):6d}")
    print(f"{'batch (run_batch)':48s} {total:8.1f}")
    print(f"{'process (with imports)':48s} {cpu() - c_start:8.1f}")
    print(
        f"{table.n_cells:,} cells, {int(sec.sum()):,} secondaries, cost {cost:,.2f}, "
        f"audit passed: {outcome.audit_passed}; load at end {load()}"
    )
    for line in (folder / "phases_log.txt").read_text().splitlines():
        if "combined" in line or "finished" in line:
            print("  log:", line[:300])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
