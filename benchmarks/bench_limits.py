"""Time limits are the run's limits (issue 22): OPT, MOD and HEUR in batch syntax with a
1- and a 2-minute limit on the large synthetic surveys (b7290, b31808, b97768 of
business_tables.py) must end within the limit + its grace (budget.limit_grace: 10 %, at
least 5 s) with an audited pattern or a clear refusal.

Each run is a fresh `python` process running a batch file (tabulate, `<SUPPRESS>`); the time
of the protect step (Session.protect: the method and its publication audit) is measured
apart from the tabulation, in CPU-seconds (the limit's clock since D-96) and wall seconds.
A run is killed past 3 × the limit + 60 CPU-s, or past argusqt's own wall-clock backstop
(budget.backstop) + 60 wall-s, whichever comes first (a loaded machine no longer kills a run
that is within its CPU limit; session 20). Usage:
    python benchmarks/bench_limits.py [--instances b7290,b31808] [--methods HEUR,MOD,OPT]
        [--minutes 1,2] [--root /tmp/argusqt-limits]
Prints one row per run and the load (`uptime`) before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from business_tables import RULES, SURVEYS, batch_text, write_survey  # noqa: E402

#: a 78-cell peer-style table (p% + FREQ, activity × region), as in issue 22's measurement
TABLES = SURVEYS  # p78 among them


def call_for(method: str, minutes: float) -> str:
    """The batch call with its time limit where τ-Argus puts it."""
    m = f"{minutes:g}"
    return {
        "HEUR": f"HEUR(1,{m})",
        "MOD": f"MOD(1,{m},1,1,1)",
        "OPT": f"OPT(1,{m})",
    }[method]


def write_batch(folder: Path, key: str, call: str) -> Path:
    """A batch file for `call` on table `key` (survey files written once into `folder`)."""
    if key == "sample":
        import shutil

        folder.mkdir(parents=True, exist_ok=True)
        for f in (ROOT / "sample_data").iterdir():
            if f.is_file() and not (folder / f.name).exists():
                shutil.copy(f, folder / f.name)
        text = (
            '<OPENMICRODATA> "enterprise.asc"\n<OPENMETADATA> "enterprise.rda"\n'
            '<SPECIFYTABLE> "activity""region"|"turnover"||\n'
            "<SAFETYRULE> P(15,1)|FREQ(3,20)|MAN(20)\n<READMICRODATA>\n"
            f"<SUPPRESS> {call}\n"
        )
    else:
        s = TABLES[key]
        write_survey(s, folder)
        text = batch_text(
            "survey.asc", "survey.rda", s.variables, "turnover", RULES, call, "out.csv", "turnover"
        )
        text = text.replace('<WRITETABLE> (1, 3, AS+, "out.csv")\n', "")
    name = call.split("(")[0].lower() + "_" + hashlib.md5(call.encode()).hexdigest()[:6]
    arb = folder / f"{name}.arb"
    arb.write_text(text)
    return arb


def child(arb: Path) -> dict:
    """Run one batch file in this process: protect time, statuses digest or the refusal."""
    import numpy as np

    import argusqt.session as session_module
    from argusqt.batch.runner import run_batch
    from argusqt.model.status import is_secondary

    box: dict = {}
    original = session_module.Session.protect

    def timed(self, *args, **kwargs):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            result = original(self, *args, **kwargs)
            box["timed_out"] = bool(result.timed_out)
            box["cost"] = float(result.cost)
            return result
        finally:
            box["protect_s"] = time.perf_counter() - t0
            box["protect_cpu_s"] = time.process_time() - c0

    session_module.Session.protect = timed  # type: ignore[method-assign]
    t0 = time.perf_counter()
    outcome = run_batch(arb, logbook=arb.with_suffix(".log.txt"))
    box["wall_s"] = time.perf_counter() - t0
    if outcome.error is not None:
        box["error"] = " ".join(str(outcome.error).split())
    else:
        status = np.asarray(outcome.session.tables[0].status)
        box["n_cells"] = int(status.size)
        box["secondaries"] = int(is_secondary(status).sum())
        box["digest"] = hashlib.sha1(status.astype(np.int8).tobytes()).hexdigest()[:12]
    return box


def _cpu_of(pid: int) -> float:
    """CPU-seconds (user + system) a running process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(arb: Path, kill_cpu: float, kill_wall: float) -> dict:
    """`child(arb)` in a fresh interpreter, killed past `kill_cpu` CPU-s or `kill_wall` s."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(arb)]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    while True:
        try:
            out, _ = proc.communicate(timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            cpu, wall = _cpu_of(proc.pid), time.perf_counter() - t0
            if cpu > kill_cpu or wall > kill_wall:
                proc.kill()
                proc.communicate()
                return {"killed": True, "wall_s": wall, "cpu_s": cpu}
    lines = [x for x in out.decode().splitlines() if x.startswith("{")]
    if not lines:
        return {"error": f"no result (exit {proc.returncode})", "wall_s": time.perf_counter() - t0}
    return json.loads(lines[-1])


def load() -> str:
    return os.popen("uptime").read().strip()


def describe(res: dict) -> str:
    if res.get("killed"):
        return f"killed at {res['cpu_s']:.0f} CPU-s, {res['wall_s']:.0f} s"
    if "error" in res:
        return "refused: " + res["error"][:150]
    flag = ", time limit decided" if res.get("timed_out") else ""
    return f"{res['secondaries']} secondaries, cost {res['cost']:,.0f}, {res['digest']}{flag}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", type=Path)
    ap.add_argument("--instances", default="b7290,b31808,b97768")
    ap.add_argument("--methods", default="HEUR,MOD,OPT")
    ap.add_argument("--minutes", default="1,2")
    ap.add_argument("--root", type=Path, default=Path("/tmp/argusqt-limits"))
    args = ap.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child)), flush=True)
        return 0
    from argusqt.protection.core.budget import backstop, limit_grace

    print(f"load before: {load()}", flush=True)
    print("| table | call | limit + grace (CPU-s) | protect CPU-s | wall s | within? | result |")
    print("|---|---|---|---|---|---|---|")
    for key in args.instances.split(","):
        for minutes in [float(m) for m in args.minutes.split(",")]:
            for method in args.methods.split(","):
                call = call_for(method, minutes)
                arb = write_batch(args.root / key, key, call)
                limit = 60.0 * minutes
                res = run(arb, kill_cpu=3 * limit + 60, kill_wall=backstop(limit) + 60)
                took = res.get("protect_cpu_s", res.get("cpu_s", math.nan))
                wall = res.get("protect_s", res["wall_s"])
                ok = "yes" if took <= limit + limit_grace(limit) else "**no**"
                print(
                    f"| {key} | `{call}` | {limit:.0f} + {limit_grace(limit):.0f} | "
                    f"{took:.1f} | {wall:.1f} | {ok} | {describe(res)} |",
                    flush=True,
                )
    print(f"load after: {load()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
