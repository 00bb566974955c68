"""Where OPT's minute goes on one table of the 700-cell set, by attacker and by callback
(docs/design.md, D-113): exclusive CPU-seconds, HiGHS runs, CPU inside them and simplex
iterations per context (SCIP's separation, enforcement and candidate checks, each split into
the outsider's and the known insiders' separation and the insider/floor audits; the guided
heuristic; "other": SCIP's own work, the table, the start heuristic, MOD, the publication),
and per context the attacker LPs of primaries that got no cut.

Usage:
    python benchmarks/bench_opt_split.py g05 [--seconds 60] [--set borrow_moves=true]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

STACK = ["other"]
CPU: defaultdict[str, float] = defaultdict(float)  # exclusive CPU-s per context
RUNS: defaultdict[str, int] = defaultdict(int)  # HiGHS runs
ITERS: defaultdict[str, int] = defaultdict(int)  # their simplex iterations
IN_RUN: defaultdict[str, float] = defaultdict(float)  # CPU-s inside them
#: per context: primaries judged, their LPs, LPs of those without a cut, those primaries
PRIM: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
_LAST = [time.process_time()]


def _tick() -> None:
    now = time.process_time()
    CPU[STACK[-1]] += now - _LAST[0]
    _LAST[0] = now


def _wrap(owner: Any, attr: str, name: str | Callable[..., str]) -> None:
    """Charge `owner.attr`'s exclusive CPU to a context (a name, or one made per call)."""
    real = getattr(owner, attr)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _tick()
        STACK.append(name(*args, **kwargs) if callable(name) else name)
        try:
            return real(*args, **kwargs)
        finally:
            _tick()
            STACK.pop()

    setattr(owner, attr, wrapped)


def install() -> None:
    """The wrappers: HiGHS's run, SCIP's callbacks, the audits, the attackers' separation."""
    import highspy

    from argusqt.protection.audit import insider_floor
    from argusqt.protection.lp import separation
    from argusqt.protection.suppress import branch_and_cut, scip_plugins

    run = highspy.Highs.run

    def counted(self: Any) -> Any:
        t = time.process_time()
        out = run(self)
        ctx = STACK[-1]
        IN_RUN[ctx] += time.process_time() - t
        RUNS[ctx] += 1
        ITERS[ctx] += int(self.getInfoValue("simplex_iteration_count")[1])
        return out

    highspy.Highs.run = counted  # type: ignore[method-assign]
    handler = scip_plugins._CapacityHandler
    for attr, ctx in (
        ("conssepalp", "separation"),
        ("consenfolp", "enforcement"),
        ("consenfops", "enforcement"),
        ("conscheck", "check"),
    ):
        _wrap(handler, attr, ctx)
    _wrap(scip_plugins._GuidedHeur, "heurexec", "guided")
    _wrap(insider_floor, "floor_audit", lambda *a, **k: STACK[-1] + "/floor audit")
    _wrap(branch_and_cut, "insider_audit", lambda *a, **k: STACK[-1] + "/insider audit")

    def who(self: Any, sep: Any, *a: Any, **k: Any) -> str:
        return STACK[-1] + ("/outsider" if sep is self.sep else "/insiders")

    _wrap(handler, "_separate", who)
    judge = separation.Separator._solve_primary

    def primary(self: Any, blk: Any, p: int, j: int) -> Any:
        before = self.n_lps
        res = judge(self, blk, p, j)
        lps, row = self.n_lps - before, PRIM[STACK[-1]]
        row[0] += 1
        row[1] += lps
        if res is None or not res.cuts:
            row[2] += lps
            row[3] += 1
        return res

    separation.Separator._solve_primary = primary  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", help="a name prefix of opt700_tables' set (g05, opt_bound, sample)")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/opt_split"))
    args = ap.parse_args(argv)
    import bench_opt_700
    from opt700_tables import opt700_set

    extra = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    table = next(t for t in opt700_set() if t.name.startswith(args.table))
    folder = args.workdir / re.sub(r"\W+", "_", table.name).strip("_")
    folder.mkdir(parents=True, exist_ok=True)
    table.setup(folder)
    (folder / "read.arb").write_text(table.arb)
    os.chdir(folder)
    install()
    res = bench_opt_700.child(folder, args.seconds, True, extra)
    _tick()
    keys = ("cost", "gap", "proven", "nodes", "lps", "cpu")
    print(json.dumps({k: res.get(k) for k in keys}))
    print(f"whole process {sum(CPU.values()):.1f} CPU-s (the table's generation included)")
    print("| context | CPU-s | HiGHS runs | CPU-s in HiGHS | iterations per run |")
    print("|---|---|---|---|---|")
    for k in sorted(CPU, key=lambda c: -CPU[c]):
        per = ITERS[k] / max(RUNS[k], 1)
        print(f"| {k} | {CPU[k]:.1f} | {RUNS[k]} | {IN_RUN[k]:.1f} | {per:.1f} |")
    print("| context | primaries judged | their LPs | LPs without a cut | primaries without |")
    print("|---|---|---|---|---|")
    for k, (n, lps, waste, none) in PRIM.items():
        print(f"| {k} | {n} | {lps} | {waste} | {none} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
