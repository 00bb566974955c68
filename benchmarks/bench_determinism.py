"""Same input, same statuses on any load (issue 22): HEUR and MOD in batch syntax with their
usual limits (`HEUR(1,9)`, `MOD(1,1,1,1,1)`) on the peer-style 78-cell table, b520 and the
sample table (sample_data, activity × region), run on the machine as it is ("quiet") and
beside six CPU hogs (`python3 -c 'while 1: pass'`, started here and killed after by their
process ids); prints whether the statuses are identical.

Each run is a fresh process (bench_limits.child). Usage:
    python benchmarks/bench_determinism.py [--instances p78,b520,sample] [--methods HEUR,MOD]
        [--repeats 2] [--hogs 6] [--root /tmp/argusqt-determinism]
(`--methods OPT` adds `OPT(1,5)`.)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_limits import load, run, write_batch  # noqa: E402

CALLS = {"HEUR": "HEUR(1,9)", "MOD": "MOD(1,1,1,1,1)", "OPT": "OPT(1,5)"}


def start_hogs(n: int) -> list[subprocess.Popen]:
    """`n` busy loops, each its own process (killed by `stop_hogs`)."""
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(n)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for h in hogs:
        h.kill()
    for h in hogs:
        h.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="p78,b520,sample")
    ap.add_argument("--methods", default="HEUR,MOD")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--hogs", type=int, default=6)
    ap.add_argument("--root", type=Path, default=Path("/tmp/argusqt-determinism"))
    args = ap.parse_args(argv)
    print(
        "| table | call | runs | quiet: secondaries, digest, protect CPU-s | beside hogs | identical |"
    )
    print("|---|---|---|---|---|---|")
    all_same = True
    for key in args.instances.split(","):
        for method in args.methods.split(","):
            call = CALLS[method]
            arb = write_batch(args.root / key, key, call)
            quiet_load = load().split("load average:")[-1].strip()
            quiet = [run(arb, kill_cpu=1200, kill_wall=3600) for _ in range(args.repeats)]
            hogs = start_hogs(args.hogs)
            try:
                loaded_load = load().split("load average:")[-1].strip()
                loaded = [run(arb, kill_cpu=1200, kill_wall=3600) for _ in range(args.repeats)]
                loaded_load += " → " + load().split("load average:")[-1].strip()
            finally:
                stop_hogs(hogs)
            digests = {r.get("digest", r.get("error", "killed")) for r in quiet + loaded}
            same = len(digests) == 1 and not any(r.get("timed_out") for r in quiet + loaded)
            all_same &= same

            def cells(rs: list[dict]) -> str:
                return "; ".join(
                    f"{r.get('secondaries', '–')}, {r.get('digest', r.get('error', 'killed'))}, "
                    f"{r.get('protect_cpu_s', r.get('cpu_s', 0.0)):.1f} CPU-s"
                    + (" (time limit decided)" if r.get("timed_out") else "")
                    for r in rs
                )

            print(
                f"| {key} | `{call}` | {2 * args.repeats} | {cells(quiet)} (load {quiet_load}) "
                f"| {cells(loaded)} (load {loaded_load}) | {'yes' if same else '**no**'} |",
                flush=True,
            )
    print("all identical" if all_same else "NOT all identical")
    return 0 if all_same else 1


if __name__ == "__main__":
    raise SystemExit(main())
