"""Issue 26 goal 1, the incumbent side (docs/design.md D-45): OPT's branch-and-cut on the
hard tables of the OPT set with one primal heuristic setting or another, one fresh process
per run, its limit in CPU-seconds (as bench_opt_700.py --cpu).

OPT's own branch-and-cut subproblem (after the singleton options and a start heuristic
given `--start-seconds`) is captured per table, then solved for `--seconds` CPU-seconds
with the guided heuristic and the insider check as OPT publishes. Per run: the cost and
bound at the end, the gap, and when each cheaper pattern came (CPU-s).

Usage:
    python benchmarks/bench_opt_incumbent.py --only g28,g12 --seconds 50
        [--set rins=true] [--guided-gap 0.08]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


class _Captured(Exception):
    """Raised by the stand-in solve_pattern once OPT's subproblem is captured."""


def child(folder: Path, seconds: float, start_seconds: float, extra: dict, gap: float | None):
    """Capture OPT's subproblem on the table in `folder`, then solve it on a CPU clock."""
    from bench_opt_700 import _cpu_clock

    from argusqt.batch.runner import run_batch
    from argusqt.protection.suppress import optimal, scip_plugins
    from argusqt.session import Session

    session = Session()
    run_batch(folder / "read.arb", session=session)
    real = optimal.solve_pattern
    got: dict = {}

    def grab(*args, **kwargs):  # type: ignore[no-untyped-def]
        got.update(args=args, kwargs=kwargs)
        raise _Captured

    optimal.solve_pattern = grab  # type: ignore[assignment]
    try:
        session.protect(1, "OPT", {"max_minutes": start_seconds / 15.0})  # START_SHARE
    except Exception:  # noqa: BLE001 - run_method wraps the capture in a MethodError
        pass
    finally:
        optimal.solve_pattern = real  # type: ignore[assignment]
    if not got:
        return {"error": "OPT never reached the branch-and-cut"}
    _cpu_clock()
    from argusqt.protection.suppress import branch_and_cut

    if gap is not None:
        scip_plugins.GUIDED_GAP = gap
    kw = dict(got["kwargs"], max_time=seconds, **extra)
    trace: list[tuple[float, float]] = []
    c0 = time.process_time()

    def progress(e):  # type: ignore[no-untyped-def]
        if e.incumbent is not None and (not trace or e.incumbent < trace[-1][1] - 1e-6):
            trace.append((round(time.process_time() - c0, 1), float(e.incumbent)))

    kw["progress"] = progress
    out = branch_and_cut.solve_pattern(*got["args"], **kw)
    gap_ = None if out.bound is None else (out.cost - out.bound) / max(out.cost, 1e-9)
    return {"cost": out.cost, "bound": out.bound, "gap": gap_, "proven": out.optimal,
            "cpu": time.process_time() - c0, "log": out.log, "trace": trace}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="g28,g12,g22,opt_bound_805,sample")
    ap.add_argument("--seconds", type=float, default=50.0)
    ap.add_argument("--start-seconds", type=float, default=150.0, help="start heuristic cap")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON")
    ap.add_argument("--guided-gap", type=float, default=None)
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    extra = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in a.set)}
    if a.child is not None:
        print(json.dumps(child(a.child, a.seconds, a.start_seconds, extra, a.guided_gap)))
        return 0
    from opt700_tables import opt700_set

    keys = tuple(k.strip() for k in a.only.split(",") if k.strip())
    work = Path(tempfile.mkdtemp(prefix="optinc_"))
    print(f"load at start {os.getloadavg()[0]:.1f}; {a.seconds:g} CPU-s; {a.set} "
          f"guided gap {a.guided_gap}")  # fmt: skip
    for t in (t for t in opt700_set() if t.name.startswith(keys)):
        folder = work / re.sub(r"\W+", "_", t.name).strip("_")
        folder.mkdir(parents=True)
        t.setup(folder)
        (folder / "read.arb").write_text(t.arb)
        cmd = [sys.executable, __file__, "--child", str(folder), "--seconds", str(a.seconds),
               "--start-seconds", str(a.start_seconds)] + [f"--set={kv}" for kv in a.set]  # fmt: skip
        if a.guided_gap is not None:
            cmd += ["--guided-gap", str(a.guided_gap)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        r = json.loads(lines[-1]) if lines else {"error": proc.stderr[-300:]}
        if "error" in r:
            print(f"{t.name}: error {r['error']}")
            continue
        gap = "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %"
        print(f"{t.name}: cost {r['cost']:,.0f}, bound {r['bound'] or 0:,.0f}, gap {gap}, "
              f"proven {'yes' if r['proven'] else 'no'}, CPU {r['cpu']:.1f}, load "
              f"{os.getloadavg()[0]:.1f}")  # fmt: skip
        print(
            "  cheaper patterns at CPU-s: " + ", ".join(f"{s:g}: {c:,.0f}" for s, c in r["trace"])
        )
        for line in r["log"]:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
