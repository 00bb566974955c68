"""What one click in the GUI's cell panel costs in its protected levels (session.cell_levels,
docs/design.md D-94 "### fl19"): CPU-ms per click on the sample's count table and on the
business tables b7290 and b31808 as count tables, and the first click after a status change.

Usage:
    python benchmarks/bench_cell_panel.py [--clicks 200] [--folder /tmp/cellpanel] [--surveys b7290,b31808]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from business_tables import SURVEYS, write_survey  # noqa: E402

from argusqt.batch.runner import run_batch  # noqa: E402
from argusqt.model.status import Status  # noqa: E402
from argusqt.session import cell_levels  # noqa: E402


def _session(data: Path, meta: Path, variables: str, rules: str, folder: Path):
    """The count table of `variables` read from the microdata, statuses from the rules."""
    arb = folder / f"cells_{data.stem}.arb"
    arb.write_text(
        f'<OPENMICRODATA> "{data}"\n<OPENMETADATA> "{meta}"\n'
        f'<SPECIFYTABLE> {variables}|"<freq>"||\n<SAFETYRULE> {rules}\n<READMICRODATA>\n'
    )
    out = run_batch(arb)
    assert out.ok, out.error
    return out.session.table(1)


def _clicks(table, cells: np.ndarray) -> float:
    """CPU-ms per click over `cells`."""
    t0 = time.process_time()
    for c in cells:
        cell_levels(table, int(c))
    return 1e3 * (time.process_time() - t0) / cells.size


def measure(name: str, table, clicks: int) -> None:
    rng = np.random.default_rng(0)
    cells = rng.integers(0, table.n_cells, clicks)
    per = _clicks(table, cells)
    safe = np.flatnonzero(table.status == Status.SAFE)
    c = int(safe[0])
    table.status[c] = Status.UNSAFE_MANUAL  # a manual status, as the panel's menu sets it
    t0 = time.process_time()
    after = cell_levels(table, c)
    first = 1e3 * (time.process_time() - t0)
    table.status[c] = Status.SAFE
    print(f"| {name} | {table.n_cells:,} | {per:.3f} | {first:.3f} | {after[0]:g} / {after[1]:g} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clicks", type=int, default=200)
    ap.add_argument("--folder", default="/tmp/cellpanel")
    ap.add_argument("--surveys", default="b7290,b31808")
    a = ap.parse_args()
    folder = Path(a.folder)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    print(
        "| table | cells | CPU-ms per click | first click after a status change (CPU-ms) | levels |"
    )
    print("|---|---|---|---|---|")
    sample = ROOT / "sample_data"
    t = _session(
        sample / "enterprise.asc", sample / "enterprise.rda", '"activity""region"',
        "FREQ(3,20)", folder,
    )  # fmt: skip
    measure("sample activity × region", t, a.clicks)
    for name in a.surveys.split(","):
        survey = write_survey(SURVEYS[name], folder / name)
        t = _session(
            survey / "survey.asc", survey / "survey.rda", '"act""reg""size"', "FREQ(3,20)", folder
        )
        measure(f"{name} (count)", t, a.clicks)


if __name__ == "__main__":
    main()
