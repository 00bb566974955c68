"""MOD's patterns on the tables a MOD change is checked on (docs/design.md, D-63, D-67): b520,
p78, the enterprise and sample tables of bench_combined.py and the generated tables g00–g09
of opt700_tables.py. Prints per table the secondaries, the cost, a digest of the statuses
and the method's CPU seconds, so two checkouts' patterns can be compared line by line
("costs never worse", issue 26). Usage:
    python benchmarks/bench_mod_patterns.py [--tables b520,p78,sample-nk] [--generated 10]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_combined import SCENARIOS  # noqa: E402
from business_tables import RULES, SURVEYS, batch_text, write_survey  # noqa: E402
from opt700_tables import opt700_set  # noqa: E402

from argusqt.batch.runner import run_batch  # noqa: E402
from argusqt.model.status import is_secondary  # noqa: E402

#: the call of bench_vs_tauargus.py's and bench_mod_work.py's MOD runs, and bench_combined's
SURVEY_CALL = "MOD(1, 1, 1, 1, 1)"
TABLE_CALL = "MOD(1,5)"

Setup = Callable[[Path], str]  # writes the inputs into a folder, returns the batch text


def _survey(key: str) -> Setup:
    def setup(folder: Path) -> str:
        s = SURVEYS[key]
        write_survey(s, folder)
        return batch_text(
            "survey.asc", "survey.rda", s.variables, "turnover", RULES, SURVEY_CALL, "x.txt",
            "turnover",
        )  # fmt: skip

    return setup


def _scenario(src: Path, data: str, meta: str, table: str, rules: str) -> Setup:
    def setup(folder: Path) -> str:
        shutil.copytree(src, folder, dirs_exist_ok=True)
        return (
            f'<OPENMICRODATA> "{data}"\n<OPENMETADATA> "{meta}"\n<SPECIFYTABLE> {table}\n'
            f"<SAFETYRULE> {rules}\n<READMICRODATA>\n<SUPPRESS> {TABLE_CALL}\n"
        )

    return setup


def _generated(arb: str, write: Callable[[Path], None]) -> Setup:
    def setup(folder: Path) -> str:
        write(folder)
        return arb + f"<SUPPRESS> {TABLE_CALL}\n"

    return setup


def tables(generated: int) -> Iterator[tuple[str, Setup]]:
    """Every table by name, with what writes its inputs."""
    yield "b520", _survey("b520")
    yield "p78", _survey("p78")
    names = ["ent-act-product", "ent-region-product", "ent-act-region", "sample-p", "sample-nk"]
    for name, (_, src, data, meta, table, rules) in zip(names, SCENARIOS, strict=True):
        if src.is_dir():
            yield name, _scenario(src, data, meta, table, rules)
    for k, t in enumerate(opt700_set(generated, extras=False)):
        yield f"g{k:02d}", _generated(t.arb, t.setup)


def run(setup: Setup) -> tuple[int, float, str, float]:
    """Secondaries, cost (Σ |response| of the secondaries), status digest, CPU of the run."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "d"
        folder.mkdir()
        arb = folder / "job.arb"
        arb.write_text(setup(folder))
        t0 = time.process_time()
        out = run_batch(arb)
        used = time.process_time() - t0
        if not out.ok:
            raise RuntimeError(str(out.error))
        t = out.session.table(1)
        status = np.asarray(t.status)
        sec = is_secondary(status)
        cost = float(np.abs(np.asarray(t.value, dtype=float))[sec].sum())
        digest = hashlib.sha1(status.astype(np.int16).tobytes()).hexdigest()[:12]
        return int(sec.sum()), cost, digest, used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default=None, help="names (default: all)")
    ap.add_argument("--generated", type=int, default=10, help="generated tables g00…")
    args = ap.parse_args()
    wanted = None if args.tables is None else set(args.tables.split(","))
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("table | secondaries | cost | digest | CPU-s")
    for name, setup in tables(args.generated):
        if wanted is not None and name not in wanted:
            continue
        n, cost, digest, used = run(setup)
        print(f"{name} | {n} | {cost:,.2f} | {digest} | {used:.2f}", flush=True)
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
