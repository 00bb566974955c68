"""Issue 26 goal 1, the bound side: OPT's root LP bound on the hard tables of the OPT set
(opt700_tables.py) with one cut family or another, and where the separation time goes.

Per table the branch-and-cut subproblem OPT itself builds (after the singleton options and
the start heuristic) is captured, then solved again root-only (`max_nodes=1`, no guided
heuristic, outsiders only) per variant: root bound, nodes, attacker LPs, CPU of the whole
root and of the attacker LPs, cuts. `--nodes N` runs N nodes instead (a longer bound run).
Counts bound every run (nodes); the CPU figures are measurements, not limits.

Usage:
    python benchmarks/bench_opt_root.py [--only g28,g12] [--variants base,kcover]
        [--nodes 1] [--seconds 600]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from opt700_tables import Opt700Table, opt700_set  # noqa: E402

#: variant name → solve_pattern keyword arguments
VARIANTS: dict[str, dict] = {
    "nocover": {"covers": False},
    "base": {},
    "noreuse": {"reuse_moves": False},
    # the floor model: OPT's insiders (respondents alone and sharing cells) kept (D-97)
    "floors": {"insiders": True},
    # ... and insider probes of the root's fractional points (D-108)
    "probe2": {"insiders": True, "insider_probes": 2},
    "probe4": {"insiders": True, "insider_probes": 4},
    "probe8": {"insiders": True, "insider_probes": 8},
    "probe4s": {"insiders": True, "insider_probes": 4, "probe_level": 1e-6},
    # SCIP's root separation without its stall limit (10 rounds without progress): the
    # root bound when the separation is let converge (D-108)
    "nostall": {"insiders": True, "scip": {"separating/maxstallroundsroot": -1}},
    "nostall_out": {"scip": {"separating/maxstallroundsroot": -1}},
    # the rule-aware bridgeless cuts from the start (D-75 starts again with them)
    "bridgeless": {"insiders": True, "bridgeless_rule": True},
    # capacity cuts from Pareto-optimal duals (D-88), under the floor model
    "pareto": {"insiders": True, "pareto_cuts": 1e-6},
}


class _Captured(Exception):
    """Raised by the stand-in solve_pattern once OPT's subproblem is captured."""

    def __init__(self, args: tuple, kwargs: dict):
        self.args_ = args
        self.kwargs = kwargs


def capture_table(table: Opt700Table, work: Path) -> tuple[tuple, dict]:
    """`capture` on one generated table set up in its own folder under `work`."""
    folder = work / re.sub(r"\W+", "_", table.name).strip("_")
    folder.mkdir(parents=True)
    table.setup(folder)
    return capture(folder, table.arb)


def capture(folder: Path, arb: str) -> tuple[tuple, dict]:
    """OPT's branch-and-cut subproblem and start pattern on the table read by `arb`."""
    from argusqt.batch.runner import run_batch
    from argusqt.protection.suppress import optimal
    from argusqt.session import Session

    (folder / "read.arb").write_text(arb)
    session = Session()
    run_batch(folder / "read.arb", session=session)

    def grab(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise _Captured(args, kwargs)

    real = optimal.solve_pattern
    optimal.solve_pattern = grab  # type: ignore[assignment]
    try:
        session.protect(1, "OPT", {"max_minutes": 10})
    except _Captured as got:
        return got.args_, got.kwargs
    except Exception as err:  # run_method wraps a solver's exception in a MethodError
        got = err.__cause__
        if isinstance(got, _Captured):
            return got.args_, got.kwargs
        raise
    finally:
        optimal.solve_pattern = real  # type: ignore[assignment]
    raise RuntimeError("OPT never reached the branch-and-cut")


def root_run(
    args: tuple, kwargs: dict, variant: dict, nodes: int, seconds: float, guided: bool = False
) -> dict:
    """One root-only (or `nodes`-node) run of the captured subproblem; its figures."""
    from argusqt.protection.lp.separation import Separator
    from argusqt.protection.suppress.branch_and_cut import solve_pattern

    spent = [0.0]
    real = Separator.separate

    def timed(self, *a, **kw):  # type: ignore[no-untyped-def]
        t0 = time.process_time()
        try:
            return real(self, *a, **kw)
        finally:
            spent[0] += time.process_time() - t0

    Separator.separate = timed  # type: ignore[method-assign]
    kw = dict(kwargs)
    variant = dict(variant)
    keep = variant.pop("insiders", False)
    scip = variant.pop("scip", {})
    kw.update(max_time=seconds, progress=lambda e: None)
    if not keep:
        kw["insiders"] = None
    if not guided:
        kw["guide"] = None
    kw.update(max_nodes=nodes)
    kw.update(variant)
    from argusqt.protection.suppress import branch_and_cut

    made = branch_and_cut._scip_model

    def model_with(*a, **k):  # type: ignore[no-untyped-def]
        m = made(*a, **k)
        for name, value in scip.items():
            m.setParam(name, value)
        return m

    branch_and_cut._scip_model = model_with  # type: ignore[assignment]
    c0 = time.process_time()
    try:
        out = solve_pattern(*args, **kw)
    finally:
        Separator.separate = real  # type: ignore[method-assign]
        branch_and_cut._scip_model = made  # type: ignore[assignment]
    cpu = time.process_time() - c0
    line = next((x for x in out.log if x.startswith("SCIP status")), "")
    return {"bound": out.bound, "cost": out.cost, "nodes": out.nodes, "lps": out.lps,
            "cpu": cpu, "sep_cpu": spent[0], "cuts": out.cuts, "log": line}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="g28,g12,g22,opt_bound_805,sample")
    ap.add_argument("--variants", default="nocover,base")
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=600.0, help="safety cap per run")
    ap.add_argument("--guided", action="store_true", help="keep OPT's guided heuristic")
    a = ap.parse_args(argv)
    keys = tuple(k.strip() for k in a.only.split(",") if k.strip())
    tables = [t for t in opt700_set() if t.name.startswith(keys)]
    work = Path(tempfile.mkdtemp(prefix="optroot_"))
    print(f"load at start {os.getloadavg()[0]:.1f}; nodes {a.nodes}")
    print("| table | variant | root bound | start cost | gap to start | nodes | attacker LPs "
          "| CPU s | separation CPU s | cuts |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for t in tables:
        args, kwargs = capture_table(t, work)
        for name in a.variants.split(","):
            r = root_run(args, kwargs, VARIANTS[name], a.nodes, a.seconds, a.guided)
            gap = (r["cost"] - r["bound"]) / r["cost"] if r["bound"] and r["cost"] else None
            g = "-" if gap is None else f"{100 * gap:.2f} %"
            print(f"| {t.name} | {name} | {r['bound']:,.0f} | {r['cost']:,.0f} | {g} | "
                  f"{r['nodes']} | {r['lps']} | {r['cpu']:.1f} | {r['sep_cpu']:.1f} | "
                  f"{r['cuts']} |", flush=True)  # fmt: skip
            print(f"  {r['log']}", flush=True)
    print(f"load at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
