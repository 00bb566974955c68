"""D-91: insiders who know their own contribution in every cell they are in.

Protects real and generated tables with OPT, MOD and HEUR (run_method, the publication
verdict included) and attacks what they publish with tests/lower_bound_attacker.py (scipy,
nothing from argusqt.protection): per respondent, every suppressed cell it contributes to
is at least its contribution. Prints per table and method the cost, the CPU-seconds of the
run and the (primary, side) pairs found, and how many of them the older model (only cells a
respondent alone makes up) already finds. Usage:
    python benchmarks/bench_insider_lower.py [--methods OPT MOD HEUR] [--generated 6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from lower_bound_attacker import attack  # noqa: E402

from argusqt.model.status import is_secondary  # noqa: E402
from argusqt.protection.core.problem import CSPProblem  # noqa: E402
from argusqt.protection.run import run_method  # noqa: E402

TAU = ROOT.parent / "shared" / "data" / "tauargus"


def _batch_table(setup, arb: str):
    """The table a batch file without SUPPRESS builds (first table)."""
    from argusqt.batch.runner import run_batch
    from argusqt.session import Session

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        setup(folder)
        (folder / "read.arb").write_text(arb)
        session = Session()
        run_batch(folder / "read.arb", session=session)
        return session.table(1)


def cases(n_generated: int):
    """(name, builder) of every table measured."""
    from opt700_tables import opt700_set

    out = []
    ex2 = TAU / "batch_ex2"

    def copy_ex2(folder: Path) -> None:
        for f in ex2.iterdir():
            shutil.copyfile(f, folder / f.name)

    arb2 = "".join(
        line + "\n"
        for line in (ex2 / "batch_ex2.arb").read_text().splitlines()
        if line.startswith("<") and not line.startswith(("<SUPPRESS>", "<WRITETABLE>", "<LOG"))
    )
    out.append(("batch_ex2", lambda: _batch_table(copy_ex2, arb2)))
    for t in opt700_set(n_generated, extras=True):
        out.append((t.name, lambda t=t: _batch_table(t.setup, t.arb)))
    if (TAU / "enterprise").is_dir():
        import bench_enterprise as be

        from argusqt.io.microdata import read_microdata
        from argusqt.io.rda import read_rda

        def ent(dims):
            def build():
                meta = read_rda(TAU / "enterprise" / "example_enterprise.rda")
                data = read_microdata(meta, TAU / "enterprise" / "example_enterprise.asc")
                return be.table_for(meta, data, dims, TAU / "enterprise")

            return build

        out.append(("enterprise act×product", ent(("act", "product"))))
        out.append(("enterprise region×mun", ent(("region", "mun"))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--methods", nargs="+", default=["OPT", "MOD", "HEUR"])
    ap.add_argument("--generated", type=int, default=6)
    ap.add_argument("--only", default="")
    ap.add_argument("--max-time", type=float, default=60.0)
    args = ap.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores; {load}")
    print(f"{'table':<26}{'meth':<6}{'cells':>6}{'prim':>6}{'sec':>5}{'cost':>14}{'CPU s':>8}"
          f"{'found':>7}{'old':>5}  attacked by")  # fmt: skip
    totals = {"found": 0, "old": 0, "runs": 0}
    for name, build in cases(args.generated):
        if args.only and not any(o in name for o in args.only.split(",")):
            continue
        table = build()
        for method in args.methods:
            prob = CSPProblem.from_table(table)
            t0 = time.process_time()
            try:
                res = run_method(prob, method, {"max_time": args.max_time})
            except Exception as exc:  # report and go on
                print(f"{name:<26}{method:<6} failed: {type(exc).__name__}: {exc}"[:160])
                continue
            cpu = time.process_time() - t0
            status = np.asarray(res.status)
            cost = float(np.asarray(prob.cost)[is_secondary(status)].sum())
            found = attack(table, status)
            pairs = {(f.cell, f.side) for f in found}
            old = len({(f.cell, f.side) for f in found if f.exact_only})
            totals["found"] += len(pairs)
            totals["old"] += old
            totals["runs"] += 1
            who = " ".join(sorted({f"{f.cell}{f.side[0]}" for f in found}))[:80]
            print(
                f"{name:<26}{method:<6}{table.n_cells:>6}{int(prob.primary.sum()):>6}"
                f"{int(is_secondary(status).sum()):>5}{cost:>14.1f}{cpu:>8.1f}"
                f"{len(pairs):>7}{old:>5}  {len(found)} (primary, side, respondent): {who}",
                flush=True,
            )
    print(
        f"runs {totals['runs']}: {totals['found']} (primary, side) pairs found, "
        f"{totals['old']} of them by the old model"
    )


if __name__ == "__main__":
    main()
