"""Process start and small tables (issue 26, goal 2): where a short `argusqt batch` run's CPU
goes, and this checkout against another one, interleaved.

For each batch file: CPU seconds (user + system, os.wait4) of whole `argusqt batch`
processes, this checkout and each `--baseline` checkout run in turn `--repeat` times (the
medians are compared; the machine's load is printed, since CPU seconds grow with it); then
one instrumented run in this checkout splitting the CPU into the import of the batch runner,
the dataclasses created by imports (Python compiles their methods), the rest of the run, and
the floor: numpy, scipy.sparse (as argusqt imports it), highspy and pyscipopt alone.
`--floor` adds the floor piece by piece (each library a whole process of its own) beside
the τ-Argus engine's whole run of the same batch file, when pytauargus is installed (D-57).

The batch files are those of `bench_vs_tauargus.py` (batch_ex1 copied from the shared data;
p78 generated): give folders holding an `.arb` with `--case FOLDER:FILE.arb`, or use
`--vs-tauargus WORKDIR` after `bench_vs_tauargus.py --instances batch_ex1,p78 --workdir WORKDIR`.

Usage:
    python benchmarks/bench_start.py --case DIR:batch_ex1.arb [--case DIR:our_OPT.arb]
        [--baseline /path/to/other/checkout] [--repeat 9] [--floor]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: CPU of one instrumented run: runner import, dataclass creation, the rest
PHASES = r"""
import dataclasses, json, sys, time
pt = time.process_time
made = [0.0, 0]
process = dataclasses._process_class
def timed(*a, **k):
    t = pt()
    try:
        return process(*a, **k)
    finally:
        made[0] += pt() - t
        made[1] += 1
dataclasses._process_class = timed
t0 = pt()
import argusqt.batch.runner
from argusqt.cli import main
t1 = pt()
sys.argv = ["argusqt", "batch", sys.argv[1], "bench_start.log"]
import atexit, contextlib, io
def report():  # the command ends the process in main (cli.end_process): its exit functions run
    t2 = pt()
    print(json.dumps({"runner_import": t1 - t0, "run": t2 - t1, "total": t2,
                      "dataclasses": made[0], "n_dataclasses": made[1],
                      "modules": len(sys.modules),
                      "argusqt_modules": len([m for m in sys.modules if m.startswith("argusqt")])}),
          file=sys.__stdout__, flush=True)
atexit.register(report)
with contextlib.redirect_stdout(io.StringIO()):
    main()
