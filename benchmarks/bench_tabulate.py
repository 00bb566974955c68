"""Tabulation benchmark (issue: core engine): parsing speed and tabulation time/memory.

Generates synthetic fixed-width and CSV microdata (two hierarchical variables), parses both,
then builds three 3-dimensional tables from the loaded columns and applies the rules.
Prints a table of figures. Usage: python benchmarks/bench_tabulate.py [--records 1e6 1e7]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argusqt.io.codelists import codelist_for  # noqa: E402
from argusqt.io.microdata import read_microdata  # noqa: E402
from argusqt.io.rda import read_rda  # noqa: E402
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule, SafetyRules  # noqa: E402
from argusqt.model.table import TableSpec  # noqa: E402
from argusqt.model.tabulate import build_table  # noqa: E402
from argusqt.rules.classify import apply_rules  # noqa: E402

N_GROUPS, N_PER_GROUP = 12, 9  # region: 12 groups × 9 = 108 leaves (hrc)
N_NACE2, N_NACE3 = 30, 6  # activity: digits 2+1 → 180 leaves


def write_inputs(folder: Path, n: int, seed: int = 1) -> tuple[Path, Path, Path, Path]:
    """Synthetic survey: region (hrc), activity (digit levels), size, year, turnover, weight."""
    rng = np.random.default_rng(seed)
    region = rng.integers(0, N_GROUPS * N_PER_GROUP, n)
    nace = rng.integers(0, N_NACE2 * N_NACE3, n)
    size = rng.integers(1, 10, n)
    year = rng.integers(2019, 2024, n)
    turnover = np.round(rng.pareto(1.5, n) * 1000 + 1, 2)
    lines = np.char.add(
        np.char.add(np.char.zfill(region.astype(str), 3), np.char.zfill(nace.astype(str), 3)),
        np.char.add(np.char.rjust(size.astype(str), 2), year.astype(str)),
    )
    tv = np.char.rjust(np.char.mod("%.2f", turnover), 12)
    fixed = np.char.add(lines, tv)
    fw = folder / "survey.asc"
    # codes: region 1-3, nace 4-6, size 7-8, year 9-12, turnover 13-24
    with fw.open("w") as f:
        for chunk in range(0, n, 1_000_000):
            f.write("\n".join(fixed[chunk : chunk + 1_000_000].tolist()) + "\n")
    csvp = folder / "survey.csv"
    with csvp.open("w") as f:
        for chunk in range(0, n, 1_000_000):
            sl = slice(chunk, chunk + 1_000_000)
            rows = np.char.add(
                np.char.add(np.char.zfill(region[sl].astype(str), 3), ","),
                np.char.add(
                    np.char.add(np.char.zfill(nace[sl].astype(str), 3), ","),
                    np.char.add(
                        np.char.add(size[sl].astype(str), ","),
                        np.char.add(
                            np.char.add(year[sl].astype(str), ","),
                            np.char.mod("%.2f", turnover[sl]),
                        ),
                    ),
                ),
            )
            f.write("\n".join(rows.tolist()) + "\n")
    hrc = folder / "region.hrc"
    hrc_lines = []
    for g in range(N_GROUPS):
        hrc_lines.append(f"G{g:02d}")
        hrc_lines += [f"@{g * N_PER_GROUP + i:03d}" for i in range(N_PER_GROUP)]
    hrc.write_text("\n".join(hrc_lines) + "\n")
    region_opts = (
        ' <RECODEABLE>\n <HIERARCHICAL>\n <HIERCODELIST> "region.hrc"\n <HIERLEADSTRING> "@"\n'
    )
    nace_opts = " <RECODEABLE>\n <HIERARCHICAL>\n <HIERLEVELS> 2 1\n"
    rda_fixed = folder / "survey.rda"
    rda_fixed.write_text(
        "region 1 3\n"
        + region_opts
        + "nace 4 3\n"
        + nace_opts
        + "size 7 2 99\n <RECODEABLE>\nyear 9 4\n <RECODEABLE>\n"
        + "turnover 13 12\n <NUMERIC>\n <DECIMALS> 2\n"
    )
    rda_csv = folder / "survey_csv.rda"
    rda_csv.write_text(
        '<SEPARATOR> ","\nregion 3\n'
        + region_opts
        + "nace 3\n"
        + nace_opts
        + "size 2 99\n <RECODEABLE>\nyear 4\n <RECODEABLE>\nturnover 12\n <NUMERIC>\n <DECIMALS> 2\n"
    )
    return fw, rda_fixed, csvp, rda_csv


SPECS = [
    ("region", "nace", "size"),
    ("region", "nace", "year"),
    ("nace", "size", "year"),
]


def column_bytes(data, names) -> int:
    total = 0
    for name in names:
        col = data.column(name)
        if isinstance(col, tuple):
            total += col[0].nbytes
        else:
            total += np.asarray(col).nbytes
    return total


def run(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        fw, rda_fixed, csvp, rda_csv = write_inputs(folder, n)
        gen = time.perf_counter() - t0
        meta = read_rda(rda_fixed)
        t0 = time.perf_counter()
        data = read_microdata(meta, fw)
        t_fw = time.perf_counter() - t0
        meta_csv = read_rda(rda_csv)
        t0 = time.perf_counter()
        read_microdata(meta_csv, csvp)
        t_csv = time.perf_counter() - t0
        mb_fw = os.path.getsize(fw) / 1e6
        mb_csv = os.path.getsize(csvp) / 1e6
        rules = SafetyRules(
            nk_individual=[DominanceRule(2, 75)],
            p_individual=[PRule(15)],
            freq_individual=FreqRule(3, 20),
        )
        loaded = column_bytes(data, ["region", "nace", "size", "year", "turnover"])
        tracemalloc.start()
        t0 = time.perf_counter()
        cells = 0
        for dims in SPECS:
            table = build_table(
                meta,
                data,
                TableSpec(list(dims), "turnover", rules=rules),
                [],
                codelist_for=codelist_for,
            )
            apply_rules(table)
            cells += table.n_cells
        t_tab = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {
            "records": n,
            "generate_s": gen,
            "fixed_MB": mb_fw,
            "fixed_MB_s": mb_fw / t_fw,
            "csv_MB": mb_csv,
            "csv_MB_s": mb_csv / t_csv,
            "tabulate_s": t_tab,
            "cells": cells,
            "columns_MB": loaded / 1e6,
            "peak_MB": peak / 1e6,
            "peak_ratio": peak / loaded,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=float, nargs="+", default=[1e6, 1e7])
    args = ap.parse_args()
    cols = [
        "records",
        "fixed_MB",
        "fixed_MB_s",
        "csv_MB",
        "csv_MB_s",
        "tabulate_s",
        "cells",
        "columns_MB",
        "peak_MB",
        "peak_ratio",
    ]
    print(f"machine: {os.cpu_count()} cores")
    print(" | ".join(f"{c:>11}" for c in cols))
    for n in args.records:
        r = run(int(n))
        print(
            " | ".join(
                f"{r[c]:>11.2f}" if isinstance(r[c], float) else f"{r[c]:>11}" for c in cols
            ),
            flush=True,
        )
    print("targets: tabulation 1M < 3 s, 10M < 30 s; peak_ratio ≤ 3; fixed-width ≥ 50 MB/s")


if __name__ == "__main__":
    main()
