"""Issue 26 goal 1 (D-60): where OPT's CPU goes on one hard generated table, and the bound's
curve over nodes.

The branch-and-cut subproblem OPT builds (singleton options, start heuristic, guided
heuristic and insider check as OPT runs it; bench_opt_root.capture) is solved again for
`--seconds` CPU-seconds (CPU clocks as bench_opt_700 sets them) under cProfile. Printed: the
CPU of the attacker LPs split by fractional and 0/1 points, of the guided heuristic, of the
rule's checks and of SCIP itself (the rest), attacker LPs per node, and the certified bound
every `--every` nodes. `--set key=json` passes solve_pattern keywords (e.g. covers=false);
`--combined false` drops the rule on combined cells (no pattern_rule).

Usage:
    python benchmarks/bench_opt_profile.py --only g22 [--seconds 60] [--every 50]
        [--set covers=false] [--combined false] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_opt_700 import _cpu_clock  # noqa: E402
from bench_opt_root import capture_table  # noqa: E402
from opt700_tables import opt700_set  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="g22")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON")
    ap.add_argument("--combined", default="true")
    ap.add_argument(
        "--scip",
        action="append",
        default=[],
        metavar="PARAM=JSON",
        help="a SCIP parameter set on the model (e.g. nodeselection/bfs/stdpriority=1e6)",
    )
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="PARAM=JSON;kw:KEY=JSON;attr:MOD.CLASS.NAME=JSON;… one run per --variant (default: one base run)",
    )
    ap.add_argument("--top", type=int, default=0, help="print cProfile's top N by cumtime")
    a = ap.parse_args(argv)
    _cpu_clock()
    t = next(t for t in opt700_set() if t.name.startswith(a.only))
    args, kwargs = capture_table(t, Path(tempfile.mkdtemp(prefix="optprof_")))
    from argusqt.protection.lp.separation import Separator
    from argusqt.protection.suppress import branch_and_cut, scip_plugins

    real_model = branch_and_cut._scip_model

    def model_with(*m, **kw):  # type: ignore[no-untyped-def]
        model = real_model(*m, **kw)
        for pv in a.scip:
            name, val = pv.split("=", 1)
            model.setParam(name, json.loads(val))
        return model

    branch_and_cut._scip_model = model_with  # type: ignore[assignment]

    spent = {
        "frac": 0.0,
        "int": 0.0,
        "frac_lps": 0,
        "int_lps": 0,
        "rule": 0.0,
        "guided": 0.0,
        "frac_calls": 0,
        "int_calls": 0,
    }
    real_sep = Separator.separate
    #: CPU-s and LPs by attacker (outsider, lone insider, sharing respondent) and point kind
    split: dict[str, list[float]] = {}
    inside = [0]  # > 0 inside the guided heuristic or an insider audit: counted there

    def timed(self, x, *p, **kw):  # type: ignore[no-untyped-def]
        xf = self.full_point(x)
        kind = "int" if bool(((xf < 1e-9) | (xf > 1 - 1e-9)).all()) else "frac"
        t0, n0 = time.process_time(), self.n_lps
        got: list = []
        try:
            got = real_sep(self, x, *p, **kw)
            return got
        finally:
            spent[kind] += time.process_time() - t0
            spent[kind + "_lps"] += self.n_lps - n0
            spent[kind + "_calls"] += 1
            if not inside[0]:
                who = getattr(self, "_bench_kind", "outsider")
                row = split.setdefault(f"{who} separation, {kind} points", [0.0, 0, 0, 0])
                row[0] += time.process_time() - t0
                row[1] += self.n_lps - n0
                row[2] += 1
                row[3] += bool(got)

    Separator.separate = timed  # type: ignore[method-assign]
    real_isep = scip_plugins._CapacityHandler._insider_sep

    def tagged(self, known, floor=None):  # type: ignore[no-untyped-def]
        hit = real_isep(self, known, floor)
        hit[0]._bench_kind = "sharing respondent" if floor is not None else "lone insider"
        return hit

    scip_plugins._CapacityHandler._insider_sep = tagged  # type: ignore[method-assign]

    def timed_call(owner, name, label):  # type: ignore[no-untyped-def]
        real = getattr(owner, name)

        def wrapped(*g, **kw):  # type: ignore[no-untyped-def]
            t0, outer = time.process_time(), not inside[0]
            inside[0] += 1
            try:
                return real(*g, **kw)
            finally:
                inside[0] -= 1
                if outer:
                    row = split.setdefault(label, [0.0, 0, 0, 0])
                    row[0] += time.process_time() - t0
                    row[2] += 1

        setattr(owner, name, wrapped)

    from argusqt.protection.audit import insider_floor

    timed_call(branch_and_cut, "insider_audit", "candidate check: older insiders' audit")
    timed_call(insider_floor, "floor_audit", "candidate check: floor audit (sharing respondents)")
    spent["split"] = split  # type: ignore[assignment]
    real_comb = scip_plugins._CapacityHandler._combined_cuts

    def comb(self, x):  # type: ignore[no-untyped-def]
        t0 = time.process_time()
        try:
            return real_comb(self, x)
        finally:
            spent["rule"] += time.process_time() - t0

    scip_plugins._CapacityHandler._combined_cuts = comb  # type: ignore[method-assign]
    guide = kwargs.get("guide")
    if guide is not None:

        def timed_guide(*g, **kw):  # type: ignore[no-untyped-def]
            t0 = time.process_time()
            inside[0] += 1
            try:
                return guide(*g, **kw)
            finally:
                inside[0] -= 1
                spent["guided"] += time.process_time() - t0
                timed_guide.last_lps = getattr(guide, "last_lps", 1)  # type: ignore[attr-defined]

        kwargs["guide"] = timed_guide
    if a.combined.lower() == "false":
        kwargs["combined"] = None
    for kv in a.set:
        k, v = kv.split("=", 1)
        kwargs[k] = json.loads(v)
    base_scip = list(a.scip)
    for variant in a.variant or [""]:
        # one variant: SCIP parameters PARAM=JSON and solve_pattern keywords kw:KEY=JSON, ";"
        parts = [v for v in variant.split(";") if v]
        kw = dict(kwargs)
        undo = []
        for v in parts:
            if v.startswith("attr:"):  # attr:module.Class.NAME=JSON (a class constant)
                path, val = v[5:].split("=", 1)
                mod, cls, attr = path.rsplit(".", 2)
                owner = getattr(importlib.import_module(f"argusqt.protection.{mod}"), cls)
                undo.append((owner, attr, getattr(owner, attr)))
                setattr(owner, attr, json.loads(val))
        parts = [v for v in parts if not v.startswith("attr:")]
        a.scip = base_scip + [v for v in parts if not v.startswith("kw:")]
        for v in parts:
            if v.startswith("kw:"):
                k, val = v[3:].split("=", 1)
                kw[k] = json.loads(val)
        for k in spent:
            if k == "split":
                split.clear()
                continue
            spent[k] = 0 if isinstance(spent[k], int) else 0.0
        one(t.name, a, args, kw, spent, variant or "base")
        for owner, attr, val in undo:
            setattr(owner, attr, val)
    return 0


def one(name, a, args, kwargs, spent, variant) -> None:  # type: ignore[no-untyped-def]
    """One run of the captured subproblem; its figures and the bound's curve."""
    from argusqt.protection.suppress.branch_and_cut import solve_pattern

    curve: list[tuple[int, float, float | None, float | None]] = []
    c0 = time.process_time()

    def progress(e):  # type: ignore[no-untyped-def]
        nodes = int((e.extra or {}).get("nodes", 0))
        if e.bound is not None and (not curve or nodes >= curve[-1][0] + a.every):
            curve.append((nodes, time.process_time() - c0, e.bound, e.incumbent))

    kwargs.update(max_time=a.seconds, progress=progress)
    prof = cProfile.Profile()
    load0 = os.getloadavg()[0]
    if a.top:
        prof.enable()
    out = solve_pattern(*args, **kwargs)
    prof.disable()
    cpu = time.process_time() - c0
    print(f"## {name} [{variant}]: load {load0:.1f} → {os.getloadavg()[0]:.1f}; {a.set} "
          f"combined={a.combined}")  # fmt: skip
    gap = (out.cost - out.bound) / out.cost if out.bound is not None and out.cost else None
    print(f"bound {out.bound:,.0f}, cost {out.cost:,.0f}, gap "
          f"{'-' if gap is None else f'{100 * gap:.2f} %'}, optimal {out.optimal}, nodes "
          f"{out.nodes}, attacker LPs {out.lps}, CPU {cpu:.1f} s")  # fmt: skip
    rest = cpu - spent["frac"] - spent["int"] - spent["guided"]
    print(f"attacker LPs at fractional points: {spent['frac']:.1f} s ({spent['frac_lps']} LPs, "
          f"{spent['frac_calls']} calls); at 0/1 points: {spent['int']:.1f} s "
          f"({spent['int_lps']} LPs, {spent['int_calls']} calls, the guided heuristic's "
          f"included); guided heuristic {spent['guided']:.1f} s; rule checks "
          f"{spent['rule']:.1f} s; SCIP and the rest {rest:.1f} s; "
          f"LPs per node {out.lps / max(1, out.nodes):.0f}")  # fmt: skip
    split = spent.get("split") or {}
    if split:
        print("| where (outside the guided heuristic) | CPU s | share | attacker LPs | calls "
              "| calls with a failing primary |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        for label, (s, n, k, f) in sorted(split.items(), key=lambda kv: -kv[1][0]):
            print(f"| {label} | {s:.1f} | {100 * s / max(cpu, 1e-9):.0f} % | {n} | {k} | {f} |")
        print(f"| guided heuristic (all its work) | {spent['guided']:.1f} | "
              f"{100 * spent['guided'] / max(cpu, 1e-9):.0f} % | | | |")  # fmt: skip
        scip = cpu - spent["guided"] - sum(v[0] for v in split.values())
        print(f"| SCIP and the rest | {scip:.1f} | {100 * scip / max(cpu, 1e-9):.0f} % | | | |")
    for line in out.log:
        print("  " + line)
    print("| nodes | CPU s | bound | incumbent |")
    for nodes, s, b, inc in curve:
        print(f"| {nodes} | {s:.1f} | {b:,.0f} | {'-' if inc is None else f'{inc:,.0f}'} |")
    if a.top:
        pstats.Stats(prof).sort_stats("tottime").print_stats(a.top)
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
