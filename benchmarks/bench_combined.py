"""Cost of the rule on combined suppressed cells (US#160, argusqt/docs/rules.md §3.11).

Runs each scenario twice through a batch file (the door GUI, batch and API share): with the
rule on (`COMB(1)`, the default with NK or P) and off (`COMB(0)`), and prints per method the
secondaries, their cost (Σ response over statuses 11 and 12), the unsafe determined sums the
pattern without the rule leaves, and the time. Scenarios: the enterprise data (τ-Argus's
settings: p% on holdings) and the bundled sample data. With `--growth`, the rule on only,
each method twice: its pattern grown by the rule's cells (D-56) and run again instead,
with CPU seconds of this process (user + system). Usage:
    python benchmarks/bench_combined.py [--methods MOD OPT HEUR GH] [--growth]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argusqt.batch.runner import run_batch  # noqa: E402
from argusqt.model.status import is_secondary, is_suppressed  # noqa: E402
from argusqt.protection.suppress import combined  # noqa: E402
from argusqt.rules.combined import combined_disclosures  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "tauargus" / "enterprise"
ENTERPRISE = "P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MIS(1)|MAN(10)"
SCENARIOS = [
    # name, data folder, data, metadata, table, rules
    ("enterprise act×product", SHARED, "example_enterprise.asc", "example_enterprise.rda",
     '"act""product"|"turnover"||"turnover"', ENTERPRISE),
    ("enterprise region×product", SHARED, "example_enterprise.asc", "example_enterprise.rda",
     '"region""product"|"turnover"||"turnover"', ENTERPRISE),
    ("enterprise act×region", SHARED, "example_enterprise.asc", "example_enterprise.rda",
     '"act""region"|"turnover"||"turnover"', ENTERPRISE),
    ("sample activity×region", ROOT / "sample_data", "enterprise.asc", "enterprise.rda",
     '"activity""region"|"turnover"||', "P(15,1)|FREQ(3,20)"),
    ("sample activity×region NK", ROOT / "sample_data", "enterprise.asc", "enterprise.rda",
     '"activity""region"|"turnover"||', "NK(2,80)|FREQ(3,20)"),
]  # fmt: skip
CALLS = {"MOD": "MOD(1,5)", "OPT": "OPT(1,5)", "HEUR": "HEUR(1)", "GH": "GH(1,100,1,1)"}


def run(folder: Path, data: str, meta: str, table: str, rules: str, call: str):
    arb = folder / "job.arb"
    arb.write_text(
        f'<OPENMICRODATA> "{data}"\n<OPENMETADATA> "{meta}"\n<SPECIFYTABLE> {table}\n'
        f"<SAFETYRULE> {rules}\n<READMICRODATA>\n<SUPPRESS> {call}\n"
    )
    t0 = time.perf_counter()
    out = run_batch(arb)
    elapsed = time.perf_counter() - t0
    if not out.ok:
        return None, str(out.error), elapsed
    return out.session.table(1), "", elapsed


def secondaries(t) -> tuple[int, float]:
    """The table's secondaries and their cost (Σ |response| over statuses 11 and 12)."""
    sec_mask = is_secondary(np.asarray(t.status))
    return int(sec_mask.sum()), float(np.abs(np.asarray(t.value))[sec_mask].sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", nargs="+", default=["MOD", "OPT", "HEUR", "GH"])
    ap.add_argument("--growth", action="store_true", help="grown pattern against reruns")
    args = ap.parse_args()
    if args.growth:
        growth(args.methods)
        return
    print("scenario | method | rule | secondaries | cost | unsafe sums left | seconds")
    for name, folder, data, meta, table, rules in scenarios():
        for method in args.methods:
            for flag in ("COMB(1)", "COMB(0)"):
                t, err, sec = run(folder, data, meta, table, f"{rules}|{flag}", CALLS[method])
                if t is None:
                    print(f"{name} | {method} | {flag} | error: {err} | | | {sec:.1f}")
                    continue
                status = np.asarray(t.status)
                n_sec, cost = secondaries(t)
                t.spec.rules.combined = True  # count what the pattern leaves either way
                left = len(combined_disclosures(t, is_suppressed(status)))
                print(f"{name} | {method} | {flag} | {n_sec} | {cost:,.2f} | {left} | {sec:.1f}")


def scenarios() -> Iterator[tuple[str, Path, str, str, str, str]]:
    """Each scenario whose data is here, its folder a copy in a temporary directory."""
    for name, src, data, meta, table, rules in SCENARIOS:
        if not src.is_dir():
            print(f"{name}: data not found at {src}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "d"
            shutil.copytree(src, folder)
            yield name, folder, data, meta, table, rules


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def growth(methods: list[str]) -> None:
    """The rule on: each method's pattern grown by the rule's cells, then run again."""
    print(f"load {os.getloadavg()[0]:.2f}")
    print("scenario | method | rule's cells | secondaries | cost | CPU-s")
    for name, folder, data, meta, table, rules in scenarios():
        for method in methods:
            for how, grown in (("grown", frozenset({method})), ("rerun", frozenset())):
                combined.GROWN = grown
                c0 = cpu()
                t, err, _ = run(folder, data, meta, table, rules, CALLS[method])
                used = cpu() - c0
                if t is None:
                    print(f"{name} | {method} | {how} | error: {err} | | {used:.1f}")
                    continue
                n_sec, cost = secondaries(t)
                print(f"{name} | {method} | {how} | {n_sec} | {cost:,.2f} | {used:.1f}", flush=True)


if __name__ == "__main__":
    main()
