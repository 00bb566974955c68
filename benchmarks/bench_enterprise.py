"""Enterprise scenarios (shared/data/tauargus/enterprise): our patterns vs τ-Argus's.

For every scenario of the data README: build the table with τ-Argus's settings, protect it
with our methods, audit the result (outsider and insider: holdings alone in a suppressed
cell), and compare the cost (Σ response over statuses 11 and 12) with τ-Argus's pattern
read from its expected file. Also audits τ-Argus's own patterns with the same publication
audit. Prints a table. Usage:
    python benchmarks/bench_enterprise.py [--methods MOD OPT HEUR] [--max-time 300]
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argusqt.io.apriori import apply_apriori  # noqa: E402
from argusqt.io.codelists import codelist_for  # noqa: E402
from argusqt.io.microdata import read_microdata  # noqa: E402
from argusqt.io.rda import read_rda  # noqa: E402
from argusqt.model.rulespec import PRule, SafetyRules  # noqa: E402
from argusqt.model.status import is_secondary, is_suppressed  # noqa: E402
from argusqt.model.table import CostSpec, TableSpec  # noqa: E402
from argusqt.model.tabulate import build_table  # noqa: E402
from argusqt.protection.audit.outsider import audit  # noqa: E402
from argusqt.protection.audit.publication import publication_audit  # noqa: E402
from argusqt.protection.core.problem import CSPProblem  # noqa: E402
from argusqt.protection.run import run_method  # noqa: E402
from argusqt.protection.suppress.linked import cover_dims, protect_linked  # noqa: E402
from argusqt.rules.classify import apply_rules  # noqa: E402
from argusqt.rules.cost import compute_cost  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "tauargus" / "enterprise"
SINGLETONS = {"singleton_singleton": True, "singleton_multiple": True, "min_freq": True}


def spec(dims: tuple[str, ...]) -> TableSpec:
    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    return TableSpec(list(dims), "turnover", cost=CostSpec("variable", "turnover"), rules=rules)


def expected_status(path: Path) -> np.ndarray:
    with path.open(newline="") as f:
        return np.array([int(r[-1]) for r in csv.reader(f) if r])


def table_for(meta, data, dims, folder, apriori: bool = False):
    t = build_table(meta, data, spec(dims), [], codelist_for=codelist_for)
    apply_rules(t)
    compute_cost(t)
    if apriori:
        apply_apriori(
            t, folder / "expected" / "test_3a.hst", sep=",", ignore_errors=True, expand_trivial=True
        )
    return t


def secondary_cost(table, status) -> float:
    return float(np.asarray(table.value)[is_secondary(status)].sum())


def audit_theirs(table, status) -> tuple[bool, int]:
    """Outsider and insider audit of a pattern: (passes, failing cells)."""
    prob = CSPProblem.from_table(table)
    verdict = publication_audit(prob, is_suppressed(status), intervals=False)
    return verdict.ok, int(verdict.failing_cells.size)


def verdict_words(prob, status) -> str:
    verdict = publication_audit(prob, is_suppressed(status), intervals=False)
    insider = sum(d.reason == "insider" for d in verdict.disclosures)
    outsider = sum(d.reason == "outsider" for d in verdict.disclosures)
    if verdict.ok:
        return f"passes ({verdict.insiders_checked} holdings attacked, 0 insider disclosures)"
    return f"FAILS ({outsider} outsider, {insider} insider disclosures)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--methods", nargs="+", default=["MOD", "OPT", "HEUR"])
    ap.add_argument("--max-time", type=float, default=300.0, help="seconds per OPT run")
    args = ap.parse_args()
    if not DATA.is_dir():
        sys.exit(f"enterprise data not found at {DATA}")
    tmp = Path(tempfile.mkdtemp())
    folder = tmp / "enterprise"
    shutil.copytree(DATA, folder)
    meta = read_rda(folder / "example_enterprise.rda")
    data = read_microdata(meta, folder / "example_enterprise.asc")
    print(f"machine: {os.cpu_count()} cores")
    head = f"{'scenario':<22}{'method':<8}{'cells':>7}{'prim':>6}{'sec':>6}{'cost':>16}{'τ-Argus':>16}{'ratio':>8}{'time s':>9}  audit"
    print(head)
    scenarios = [
        ("test_1 act×product", ("act", "product"), "test_1.txt", False),
        ("test_3a region×mun", ("region", "mun"), "test_3a.txt", False),
        ("test_3b region×product", ("region", "product"), "test_3b.txt", True),
    ]
    for name, dims, exp, apr in scenarios:
        base = table_for(meta, data, dims, folder, apr)
        theirs = expected_status(folder / "expected" / exp)
        their_cost = secondary_cost(base, theirs)
        ok, nfail = audit_theirs(base, theirs)
        print(
            f"{name:<22}{'τ-Argus':<8}{base.n_cells:>7}{int(((theirs >= 3) & (theirs <= 9)).sum()):>6}"
            f"{int(is_secondary(theirs).sum()):>6}{their_cost:>16.2f}{their_cost:>16.2f}{1:>8.3f}{'':>9}  "
            f"{'passes' if ok else f'FAILS ({nfail} cells)'}",
            flush=True,
        )
        for method in args.methods:
            prob = CSPProblem.from_table(base)
            params = {"max_time": args.max_time, "max_time_per_subtable": 60, **SINGLETONS}
            t0 = time.perf_counter()
            try:
                res = run_method(prob, method, params)
            except Exception as exc:  # report and go on with the next method
                print(f"{name:<22}{method:<8} failed: {exc}", flush=True)
                continue
            el = time.perf_counter() - t0
            cost = secondary_cost(base, res.status)
            print(
                f"{name:<22}{method:<8}{base.n_cells:>7}{int(prob.primary.sum()):>6}"
                f"{res.n_secondary:>6}{cost:>16.2f}{their_cost:>16.2f}{cost / their_cost if their_cost else float('nan'):>8.3f}"
                f"{el:>9.1f}  {verdict_words(prob, res.status)}"
                f"{'' if res.gap is None else f' gap {100 * res.gap:.2f}%'}",
                flush=True,
            )
    # linked pair: act × product and act × region protected together (τ-Argus: MOD linked)
    t2a = table_for(meta, data, ("act", "product"), folder)
    t2b = table_for(meta, data, ("act", "region"), folder)
    s2a = expected_status(folder / "expected" / "test_2a.txt")
    s2b = expected_status(folder / "expected" / "test_2b.txt")
    their = secondary_cost(t2a, s2a) + secondary_cost(t2b, s2b)
    for tab, st, label in ((t2a, s2a, "2a"), (t2b, s2b, "2b")):
        ok, nfail = audit_theirs(tab, st)
        print(
            f"{'test_' + label + ' τ-Argus audit':<30} {'passes' if ok else f'FAILS ({nfail} cells)'}"
        )
    for method in [m for m in args.methods if m in ("MOD", "OPT")]:
        probs = [CSPProblem.from_table(t2a), CSPProblem.from_table(t2b)]
        t0 = time.perf_counter()
        cover = None
        if method == "MOD":  # τ-Argus: MOD on the cover table act × product × region
            names = [d.name for d in cover_dims(probs)[0]]
            cover = CSPProblem.from_table(table_for(meta, data, tuple(names), folder))
        try:
            results = protect_linked(
                probs,
                method,
                {"max_time": args.max_time, "max_time_per_subtable": 10, **SINGLETONS},
                cover=cover,
            )
        except Exception as exc:
            print(f"{'test_2a+2b linked':<22}{method:<8} failed: {exc}", flush=True)
            continue
        el = time.perf_counter() - t0
        cost = sum(secondary_cost(t, r.status) for t, r in zip((t2a, t2b), results, strict=True))
        oks = all(
            audit(p, is_suppressed(r.status), intervals=False).ok
            for p, r in zip(probs, results, strict=True)
        )
        print(
            f"{'test_2a+2b linked':<22}{method:<8}{t2a.n_cells + t2b.n_cells:>7}{'':>6}"
            f"{sum(r.n_secondary for r in results):>6}{cost:>16.2f}{their:>16.2f}{cost / their:>8.3f}"
            f"{el:>9.1f}  {'passes' if oks else 'FAILS'}",
            flush=True,
        )


if __name__ == "__main__":
    main()
