"""Where a small table's `argusqt batch` process spends its CPU, phase by phase, counted in
the process itself (issue 26 goal 2, docs/design.md D-107): p78 OPT and MOD, b520 MOD.

A child process imports the phases' modules first (their import is the "imports" figure:
the method modules and scipy.sparse, which a cold run would import later), then replaces
each function below in its module and wherever an argusqt module holds it, and runs the
batch file. Each function's inclusive CPU (`time.process_time`; a recursive call counts
once) and its calls are printed with the process's CPU (user + sys) and the load. Nested
phases overlap (a publication audit inside a guided heuristic's repair inside the
branch-and-cut). The batch files are `bench_vs_tauargus.py --workdir WORKDIR`'s.

Usage:
    python benchmarks/bench_small_phases.py WORKDIR [--cases p78:OPT,p78:MOD,b520:MOD]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (module, function) wrapped; "Class.method" for a classmethod or method
PHASES = [
    ("argusqt.batch.runner", "run_batch"),
    ("argusqt.protection.run", "run_method"),
    ("argusqt.protection.core.problem", "CSPProblem.from_table"),
    ("argusqt.protection.suppress.optimal", "start_pattern"),
    ("argusqt.protection.suppress.branch_and_cut", "solve_pattern"),
    ("argusqt.protection.audit.insider_repair", "make_publishable"),
    ("argusqt.protection.audit.insider_repair", "spare"),
    ("argusqt.protection.audit.publication", "publication_audit"),
    ("argusqt.protection.audit.insider_floor", "floor_audit"),
    ("argusqt.protection.audit.insider", "insider_audit"),
    ("argusqt.protection.audit.outsider", "audit"),
    ("argusqt.protection.suppress.modular", "_search"),
    ("argusqt.protection.suppress.modular", "_solve_depth"),
    ("argusqt.protection.suppress.modular", "_path_start"),
    ("argusqt.protection.suppress.modular", "_finish"),
    ("argusqt.protection.suppress.modular", "_polish"),
    ("argusqt.protection.suppress.modular_publish", "publish"),
    ("argusqt.export.writetable", "write_table"),
]

CHILD = r"""
import atexit, collections, importlib, json, os, resource, runpy, sys, time
phases, argv = json.loads(sys.argv[1]), sys.argv[2:]
t0 = time.process_time()
mods = {m: importlib.import_module(m) for m, _ in phases}
imports = time.process_time() - t0
cpu, calls, depth = collections.Counter(), collections.Counter(), collections.Counter()

def wrap(name, f):
    def timed(*a, **k):
        calls[name] += 1
        depth[name] += 1
        t = time.process_time() if depth[name] == 1 else None
        try:
            return f(*a, **k)
        finally:
            depth[name] -= 1
            if t is not None:
                cpu[name] += time.process_time() - t
    return timed

for m, attr in phases:
    mod = mods[m]
    if "." in attr:
        cls_name, fname = attr.split(".")
        cls = getattr(mod, cls_name)
        f = cls.__dict__[fname]
        inner = f.__func__ if isinstance(f, classmethod) else f
        w = wrap(attr, inner)
        setattr(cls, fname, classmethod(w) if isinstance(f, classmethod) else w)
        continue
    f = getattr(mod, attr)
    w = wrap(f"{m.rsplit('.', 1)[-1]}.{attr}", f)
    for held in list(sys.modules.values()):
        if getattr(held, "__name__", "").startswith("argusqt"):
            for k, v in list(vars(held).items()):
                if v is f:
                    setattr(held, k, w)

def report():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"process": ru.ru_utime + ru.ru_stime, "start": t0, "imports": imports,
                      "cpu": cpu, "calls": calls, "load": os.getloadavg()[0]}))
atexit.register(report)
sys.argv = ["argusqt"] + argv
runpy.run_module("argusqt", run_name="__main__")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--cases", default="p78:OPT,p78:MOD,b520:MOD")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    for case in args.cases.split(","):
        name, _, method = case.partition(":")
        argv = [sys.executable, "-c", CHILD, json.dumps(PHASES), "batch", f"our_{method}.arb",
                "phases.log"]  # fmt: skip
        out = subprocess.run(argv, cwd=args.workdir / name, env=env, capture_output=True,
                             text=True, check=True)  # fmt: skip
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"== {case}: process {r['process']:.3f} CPU-s (interpreter before the first line "
              f"{r['start']:.3f}, the phases' modules imported {r['imports']:.3f}); "
              f"load {r['load']:.2f}")  # fmt: skip
        for phase, seconds in sorted(r["cpu"].items(), key=lambda kv: -kv[1]):
            print(f"   {phase:40} {seconds * 1000:8.1f} ms {r['calls'][phase]:6d} calls")


if __name__ == "__main__":
    main()
