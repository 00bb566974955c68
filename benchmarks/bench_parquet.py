"""Tabulation of large Parquet microdata: time and peak memory (issue 11).

Generates (once, if absent) a Parquet file of N synthetic business records — region (2-level
hierarchy by digits), activity (3-level digit hierarchy), size class, year, turnover,
employees, weight — then opens it through the Python API's door (`Session.open_microdata_frame`,
pyarrow record batches) and computes 3 tables, printing the time of each step and the peak
resident memory (ru_maxrss) of the process. A second part (`--compare N`) measures reading the
needed columns of a smaller file through pyarrow and, when installed, DuckDB.

    python benchmarks/bench_parquet.py --records 100_000_000 --path /tmp/bench_100m.parquet

The file is large (≈ 1.3 GB for 100M records): put it under /tmp and delete it afterwards.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

ROW_GROUP = 2_000_000


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def generate(path: Path, n: int, seed: int = 11) -> None:
    """N records in row groups of 2M (never all in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    regions = np.array([f"{a}{b}" for a in range(1, 10) for b in range(1, 6)])  # 45 codes
    acts = np.array([f"{a:02d}{b}{c}" for a in range(1, 21) for b in range(5) for c in range(4)])
    sizes = np.array([str(s) for s in range(1, 10)])
    tmp = path.with_suffix(".part")
    schema = pa.schema(
        [
            ("region", pa.dictionary(pa.int16(), pa.string())),
            ("activity", pa.dictionary(pa.int16(), pa.string())),
            ("size", pa.dictionary(pa.int8(), pa.string())),
            ("year", pa.int16()),
            ("turnover", pa.float64()),
            ("employees", pa.float64()),
            ("weight", pa.float64()),
        ]
    )
    with pq.ParquetWriter(tmp, schema, compression="snappy") as writer:
        done = 0
        while done < n:
            m = min(ROW_GROUP, n - done)
            size = rng.integers(0, 9, m)
            batch = pa.record_batch(
                [
                    pa.DictionaryArray.from_arrays(
                        rng.integers(0, len(regions), m).astype(np.int16), pa.array(regions)
                    ),
                    pa.DictionaryArray.from_arrays(
                        rng.zipf(1.3, m).clip(1, len(acts)).astype(np.int16) - 1, pa.array(acts)
                    ),
                    pa.DictionaryArray.from_arrays(size.astype(np.int8), pa.array(sizes)),
                    pa.array(rng.integers(2020, 2025, m).astype(np.int16)),
                    pa.array(np.round(rng.lognormal(4 + size, 1.2, m), 2)),
                    pa.array(rng.integers(1, 50, m).astype(float) * (size + 1)),
                    pa.array(np.round(rng.uniform(1.0, 30.0, m), 1)),
                ],
                schema=schema,
            )
            writer.write_batch(batch, row_group_size=ROW_GROUP)
            done += m
    os.replace(tmp, path)


def tabulate(path: Path) -> None:
    from argusqt.io.frames import Roles
    from argusqt.model.table import TableSpec
    from argusqt.rules.parse import parse_safety_rule
    from argusqt.session import Session

    roles = Roles(
        explanatory=["region", "activity", "size", "year"],
        numeric=["turnover", "employees"],
        weight="weight",
        levels={"region": [1, 1], "activity": [2, 1, 1]},
        decimals={"turnover": 2, "employees": 0},
    )
    specs = [
        TableSpec(["activity", "size"], "turnover", rules=parse_safety_rule("P(15,1)|FREQ(3,30)")),
        TableSpec(["region", "size", "year"], "employees", rules=parse_safety_rule("NK(3,75)")),
        TableSpec(["region", "activity"], "turnover", rules=parse_safety_rule("P(10,1)|WGT(1)")),
    ]
    s = Session()
    t0 = time.perf_counter()
    s.open_microdata_frame(path, roles)
    t1 = time.perf_counter()
    rss_open = peak_rss_mib()
    for spec in specs:
        s.specify_table(spec)
        s.set_safety_rules(spec.rules)
    tables = s.compute_tables()
    t2 = time.perf_counter()
    n = s.microdata.n_records
    kind = type(s.microdata).__name__
    print(f"records {n:,} ({kind}), file {path.stat().st_size / 2**30:.2f} GiB")
    print(f"{'step':<44} {'seconds':>8} {'peak RSS MiB':>13}")
    print(f"{'open (codes learnt, every value checked)':<44} {t1 - t0:8.1f} {rss_open:13.0f}")
    print(f"{'compute 3 tables (one pass, chunked)':<44} {t2 - t1:8.1f} {peak_rss_mib():13.0f}")
    print(f"{'total':<44} {t2 - t0:8.1f} {peak_rss_mib():13.0f}")
    for t in tables:
        unsafe = int(((t.status >= 3) & (t.status <= 9)).sum())
        print(f"  {t.name}: {t.n_cells} cells, {unsafe} primary, total {t.value[0]:,.0f}")
    full = n * (4 * 4 + 3 * 8) / 2**20
    print(f"(the needed columns fully in memory would take ≈ {full:,.0f} MiB)")


def compare(path: Path) -> None:
    """Reading the needed columns as category ids + float64: pyarrow batches vs DuckDB."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    cols = ["region", "activity", "size", "turnover"]
    t0 = time.perf_counter()
    n = 0
    for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(ROW_GROUP, columns=cols):
        for c in cols[:3]:
            col = batch.column(c)
            if not str(col.type).startswith("dictionary"):
                col = pc.dictionary_encode(col)
            col.indices.to_numpy(zero_copy_only=False)
        batch.column("turnover").to_numpy(zero_copy_only=False)
        n += batch.num_rows
    print(f"pyarrow iter_batches + dictionary codes: {time.perf_counter() - t0:.1f} s ({n:,})")
    try:
        import duckdb
    except ImportError:
        print("duckdb not installed: no comparison")
        return
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    rel = con.sql(f"SELECT {', '.join(cols)} FROM read_parquet('{path}')")
    reader = rel.to_arrow_reader(ROW_GROUP)
    m = 0
    for batch in reader:
        for c in cols[:3]:
            pc.dictionary_encode(batch.column(c)).indices.to_numpy(zero_copy_only=False)
        batch.column("turnover").to_numpy(zero_copy_only=False)
        m += batch.num_rows
    print(f"duckdb record batches + dictionary codes: {time.perf_counter() - t0:.1f} s ({m:,})")
    t0 = time.perf_counter()
    con.execute(
        f"SELECT region, activity, size, count(*), sum(turnover), max(turnover) "
        f"FROM read_parquet('{path}') GROUP BY ALL"
    ).fetchall()
    print(f"duckdb GROUP BY (fine cells only, no top-K): {time.perf_counter() - t0:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--path", type=Path, default=Path("/tmp/argusqt_bench.parquet"))
    ap.add_argument("--compare", action="store_true", help="pyarrow vs DuckDB reading only")
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        generate(args.path, args.records)
        return
    made = False
    if not args.path.exists():  # in a child process: its memory is not this one's peak RSS
        import subprocess

        t0 = time.perf_counter()
        cmd = [sys.executable, __file__, "--generate-only", "--records", str(args.records)]
        subprocess.run([*cmd, "--path", str(args.path)], check=True)
        made = True
        print(f"generated {args.records:,} records in {time.perf_counter() - t0:.0f} s")
    print(f"load: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} cores")
    try:
        if args.compare:
            compare(args.path)
        else:
            tabulate(args.path)
    finally:
        if made and not args.keep:
            args.path.unlink()


if __name__ == "__main__":
    main()
