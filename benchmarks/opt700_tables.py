"""Issue 26's OPT set: 2-D hierarchical tables of 500–900 cells like the AEAT's (seed 003),
as τ-Argus input files, plus the case `opt_bound_805` and the sample table.

Each generated table is a synthetic business survey (business_tables.Survey: activity ×
region, two-level hierarchies, skewed log-normal turnover) with p%(15,1) + FREQ(3,30) and
cost = turnover; the shapes and record counts below give 8–19 % primaries. Everything is
drawn from one seed, so the set is the same on every machine.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from business_tables import RULES, Survey, batch_text, write_survey

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASE_805 = ROOT.parent / "shared" / "data" / "cases" / "opt_bound_805"
SAMPLE = ROOT / "sample_data"
#: seed of the whole set (shapes, skews, records)
SET_SEED = 2611
#: tables in the generated set
SET_SIZE = 32
CELLS = (500, 900)
#: share of primaries of a generated table
SHARE = (0.08, 0.19)


@dataclass(frozen=True)
class Opt700Table:
    """One table of the set: how to lay out its input files and the batch lines that read it."""

    name: str
    setup: Callable[[Path], None]
    arb: str  # <OPENMICRODATA> … <READMICRODATA>, no SUPPRESS, no WRITETABLE


def _children(rng: np.random.Generator) -> tuple[int, ...]:
    """Level-2 children per level-1 node: 4–10 nodes of 2–6 children (uneven, like NACE;
    many small groups give about 0.5 equations per cell, as in the AEAT's tables)."""
    k = int(rng.integers(4, 11))
    return tuple(int(c) for c in rng.integers(2, 7, size=k))


def _cells(act: tuple[int, ...], reg: tuple[int, ...]) -> int:
    return (1 + len(act) + sum(act)) * (1 + len(reg) + sum(reg))


def read_problem(t: Opt700Table, folder: Path):  # type: ignore[no-untyped-def]
    """The table laid out in `folder` and read through the batch runner, as OPT sees it:
    its CSP problem with the posed statuses."""
    from argusqt.batch.runner import run_batch
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.rules.changes import posed_status
    from argusqt.session import Session

    t.setup(folder)
    (folder / "read.arb").write_text(t.arb)
    session = Session()
    run_batch(folder / "read.arb", session=session)
    table = session.table(1)
    return CSPProblem.from_table(table, status=posed_status(table))


def primary_share(survey: Survey) -> tuple[int, int]:
    """(cells, primaries) of the survey's 2-D table under its rules, tabulated by argusqt."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        problem = read_problem(_generated(survey), Path(tmp))
    return int(problem.n_cells), int(problem.primary.sum())


def surveys(n: int = SET_SIZE, seed: int = SET_SEED) -> list[Survey]:
    """`n` surveys of 500–900 cells in a 2-D table with 8–19 % primaries, deterministic.

    Shapes, records per leaf cell (8–24, Zipf-skewed categories) and log-sd of turnover
    (1.3–1.7) are drawn from `seed`; a draw whose share of primaries under p%(15,1) +
    FREQ(3,30) falls outside 8–19 % is drawn again (argusqt tabulates it: about 0.1 s).
    """
    rng = np.random.default_rng(seed)
    out: list[Survey] = []
    while len(out) < n:
        act, reg = _children(rng), _children(rng)
        cells = _cells(act, reg)
        if not CELLS[0] <= cells <= CELLS[1]:
            continue
        leaves = sum(act) * sum(reg)
        records = int(leaves * rng.uniform(30.0, 110.0))
        sigma = float(np.round(rng.uniform(1.9, 2.4), 2))
        skew = float(np.round(rng.uniform(0.6, 1.2), 2))
        sub = int(rng.integers(1, 10**6))
        s = Survey(f"g{len(out):02d}", act, reg, 0, records, sub, sigma, skew)
        n_cells, n_prim = primary_share(s)
        if SHARE[0] <= n_prim / n_cells <= SHARE[1]:
            out.append(s)
    return out


def _generated(s: Survey) -> Opt700Table:
    arb = batch_text("survey.asc", "survey.rda", s.variables, "turnover", RULES, None, "x.txt",
                     cost="turnover")  # fmt: skip
    arb = "".join(line + "\n" for line in arb.splitlines() if "WRITETABLE" not in line)
    return Opt700Table(f"{s.name} ({s.n_cells})", lambda f: write_survey(s, f) and None, arb)


def _copy(src: Path) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        if not src.is_dir():
            raise FileNotFoundError(f"input folder not found: {src}")
        folder.mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():
            if f.is_file() and f.suffix != ".arb":
                shutil.copyfile(f, folder / f.name)

    return setup


def case_805() -> Opt700Table:
    """The outside testers' 805-cell case (activity × region, P(15,1)|FREQ(3,30), 89 primaries)."""
    lines = (CASE_805 / "opt.arb").read_text().splitlines() if CASE_805.is_dir() else []
    arb = "".join(line + "\n" for line in lines if line.startswith("<") and
                  not line.startswith(("<SUPPRESS>", "<WRITETABLE>")))  # fmt: skip
    return Opt700Table("opt_bound_805", _copy(CASE_805), arb)


def sample_table() -> Opt700Table:
    """demo.arb's table 1: activity × region | turnover, P(15,1)|FREQ(3,20)|MAN(20), 738 cells."""
    arb = (
        '<OPENMICRODATA> "enterprise.asc"\n<OPENMETADATA> "enterprise.rda"\n'
        '<SPECIFYTABLE> "activity""region"|"turnover"||\n'
        "<SAFETYRULE> P(15,1)|FREQ(3,20)|MAN(20)\n<READMICRODATA>\n"
    )
    return Opt700Table("sample (738)", _copy(SAMPLE), arb)


def opt700_set(n: int = SET_SIZE, extras: bool = True) -> list[Opt700Table]:
    """The generated tables, then (with `extras`) the 805-cell case and the sample table."""
    out = [_generated(s) for s in surveys(n)]
    if extras:
        if CASE_805.is_dir():
            out.append(case_805())
        out.append(sample_table())
    return out
