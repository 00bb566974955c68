"""Issue 26 goal 1, the incumbent side (docs/design.md D-61): where OPT's incumbents come from.

Runs OPT as bench_opt_700.py does (one fresh process per table, the limit in CPU-seconds) and
traces every pattern a heuristic hands SCIP (the guided heuristic, the rule's repair, RINS,
the clean-up) — its cost, whether the rule on combined cells rejects it as it stands,
whether SCIP kept it — and every new incumbent SCIP announces, with the heuristic that was
offering it ("scip": SCIP's own heuristics, an integral LP point or the start patterns), the
CPU-seconds and the attacker LPs at that moment.

Usage:
    python benchmarks/bench_opt_sources.py --only sample,opt_bound [--seconds 60]
        [--set KEY=JSON] [--json out.json]
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

#: the trace of one run: offers and incumbents in the order they came
TRACE: dict[str, list] = {"offers": [], "incumbents": []}
#: the heuristic offering right now (None: SCIP itself)
_OFFERING: list[str] = []


def _hooks() -> None:
    """Wrap `offer` where the heuristics bind it, and catch SCIP's new incumbents."""
    import numpy as np
    from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

    from argusqt.protection.suppress import branch_and_cut, scip_plugins

    modules = [scip_plugins]
    for name in ("combined_repair_heur", "local_branching", "incumbent_polish", "relaxed_search"):
        try:
            modules.append(__import__(f"argusqt.protection.suppress.{name}", fromlist=["x"]))
        except ImportError:
            pass
    real = scip_plugins.offer

    def traced(heur, hdlr, mask):  # type: ignore[no-untyped-def]
        rule = getattr(hdlr.combined, "rule", hdlr.combined)
        m = np.asarray(mask, dtype=bool)
        cost = float(np.asarray(hdlr._obj())[m].sum())
        fails = bool(rule(m)) if rule is not None else False
        _OFFERING.append(type(heur).__name__)
        try:
            ok = real(heur, hdlr, mask)
        finally:
            _OFFERING.pop()
        TRACE["offers"].append(
            {
                "heur": type(heur).__name__,
                "cost": cost,
                "rule_fails": fails,
                "kept": ok,
                "cpu": time.process_time(),
                "lps": hdlr.attacker_lps(),
                "solved": hdlr.solved_lps(),
                "nodes": int(heur.model.getNNodes()),
                "depth": int(heur.model.getDepth()),
            }  # fmt: skip
        )
        return ok

    for mod in modules:
        if getattr(mod, "offer", None) is real:
            mod.offer = traced  # type: ignore[attr-defined]

    guided_exec = scip_plugins._GuidedHeur.heurexec

    def traced_guided(self, heurtiming, nodeinfeasible):  # type: ignore[no-untyped-def]
        calls, at, lps = self.calls, self.next_at, self.hdlr.attacker_lps()
        lp_obj = self.model.getLPObjVal() if self.model.getLPSolstat() == 1 else None
        got = guided_exec(self, heurtiming, nodeinfeasible)
        if self.calls > calls:  # it ran: when, at which LP value, what it gave
            TRACE.setdefault("guided", []).append(
                {
                    "lps": lps,
                    "solved": self.hdlr.solved_lps(),
                    "due": at,
                    "lp_obj": lp_obj,
                    "nodes": int(self.model.getNNodes()),
                    "depth": int(self.model.getDepth()),
                    "took": int(self.spent),
                    "found": self.found,
                    "next_at": self.next_at,
                    "cpu": time.process_time(),
                }  # fmt: skip
            )
        return got

    scip_plugins._GuidedHeur.heurexec = traced_guided  # type: ignore[method-assign]

    class Best(Eventhdlr):
        def eventinit(self):  # type: ignore[no-untyped-def]
            self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexit(self):  # type: ignore[no-untyped-def]
            self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

        def eventexec(self, event):  # type: ignore[no-untyped-def]
            m = self.model
            TRACE["incumbents"].append(
                {
                    "by": _OFFERING[-1] if _OFFERING else "scip",
                    "obj": float(m.getSolObjVal(m.getBestSol())),
                    "cpu": time.process_time(),
                    "nodes": int(m.getNNodes()),
                    "depth": int(m.getDepth()) if m.getStage() == 9 else -1,
                }  # fmt: skip
            )

    base = branch_and_cut.Model

    class Traced(base):  # type: ignore[misc, valid-type]
        def optimizeNogil(self):  # type: ignore[no-untyped-def]
            if not TRACE.get("main"):  # OPT's run; a sub-MIP starts inside it, later
                TRACE["main"] = [self.getNVars()]
                self.includeEventhdlr(Best(), "bench-best", "new incumbents")
            super().optimizeNogil()

    branch_and_cut.Model = Traced  # type: ignore[attr-defined, misc]


