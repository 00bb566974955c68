"""Cell key method benchmark (issue 25): cell keys and perturbation on big data.

Builds synthetic microdata in memory (no file: the reader has its own benchmark,
bench_tabulate.py) with a record key, tabulates a 3-dimensional table of about 105,000
cells, attaches the cell keys and runs CKM on the counts and on a magnitude (T(3) with
flex scaling), and the CKM verdict's attacker on the counts (the magnitudes' attacker is one
more perturbation with every noise at its largest). Prints time and peak Python memory (tracemalloc) per step with the load.
Usage: python benchmarks/bench_ckm.py [--records 1e6 1e7]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argusqt.io.codelists import codelist_for  # noqa: E402
from argusqt.io.microdata import CategoricalColumn, MicroData  # noqa: E402
from argusqt.io.ptable import read_ptable  # noqa: E402
from argusqt.model.cellkey import (  # noqa: E402
    MagnitudeCKM,
    RecordKeyFiles,
    attach_cell_keys,
    cell_key_inputs,
    generated_record_keys,
)
from argusqt.model.metadata import Metadata, Variable  # noqa: E402
from argusqt.model.table import TableSpec  # noqa: E402
from argusqt.model.tabulate import build_table  # noqa: E402
from argusqt.protection.adjust.ckm import count_hull  # noqa: E402
from argusqt.protection.adjust.ckm_perturb import (  # noqa: E402
    magnitude_setup,
    perturb_counts,
    perturb_magnitudes,
)
from argusqt.protection.adjust.ckm_ptable import generate_ptable  # noqa: E402
from argusqt.protection.audit.disclosure import Face, face_verdict  # noqa: E402
from argusqt.protection.core.problem import CSPProblem  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "tauargus" / "cellkey"


def synthetic(n: int, seed: int = 1) -> tuple[Metadata, MicroData]:
    """Region (100 codes with 9 groups), activity (211 with 30 groups), size 1–4, turnover."""
    rng = np.random.default_rng(seed)
    meta = Metadata(path=None, kind="free", separator=";")
    region = Variable("region", width=3, recodeable=True, hierarchical=True, hierlevels=[1, 2])
    nace = Variable("nace", width=3, recodeable=True, hierarchical=True, hierlevels=[2, 1])
    size = Variable("size", width=1, recodeable=True)
    turnover = Variable("turnover", width=12, numeric=True, decimals=2)
    turnover.ckm = MagnitudeCKM(
        type="T", top_k=3, scaling="F", sigma0=0.03, sigma1=0.3, xstar=1000, q=3,
        epsilon=[1.0, 0.5, 0.2], separation=True,
    )  # fmt: skip
    key = Variable("key", width=17, record_key=True, decimals=15, pfiles=RecordKeyFiles())
    meta.variables = [region, nace, size, turnover, key]
    reg_codes = [f"{g}{m:02d}" for g in range(1, 10) for m in range(10)]
    nace_codes = [f"{d:02d}{k}" for d in range(10, 40) for k in range(6)]
    data = MicroData(path=Path("synthetic"), n_records=n)
    data.categorical["region"] = CategoricalColumn(
        rng.integers(0, len(reg_codes), n).astype(np.int32), reg_codes
    )
    data.categorical["nace"] = CategoricalColumn(
        rng.integers(0, len(nace_codes), n).astype(np.int32), nace_codes
    )
    data.categorical["size"] = CategoricalColumn(
        rng.integers(0, 4, n).astype(np.int32), ["1", "2", "3", "4"]
    )
    data.numeric["turnover"] = np.round(rng.pareto(1.5, n) * 1000 + 1, 2)
    data.numeric["key"] = generated_record_keys(n, seed)
    return meta, data


def step(name: str, fn, figures: dict):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    figures[name] = (time.perf_counter() - t0, tracemalloc.get_traced_memory()[1] / 2**20)
    tracemalloc.stop()
    return out


def run(n: int) -> dict:
    figures: dict = {}
    meta, data = synthetic(n)
    explanatory = ["region", "nace", "size"]
    log: list[str] = []
    freq = step(
        "tabulate counts",
        lambda: build_table(meta, data, TableSpec(explanatory, None), log,
                            codelist_for=codelist_for),
        figures,
    )  # fmt: skip
    step("cell keys (counts)", lambda: attach_cell_keys(freq, meta, data), figures)
    inputs = step("expand keys to cells", lambda: cell_key_inputs(freq), figures)
    ptable = read_ptable(SHARED / "Magnitude" / "ptab_freq.txt") if SHARED.is_dir() else (
        generate_ptable(5, 3.0, 2, 0.5)
    )  # fmt: skip
    published, _ = step(
        "perturb counts",
        lambda: perturb_counts(inputs.cells.count, None, inputs.cells.key, freq.status, ptable),
        figures,
    )
    lower, upper = step("attacker hull (counts)", lambda: count_hull(ptable, published), figures)
    problem = CSPProblem.from_table(freq)
    face = Face("ckm", published=published, lower=lower, upper=upper)
    step("CKM verdict (counts)", lambda: face_verdict(problem, face), figures)
    mag = step(
        "tabulate turnover",
        lambda: build_table(meta, data, TableSpec(explanatory, "turnover"), log,
                            codelist_for=codelist_for),
        figures,
    )  # fmt: skip
    step("cell keys (turnover, top 3)", lambda: attach_cell_keys(mag, meta, data), figures)
    minputs = cell_key_inputs(mag)
    large = read_ptable(SHARED / "Magnitude" / "ptab_savings_all.txt", "cont")
    small = read_ptable(SHARED / "Magnitude" / "ptab_savings_smallcells.txt", "cont")
    ckm = meta.variable("turnover").ckm
    setup = magnitude_setup(ckm, large, small)
    step(
        "perturb turnover",
        lambda: perturb_magnitudes(mag.value, mag.status, minputs.cells, ckm, setup, False),
        figures,
    )
    figures["cells"] = freq.n_cells
    return figures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", nargs="*", type=float, default=[1e6, 1e7])
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()}")
    for n in args.records:
        figures = run(int(n))
        print(f"\n{int(n):,} records, {figures.pop('cells'):,} cells")
        for name, (sec, mib) in figures.items():
            print(f"  {name:<30} {sec:8.2f} s   peak {mib:8.1f} MiB")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
