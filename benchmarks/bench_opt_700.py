"""Issue 26, goal 1: OPT on 500–900-cell 2-D hierarchical tables (opt700_tables.py's set, the
case opt_bound_805 and the sample table), one fresh process per table.

Per table: cells, equations, primaries, wall, CPU and peak RSS of the OPT step, cost, the
certified lower bound, gap, proven or not, and the publication audit (outsider + insider)
of the statuses OPT left, run again here. Last line: the share proven optimal and the
largest gap of the rest.

`--cpu` (default) measures OPT's limit in CPU-seconds of its process: the run's clock
(argusqt.protection.budget.CLOCK) becomes `time.process_time` and SCIP's clock its CPU
clock, so that "proven within 60 CPU-seconds" means the same on a loaded machine (2 cores
shared by 8 agents) as on a quiet one; `--wall` keeps the wall clock (as a user runs it).
With `--engine` and `pytauargus` installed (a benchmark-only tool, never a dependency) the
τ-Argus engine's OPT runs on the same batch file beside ours: wall, CPU, cost, proven.

Usage:
    python benchmarks/bench_opt_700.py [--tables 32] [--seconds 60] [--only g03,sample]
        [--wall] [--engine] [--no-extras] [--workdir DIR] [--jobs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from opt700_tables import Opt700Table, opt700_set  # noqa: E402

GOAL_SHARE = 0.9
GOAL_GAP = 0.02
SAMPLE_GAP = 0.05


# ---------------------------------------------------------------------- child: one table
def _cpu_clock() -> None:
    """OPT's time limit in CPU-seconds of this process: the run's deadlines (budget and
    progress clocks) and SCIP's clock. HiGHS's own time limit (the separator hands it what
    the deadline leaves) counts wall seconds since the LP object was made: under load that
    ran out first (runs stopped at 35–40 CPU-s of 60), so it is left unlimited here."""
    import highspy

    from argusqt import progress
    from argusqt.protection.core import budget
    from argusqt.protection.suppress import branch_and_cut

    budget.CLOCK = time.process_time
    progress.CLOCK = time.process_time  # type: ignore[attr-defined]
    set_option = highspy.Highs.setOptionValue

    def no_time_limit(self, name, value):  # type: ignore[no-untyped-def]
        if name == "time_limit":
            return None
        return set_option(self, name, value)

    highspy.Highs.setOptionValue = no_time_limit  # type: ignore[method-assign]

    class CpuModel(branch_and_cut.Model):  # type: ignore[misc, name-defined]
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            self.setParam("timing/clocktype", 1)  # SCIP: CPU time

    branch_and_cut.Model = CpuModel  # type: ignore[attr-defined, misc]


def _extra_params(extra: dict) -> None:
    """OPT's solver options beyond the batch syntax (e.g. covers=false, guided=false) for
    comparisons: merged into what run_method hands solve_optimal."""
    from argusqt.protection.suppress import optimal

    solve = optimal.solve_optimal

    def with_extra(problem, params=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        given = params.as_dict() if hasattr(params, "as_dict") else dict(params or {})
        return solve(problem, {**given, **extra}, *args, **kwargs)

    optimal.solve_optimal = with_extra  # type: ignore[assignment]


#: per SCIP model of the run: free cells, root bound, final dual and primal bound, nodes
SCIP_STATS: list[tuple[int, float, float, float, int]] = []


def _scip_stats() -> None:
    """Record SCIP's root bound, final bound and incumbent of each branch-and-cut (the
    bound's share of a gap: how far the root LP is from the end and from the pattern)."""
    from argusqt.protection.suppress import branch_and_cut

    base = branch_and_cut.Model

    class StatsModel(base):  # type: ignore[misc, valid-type]
        def _note(self) -> None:
            SCIP_STATS.append((self.getNVars(), self.getDualboundRoot(), self.getDualbound(),
                               self.getPrimalbound(), self.getNNodes()))  # fmt: skip

        def optimizeNogil(self):  # type: ignore[no-untyped-def]
            super().optimizeNogil()
            self._note()

        def optimize(self):  # type: ignore[no-untyped-def]
            super().optimize()
            self._note()

    branch_and_cut.Model = StatsModel  # type: ignore[attr-defined, misc]