def child(folder: Path, seconds: float, extra: dict) -> dict:
    import bench_opt_700

    bench_opt_700._cpu_clock()
    _hooks()
    out = bench_opt_700.child(folder, seconds, False, extra)  # the CPU clock is on already
    out["trace"] = TRACE
    return out


def summary(r: dict) -> list[str]:
    """Per heuristic: offers, kept, the cheapest offered, and the incumbents it gave."""
    lines = []
    tr = r.get("trace", {"offers": [], "incumbents": []})
    heurs = sorted({o["heur"] for o in tr["offers"]} | {i["by"] for i in tr["incumbents"]})
    for h in heurs:
        offs = [o for o in tr["offers"] if o["heur"] == h]
        incs = [i for i in tr["incumbents"] if i["by"] == h]
        best = min((o["cost"] for o in offs), default=float("nan"))
        lines.append(
            f"  {h}: {len(offs)} offers ({sum(o['kept'] for o in offs)} kept, "
            f"{sum(o['rule_fails'] for o in offs)} failing the rule as offered; cheapest "
            f"{best / 1e6:.2f} M), {len(incs)} incumbents"
            + (f", best {min(i['obj'] for i in incs) / 1e6:.2f} M" if incs else "")
        )
    lines.append(
        "  incumbents: "
        + ", ".join(f"{i['obj'] / 1e6:.2f} M {i['by']} @{i['cpu']:.0f}s" for i in tr["incumbents"])
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--only", default="sample,opt_bound")
    ap.add_argument("--tables", type=int, default=32)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    extra = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    if args.child is not None:
        print(json.dumps(child(args.child, args.seconds, extra)))
        return 0
    from opt700_tables import opt700_set

    keys = tuple(k.strip() for k in args.only.split(",") if k.strip())
    tables = [t for t in opt700_set(args.tables) if t.name.startswith(keys)]
    work = Path(tempfile.mkdtemp(prefix="optsrc_"))
    print(f"OPT limit {args.seconds:g} CPU-s {' '.join(args.set)}; load {os.getloadavg()[0]:.1f}")
    rows = []
    for t in tables:
        folder = work / re.sub(r"\W+", "_", t.name).strip("_")
        folder.mkdir(parents=True, exist_ok=True)
        t.setup(folder)
        (folder / "read.arb").write_text(t.arb)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(folder),
               "--seconds", str(args.seconds)] + [f"--set={kv}" for kv in args.set]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        if not lines:
            print(f"{t.name}: error {proc.stderr.strip().splitlines()[-3:]}")
            continue
        r = {"name": t.name, **json.loads(lines[-1]), "load": os.getloadavg()[0]}
        rows.append(r)
        gap = "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %"
        print(f"{t.name}: cost {r['cost'] / 1e6:.2f} M, bound {(r['bound'] or 0) / 1e6:.2f} M, "
              f"gap {gap}, CPU {r['cpu']:.1f} s, nodes {r['nodes']}, LPs {r['lps']}, audit "
              f"{'pass' if r['outsider'] and r['insider'] else 'FAIL'}, load {r['load']:.1f}")  # fmt: skip
        print(f"  {r['scip']}")
        print(f"  {r['repair']}")
        for line in summary(r):
            print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
