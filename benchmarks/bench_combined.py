"""Cost of the rule on combined suppressed cells (US#160, argusqt/docs/rules.md §3.11).

Runs each scenario twice through a batch file (the door GUI, batch and API share): with the
rule on (`COMB(1)`, the default with NK or P) and off (`COMB(0)`), and prints per method the
secondaries, their cost (Σ response over statuses 11 and 12), the unsafe determined sums the
pattern without the rule leaves, and the time. Scenarios: the enterprise data (τ-Argus's
settings: p% on holdings) and the bundled sample data. Usage:
    python benchmarks/bench_combined.py [--methods MOD OPT HEUR GH]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argusqt.batch.runner import run_batch  # noqa: E402
from argusqt.model.status import is_secondary, is_suppressed  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", nargs="+", default=["MOD", "OPT", "HEUR", "GH"])
    args = ap.parse_args()
    print("scenario | method | rule | secondaries | cost | unsafe sums left | seconds")
    for name, src, data, meta, table, rules in SCENARIOS:
        if not src.is_dir():
            print(f"{name}: data not found at {src}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "d"
            shutil.copytree(src, folder)
            for method in args.methods:
                for flag in ("COMB(1)", "COMB(0)"):
                    t, err, sec = run(folder, data, meta, table, f"{rules}|{flag}",
                                      CALLS[method])  # fmt: skip
                    if t is None:
                        print(f"{name} | {method} | {flag} | error: {err} | | | {sec:.1f}")
                        continue
                    status = np.asarray(t.status)
                    sec_mask = is_secondary(status)
                    cost = float(np.abs(np.asarray(t.value))[sec_mask].sum())
                    t.spec.rules.combined = True  # count what the pattern leaves either way
                    left = len(combined_disclosures(t, is_suppressed(status)))
                    print(
                        f"{name} | {method} | {flag} | {int(sec_mask.sum())} | {cost:,.2f} | "
                        f"{left} | {sec:.1f}"
                    )


if __name__ == "__main__":
    main()