def child(folder: Path, seconds: float, cpu: bool, extra: dict | None = None) -> dict:
    """Read the table through the batch runner, run OPT as batch does, audit its statuses."""
    if cpu:
        _cpu_clock()
    _scip_stats()
    extra = dict(extra or {})
    combined = extra.pop("combined", None)  # the rule on combined cells (US#160), not OPT's
    if extra:
        _extra_params(extra)
    from argusqt.batch.runner import run_batch
    from argusqt.model.status import is_suppressed
    from argusqt.protection.audit.publication import publication_audit
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.rules.changes import posed_status
    from argusqt.session import Session

    session = Session()
    outcome = run_batch(folder / "read.arb", session=session)
    if getattr(outcome, "error", None):
        return {"error": str(outcome.error)}
    table = session.table(1)
    if combined is not None:  # on by default since issue 27; false = COMB(0), the rules
        table.spec.rules.combined = bool(combined)
    problem = CSPProblem.from_table(table, status=posed_status(table))
    w0, c0 = time.perf_counter(), time.process_time()
    res = session.protect(1, "OPT", {"max_minutes": seconds / 60.0})
    wall, cpu_s = time.perf_counter() - w0, time.process_time() - c0
    suppressed = is_suppressed(res.status)
    verdict = publication_audit(problem, suppressed)
    scip = next((line for line in res.log or [] if line.startswith("SCIP status")), "")
    main = max(SCIP_STATS, default=(0, None, None, None, 0))
    return {
        "root": main[1],
        "scip_bound": main[2],
        "scip_primal": main[3],
        "cells": int(problem.n_cells),
        "equations": int(problem.relations.shape[0]),
        "primaries": int(problem.primary.sum()),
        "secondaries": int((suppressed & ~problem.primary).sum()),
        "wall": wall,
        "cpu": cpu_s,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "cost": float(res.cost),
        "bound": None if res.lower_bound is None else float(res.lower_bound),
        "gap": None if res.gap is None else float(res.gap),
        "proven": bool(res.optimal),
        "timed_out": bool(res.timed_out),
        "outsider": bool(verdict.outsider.ok),
        "insider": bool(verdict.ok),
        "insiders": int(verdict.insiders_checked),
        "nodes": int(res.figures.get("nodes", 0)),
        "lps": int(res.figures.get("attacker_lps", 0)),
        "scip": scip,
        "rins": next((x for x in res.log or [] if x.startswith("neighbourhood")), ""),
        "guided": next(
            (
                x.partition("; guided heuristic")[2]
                for x in res.log or []
                if "; guided heuristic" in x
            ),
            "",
        ),
        "rins_found": int(res.figures.get("rins_found", 0)),
        # the root's gap started the run again (rule-aware bridgeless cuts; MOD's start, D-110)
        "restart": any("again with the rule-aware" in x for x in res.log or []),
        "repair": next((x for x in res.log or [] if x.startswith("rule repair")), ""),
        "combined_added": int(res.figures.get("combined_added", 0)),
    }


