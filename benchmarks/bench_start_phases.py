"""Where a short `argusqt batch` run's CPU goes, phase by phase, imports included (issue 26
goal 2, D-62): batch_ex1 and the 78-cell p78 OPT and MOD runs.

Each run is a fresh process sampled by a CPU-time timer (ITIMER_PROF, one stack every few
ms of CPU) from its first line, before anything is imported. A sample taken inside an import
counts for the library whose module is being executed (numpy, scipy, highspy, pyscipopt,
argusqt — of which the dataclasses Python builds — or the standard library); any other for
the innermost phase on its stack (reading, tabulating, the start heuristic, the
branch-and-cut, the outsider and insider audits, the insider repair, the rule on combined
cells, writing, …). Shares are of the sampled CPU; the interpreter's own start, before the
first line, is the process's CPU at that line. Timing only: no test asserts them.

The batch files are `bench_vs_tauargus.py`'s (run it once with `--workdir WORKDIR`):

Usage:
    python benchmarks/bench_start_phases.py --vs-tauargus WORKDIR [--repeat 9]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the sampled child: a stack per tick of the CPU timer, the phase decided afterwards
CHILD = r"""
import os, signal, sys, time
start = time.process_time()
stacks = []
def tick(sig, frame):
    st = []
    while frame is not None:
        st.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    stacks.append(st)
signal.signal(signal.SIGPROF, tick)
signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
import atexit, json
def report():
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    print(json.dumps({"start": start, "cpu": time.process_time(), "stacks": stacks}),
          file=sys.__stderr__, flush=True)
atexit.register(report)
from argusqt.cli import main
sys.argv = ["argusqt", "batch", sys.argv[1], "phases.log"]
main()
"""

#: (path fragment, function or "*", phase): the innermost match on a stack names the phase
PHASES = [
    ("argusqt/batch/arb.py", "*", "parse the batch file"),
    ("argusqt/io/", "*", "read (metadata, data)"),
    ("argusqt/model/tabulate.py", "*", "tabulate"),
    ("argusqt/rules/", "*", "rules, costs"),
    ("argusqt/protection/core/", "*", "build the problem, table facts"),
    ("argusqt/protection/suppress/optimal.py", "start_pattern", "OPT start heuristic"),
    ("argusqt/protection/suppress/heuristic.py", "*", "heuristic (OPT's start)"),
    ("argusqt/protection/suppress/modular", "*", "MOD subtables (outside the B&C)"),
    ("argusqt/protection/suppress/branch_and_cut.py", "*", "branch-and-cut (SCIP, cuts)"),
    ("argusqt/protection/suppress/scip_plugins.py", "*", "branch-and-cut (SCIP, cuts)"),
    ("argusqt/protection/lp/separation.py", "*", "branch-and-cut separation LPs"),
    ("argusqt/protection/audit/outsider.py", "*", "outsider audit"),
    ("argusqt/protection/audit/insider", "*", "insider audit"),
    ("argusqt/protection/audit/insider_repair.py", "*", "insider repair"),
    ("argusqt/protection/audit/publication.py", "*", "publication audit (glue)"),
    ("argusqt/protection/suppress/combined", "*", "rule on combined cells"),
    ("argusqt/protection/audit/combined.py", "*", "rule on combined cells"),
    ("argusqt/export/", "*", "write"),
    ("argusqt/workflow/output.py", "*", "write"),
]
LIBRARIES = ("numpy", "scipy", "highspy", "pyscipopt")


def _import_of(stack: list[list[str]]) -> str | None:
    """The library whose module body runs at this sample when it is an import, else None."""
    if not any("importlib._bootstrap" in f for f, _ in stack):
        return None
    for i, (filename, name) in enumerate(stack):  # innermost first
        # a module body, not the code dataclasses compile with exec ("<string>")
        if name != "<module>" or "importlib" in filename or filename.startswith("<"):
            continue
        if "/argusqt/" in filename:
            made = any(f.endswith("dataclasses.py") for f, _ in stack[:i])
            return "import: argusqt's dataclasses" if made else "import: argusqt (the rest)"
        for lib in LIBRARIES:
            if f"/site-packages/{lib}/" in filename:
                return f"import: {lib}"
        break
    return "import: standard library and others"


def phase_of(stack: list[list[str]]) -> str:
    lib = _import_of(stack)
    if lib is not None:
        return lib
    for filename, name in stack:  # innermost first
        for fragment, func, phase in PHASES:
            if fragment in filename and (func == "*" or func == name):
                return phase
    return "other (session, runner, numpy calls outside a phase)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vs-tauargus", type=Path, required=True, help="bench_vs_tauargus workdir")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    w = args.vs_tauargus
    cases = [(w / "batch_ex1", "batch_ex1.arb")] + [
        (w / "p78", f"our_{m}.arb") for m in ("OPT", "MOD")
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    print(
        f"machine: {os.cpu_count()} cores; load {os.getloadavg()}; python {sys.version.split()[0]}"
    )
    for folder, arb in cases:
        if not (folder / arb).is_file():
            print(f"\n== {folder.name}/{arb}: missing (run bench_vs_tauargus.py --workdir first)")
            continue
        counts: collections.Counter[str] = collections.Counter()
        n_samples = 0
        cpu = start = 0.0
        for _ in range(args.repeat):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, arb], cwd=folder, env=env,
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            run = json.loads(out.stderr.strip().splitlines()[-1])
            cpu += run["cpu"] / args.repeat
            start += run["start"] / args.repeat
            n_samples += len(run["stacks"])
            counts.update(phase_of(s) for s in run["stacks"])
        sampled = cpu - start
        print(
            f"\n== {folder.name}/{arb}: {args.repeat} processes, mean CPU {cpu:.3f} s "
            f"({n_samples} samples); load now {os.getloadavg()}"
        )
        print(f"   {'interpreter start (before the first line)':56s} {start:6.3f} s")
        imports = sum(v for k, v in counts.items() if k.startswith("import"))
        for phase, k in sorted(
            counts.items(), key=lambda kv: (not kv[0].startswith("import"), -kv[1])
        ):
            print(f"   {phase:56s} {sampled * k / n_samples:6.3f} s  {100 * k / n_samples:5.1f} %")
        print(f"   {'all imports':56s} {sampled * imports / n_samples:6.3f} s")


if __name__ == "__main__":
    main()