"""
#: the libraries alone, scipy.sparse imported as argusqt does (model/scipy_sparse.py)
FLOOR = "from argusqt.model import scipy_sparse; scipy_sparse.load(); import highspy, pyscipopt"
#: the floor piece by piece (each a whole process, with the command's one BLAS thread, D-57):
#: the interpreter, then each library on top of numpy (highspy and pyscipopt import numpy)
PIECES = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "numpy + scipy.sparse": "from argusqt.model import scipy_sparse; scipy_sparse.load()",
    "numpy + highspy": "import numpy, highspy",
    "numpy + pyscipopt": "import numpy, pyscipopt",
    # batch_ex1's own floor: a small table's run imports no scipy (D-78) nor numpy.ma (D-85)
    "numpy + both solvers": "import numpy, highspy, pyscipopt",
    "all four (the floor)": FLOOR,
}


def cpu_of(argv: list[str], cwd: Path, root: Path, blas: bool = False) -> float:
    """CPU seconds (user + system) of one process started in `cwd` with `root` first;
    `blas`: with the one OpenBLAS thread the `argusqt` command asks for (cli.one_blas_thread)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    if blas:
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} ({root}) failed: status {status}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", default=[], help="FOLDER:FILE.arb")
    ap.add_argument("--vs-tauargus", type=Path, help="bench_vs_tauargus.py's work folder")
    ap.add_argument("--baseline", type=Path, action="append", default=[])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument(
        "--floor", action="store_true",
        help="the floor piece by piece (interpreter, numpy, scipy.sparse, highspy, pyscipopt) "
        "beside the τ-Argus engine's whole run of each batch file (pytauargus, when installed)",
    )  # fmt: skip
    args = ap.parse_args()
    cases = [(Path(c.split(":")[0]), c.split(":")[1]) for c in args.case]
    if args.vs_tauargus:
        w = args.vs_tauargus
        cases += [(w / "batch_ex1", "batch_ex1.arb")] if (w / "batch_ex1").is_dir() else []
        cases += [(w / "p78", f"our_{m}.arb") for m in ("OPT", "MOD") if (w / "p78").is_dir()]
    if not cases:
        raise SystemExit("no batch file: give --case FOLDER:FILE.arb or --vs-tauargus WORKDIR")
    trees = [("this", ROOT)] + [(f"base:{b.name}", b.resolve()) for b in args.baseline]
    for _, tree in trees:  # an installation has bytecode; PYTHONDONTWRITEBYTECODE may be set
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "argusqt")], check=False
        )
    print(
        f"machine: {os.cpu_count()} cores; load {os.getloadavg()}; python {sys.version.split()[0]}"
    )
    for folder, arb in cases:
        cpu: dict[str, list[float]] = {name: [] for name, _ in trees}
        cpu["floor"] = []
        for _ in range(args.repeat):
            for name, tree in trees:
                cmd = [sys.executable, "-m", "argusqt", "batch", arb, "bench_start.log"]
                cpu[name].append(cpu_of(cmd, folder, tree))
            cpu["floor"].append(cpu_of([sys.executable, "-c", FLOOR], folder, ROOT))
        print(
            f"\n== {folder.name}/{arb}: median CPU of {args.repeat} interleaved processes; "
            f"load now {os.getloadavg()}"
        )
        ref = statistics.median(cpu["this"])
        for name, values in cpu.items():
            med = statistics.median(values)
            print(f"   {name:24} {med:7.3f} s (min {min(values):.3f})  this/it {ref / med:5.2f}")
        out = subprocess.run(
            [sys.executable, "-c", PHASES, arb],
            cwd=folder,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        )
        ph = json.loads(out.stdout.strip().splitlines()[-1])
        if args.floor:
            floor_pieces(folder, arb, args.repeat, ref)
        print(
            f"   one run, this checkout: runner import {ph['runner_import']:.3f} s, run (method "
            f"modules, solve, audits, writing) {ph['run']:.3f} s, in all {ph['total']:.3f} s; "
            f"{ph['n_dataclasses']} dataclasses made {ph['dataclasses']:.3f} s of it; "
            f"{ph['modules']} modules ({ph['argusqt_modules']} argusqt)"
        )


def engine_batch(folder: Path, arb: str) -> Path | None:
    """The engine's batch file of a case: bench_vs_tauargus's `tau_M.arb` beside `our_M.arb`,
    else the file itself (batch_ex1 is τ-Argus's own)."""
    if arb.startswith("our_"):
        theirs = folder / arb.replace("our_", "tau_", 1)
        return theirs if theirs.is_file() else None
    return folder / arb


def floor_pieces(folder: Path, arb: str, repeat: int, ours: float) -> None:
    """Median CPU of each piece of the floor and of the engine's whole run, interleaved."""
    cmds = {name: [sys.executable, "-c", code] for name, code in PIECES.items()}
    theirs = engine_batch(folder, arb)
    if importlib.util.find_spec("pytauargus") is not None and theirs is not None:
        cmds["τ-Argus engine, whole run"] = [
            sys.executable, "-m", "pytauargus.cli", "run", str(theirs)
        ]  # fmt: skip
    cpu: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, argv in cmds.items():
            cpu[name].append(cpu_of(argv, folder, ROOT, blas=True))
    print(f"   the floor piece by piece (load now {os.getloadavg()}):")
    engine = statistics.median(cpu.get("τ-Argus engine, whole run", [float("nan")]))
    for name, values in cpu.items():
        med = statistics.median(values)
        print(f"   {name:28} {med:7.3f} s (min {min(values):.3f})  × engine {med / engine:5.2f}")
    print(
        f"   argusqt whole run            {ours:7.3f} s               × engine {ours / engine:5.2f}"
    )


if __name__ == "__main__":
    main()