# ---------------------------------------------------------------------- engine (optional)
def engine_exe() -> str | None:
    """pytauargus's `tauargus` command, or None (it is never installed by argusqt)."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("pytauargus") is None:
        return None
    exe = Path(sys.executable).with_name("tauargus")
    return str(exe) if exe.exists() else shutil.which("tauargus")


def run_engine(exe: str, folder: Path, t: Opt700Table, seconds: float) -> dict:
    """The engine's OPT(1, minutes) on the same input: wall, CPU, cost, proven (its CSP log
    says "optimal solution"); killed after ten times its limit."""
    from bench_vs_tauargus import load

    minutes = max(1, round(seconds / 60.0))
    batch = folder / "engine.arb"
    out = folder / "engine.txt"
    out.unlink(missing_ok=True)
    batch.write_text(
        t.arb + f"<SUPPRESS> OPT(1, {minutes})\n" + f'<WRITETABLE> (1, 3, AS+, "{out.name}")\n'
    )
    start = time.perf_counter()
    proc = subprocess.Popen([exe, "run", str(batch)], cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    while True:
        pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > 10 * seconds + 120:
            os.killpg(proc.pid, 9)
        time.sleep(0.01)
    wall = time.perf_counter() - start
    log = folder / "CSPlogfile.txt"
    text = log.read_text(errors="replace") if log.exists() else ""
    cost = sum(v for _, v, s in load(out) if s in (11, 12)) if out.exists() else None
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "cost": cost,
            "proven": "optimal solution" in text}  # fmt: skip


# ---------------------------------------------------------------------- parent
def run_table(
    t: Opt700Table, work: Path, seconds: float, cpu: bool, extra: list[str] | None = None
) -> dict:
    """One table in a fresh process (peak RSS is that process's); figures as a dict."""
    folder = work / re.sub(r"\W+", "_", t.name).strip("_")
    folder.mkdir(parents=True, exist_ok=True)
    t.setup(folder)
    (folder / "read.arb").write_text(t.arb)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(folder),
           "--seconds", str(seconds)] + ([] if cpu else ["--wall"])  # fmt: skip
    cmd += [f"--set={kv}" for kv in extra or []]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"name": t.name, "error": (proc.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return {"name": t.name, **json.loads(lines[-1])}


def fmt_row(r: dict) -> str:
    if "error" in r:
        return f"| {r['name']} | error: {r['error']} |"
    gap = "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %"
    bound = "-" if r["bound"] is None else f"{r['bound']:,.0f}"
    audit = ("pass" if r["outsider"] else "FAIL") + " / " + ("pass" if r["insider"] else "FAIL")
    cells = [r["name"], r["cells"], r["equations"], r["primaries"],
             f"{100 * r['primaries'] / r['cells']:.1f} %", f"{r['wall']:.1f}", f"{r['cpu']:.1f}",
             f"{r['rss_mb']:.0f}", f"{r['cost']:,.0f}", bound, gap,
             "yes" if r["proven"] else "no", audit, r["nodes"], r["lps"],
             _root(r)]  # fmt: skip
    eng = r.get("engine")
    if eng is not None:
        ec = "-" if eng["cost"] is None else f"{eng['cost']:,.0f}"
        ecpu = "-" if eng["cpu"] is None else f"{eng['cpu']:.1f}"
        cells += [f"{eng['wall']:.1f}", ecpu, ec, "yes" if eng["proven"] else "no"]
    return "| " + " | ".join(str(c) for c in cells) + " |"


HEAD = ("table", "cells", "equations", "primaries", "share", "wall s", "CPU s", "RSS MB",
        "cost", "bound", "gap", "proven", "audit out/ins", "nodes", "attacker LPs",
        "root / final bound / SCIP best")  # fmt: skip


def _root(r: dict) -> str:
    """SCIP's root bound, final bound and incumbent (free cost, its objective)."""
    vals = [r.get("root"), r.get("scip_bound"), r.get("scip_primal")]
    out = " / ".join("-" if v is None or abs(v) >= 1e19 else f"{v:,.0f}" for v in vals)
    return out + (" (restarted)" if r.get("restart") else "")


ENGINE_HEAD = ("τ wall s", "τ CPU s", "τ cost", "τ proven")


def summary(rows: list[dict], seconds: float) -> list[str]:
    """The goal's lines: share proven within the limit, the rest's largest gap, the sample."""
    gen = [r for r in rows if r["name"].startswith("g") and "error" not in r]
    out = []
    if gen:
        proven = [r for r in gen if r["proven"] and r["cpu"] <= seconds * 1.1 + 5]
        rest = [r["gap"] for r in gen if r not in proven and r["gap"] is not None]
        share = len(proven) / len(gen)
        worst = max(rest, default=0.0)
        out.append(
            f"generated set: {len(proven)}/{len(gen)} proven optimal ({100 * share:.0f} %; goal "
            f"≥ {100 * GOAL_SHARE:.0f} %), largest gap of the rest {100 * worst:.2f} % (goal ≤ "
            f"{100 * GOAL_GAP:.0f} %), median CPU {sorted(r['cpu'] for r in gen)[len(gen) // 2]:.1f} s"
        )
    for r in rows:
        if not r["name"].startswith("g") and "error" not in r:
            g = "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %"
            out.append(f"{r['name']}: gap {g}, proven {'yes' if r['proven'] else 'no'}")
    bad = [r["name"] for r in rows if "error" not in r and not (r["outsider"] and r["insider"])]
    out.append("audit: every pattern passes" if not bad else f"audit FAILS: {', '.join(bad)}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--only", default="", help="comma-separated name prefixes")
    ap.add_argument("--wall", action="store_true", help="wall-clock limit (default: CPU)")
    ap.add_argument("--engine", action="store_true", help="τ-Argus engine beside ours")
    ap.add_argument("--no-extras", action="store_true", help="without opt_bound_805 and sample")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="an OPT solver option, e.g. covers=false (repeatable); combined=false "
                         "switches the rule on combined cells off (COMB(0))")  # fmt: skip
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        extra = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
        print(json.dumps(child(args.child, args.seconds, not args.wall, extra)))
        return 0
    tables = opt700_set(args.tables, extras=not args.no_extras)
    if args.only:
        keys = tuple(k.strip() for k in args.only.split(",") if k.strip())
        tables = [t for t in tables if t.name.startswith(keys)]
    exe = engine_exe() if args.engine else None
    if args.engine and exe is None:
        print("τ-Argus engine (pytauargus) not installed: its columns are left out")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="opt700_"))
    clock = "wall" if args.wall else "CPU"
    print(f"OPT limit {args.seconds:g} {clock}-seconds per table{' '.join([''] + args.set)}; "
          f"load at start "
          f"{os.getloadavg()[0]:.1f}; work folder {work}")  # fmt: skip
    head = HEAD + (ENGINE_HEAD if exe else ())
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head), flush=True)
    rows = []
    for t in tables:
        r = run_table(t, work, args.seconds, not args.wall, args.set)
        if exe is not None and "error" not in r:
            r["engine"] = run_engine(exe, work / re.sub(r"\W+", "_", t.name).strip("_"), t,
                                     args.seconds)  # fmt: skip
        r["load"] = os.getloadavg()[0]
        rows.append(r)
        print(fmt_row(r), flush=True)
    print(f"load at end {os.getloadavg()[0]:.1f}")
    for line in summary(rows, args.seconds):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
