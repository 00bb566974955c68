"""Where OPT's protect call spends its time (docs/design.md, D-52): each phase's start and
end in CPU-seconds since the protect call began, on one table of opt700_tables.py's set.

The limit counts CPU-seconds as in bench_opt_700.py (`--cpu`): the run's clocks and SCIP's
become CPU clocks. Phases: the start heuristic (start_pattern), OPT's publication audits
and insider repair (make_publishable, publication_audit, repair_insiders), the
branch-and-cut (solve_pattern), run_method's own audit, and the session's rule on combined
cells (a second start_pattern after the branch-and-cut is a rerun of OPT).

Usage:
    python benchmarks/bench_opt_phases.py [--only g12] [--seconds 60] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_opt_700  # noqa: E402
from opt700_tables import opt700_set  # noqa: E402


class _Phases:
    """Prints each wrapped call's start and end, indented by nesting, in CPU-s since `t0`."""

    def __init__(self) -> None:
        self.t0: float | None = None
        self.depth = 0

    def now(self) -> float:
        return -1.0 if self.t0 is None else time.process_time() - self.t0

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        real = getattr(owner, attr)

        @functools.wraps(real)
        def timed(*args: Any, **kwargs: Any) -> Any:
            print(f"{'  ' * self.depth}> {label} at {self.now():.1f}", flush=True)
            self.depth += 1
            try:
                return real(*args, **kwargs)
            except BaseException as err:
                print(f"{'  ' * self.depth}! {label}: {type(err).__name__}", flush=True)
                raise
            finally:
                self.depth -= 1
                print(f"{'  ' * self.depth}< {label} at {self.now():.1f}", flush=True)

        setattr(owner, attr, timed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="g12", help="table name prefix")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    folder = Path(args.workdir or tempfile.mkdtemp(prefix="opt_phases_"))
    folder.mkdir(parents=True, exist_ok=True)
    table = next(t for t in opt700_set(extras=False) if t.name.startswith(args.only))
    table.setup(folder)
    (folder / "read.arb").write_text(table.arb)
    bench_opt_700._cpu_clock()

    import argusqt.protection.run as run
    from argusqt.batch.runner import run_batch
    from argusqt.protection.audit import insider_repair
    from argusqt.protection.suppress import optimal
    from argusqt.session import Session

    phases = _Phases()
    phases.wrap(optimal, "start_pattern", "start heuristic")
    phases.wrap(optimal, "make_publishable", "OPT's publication audit + insider repair")
    phases.wrap(optimal, "solve_pattern", "branch-and-cut")
    phases.wrap(insider_repair, "publication_audit", "publication audit")
    phases.wrap(insider_repair, "repair_insiders", "insider repair")
    phases.wrap(run, "make_publishable", "run_method's publication audit")
    session = Session()
    run_batch(folder / "read.arb", session=session)
    print(f"{table.name}: OPT limit {args.seconds:g} CPU-s", flush=True)
    phases.t0 = time.process_time()
    try:
        res = session.protect(1, "OPT", {"max_minutes": args.seconds / 60.0})
        print(f"result: cost {res.cost:,.2f}, timed_out {res.timed_out}, optimal {res.optimal}")
    except Exception as err:  # noqa: BLE001 - a refusal is a result here
        print(f"refused: {type(err).__name__}: {err}")
    print(f"protect call: {phases.now():.1f} CPU-s against a limit of {args.seconds:g}")


if __name__ == "__main__":
    main()
