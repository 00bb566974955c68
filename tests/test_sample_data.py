"""Sample data: the generator reproduces the committed files; they parse and tabulate."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from confidential_helpers import body_lines

from argusqt.io.rda import read_rda

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "make_sample_data", ROOT / "scripts" / "make_sample_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _asc_columns(path: Path) -> dict[str, np.ndarray]:
    lines = np.array(path.read_bytes().splitlines())
    chars = lines.astype("S40").view("S1").reshape(len(lines), 40)

    def field(start: int, width: int) -> np.ndarray:
        return chars[:, start - 1 : start - 1 + width].copy().view(f"S{width}").ravel()

    return {
        "holding": field(1, 6).astype(str),
        "activity": field(8, 2).astype(str),
        "region": field(11, 2).astype(str),
        "size": field(14, 1).astype(str),
        "employees": field(16, 6).astype(float),
        "turnover": field(23, 12).astype(float),
        "weight": field(36, 5).astype(float),
    }


def test_generator_reproduces_committed_files(tmp_path):
    gen = _generator()
    paths = gen.write_sample_data(tmp_path)
    assert {p.name for p in paths} == {
        "enterprise.asc",
        "enterprise.rda",
        "activity.hrc",
        "activity.cdl",
        "region.hrc",
        "region.cdl",
        "size.cdl",
        "size3.grc",
        "size3.cdl",
        "demo.arb",
        "README.md",
        ".gitignore",
    }
    for p in paths:
        committed = SAMPLE / p.name
        assert committed.read_bytes() == p.read_bytes(), f"{p.name} differs: rerun the script"
    assert sum(p.stat().st_size for p in paths) < 2_000_000


def test_microdata_shape_and_plausibility():
    cols = _asc_columns(SAMPLE / "enterprise.asc")
    n = cols["turnover"].shape[0]
    assert n == 20_000
    # holdings are contiguous: an id never comes back after another id
    h = cols["holding"]
    starts = np.r_[True, h[1:] != h[:-1]]
    assert np.unique(h).size == starts.sum()
    assert (np.bincount(np.cumsum(starts) - 1) > 1).any()  # some real groups
    assert set(np.unique(cols["size"])) == {"1", "2", "3", "4", "5", "6", "9"}
    assert (cols["size"] == "9").mean() == pytest.approx(0.02, abs=0.005)
    assert (cols["region"] == "99").sum() > 0
    t = cols["turnover"]
    assert (t > 0).all() and t.max() > 50 * np.median(t)  # skewed
    assert np.allclose(t * 100, np.round(t * 100))  # 2 decimals
    big = cols["employees"] >= 50
    assert (cols["weight"][big] == 1.0).all() and (cols["weight"][~big] >= 2.0).all()


def test_metadata_parses():
    meta = read_rda(SAMPLE / "enterprise.rda")
    names = [v.name for v in meta.variables]
    assert names == ["holding", "activity", "region", "size", "employees", "turnover", "weight"]
    act = meta.variable("activity")
    assert act.recodeable and act.hierarchical and act.hier_file == "activity.hrc"
    assert (act.start, act.width, act.missing) == (8, 2, ["99"])
    assert meta.variable("size").missing == ["9"]
    assert meta.variable("turnover").decimals == 2 and meta.variable("turnover").numeric
    assert meta.variable("weight").weight and meta.variable("holding").holding


def test_batch_tabulates_and_recodes(tmp_path):
    """The demo's tables via the batch runner (no protection): totals equal the record sums."""
    from argusqt.batch.runner import run_batch

    for p in SAMPLE.iterdir():
        if p.is_file():
            shutil.copy(p, tmp_path / p.name)
    arb = tmp_path / "check.arb"
    arb.write_text(
        '<OPENMICRODATA> "enterprise.asc"\n<OPENMETADATA> "enterprise.rda"\n'
        '<SPECIFYTABLE> "activity""region"|"turnover"||\n<SAFETYRULE> P(15,1)|FREQ(3,20)\n'
        '<SPECIFYTABLE> "activity""size"|"turnover"||\n<SAFETYRULE> NK(3,75)|FREQ(3,20)\n'
        '<READMICRODATA>\n<RECODE> 2, size, "size3.grc"\n'
        '<WRITETABLE> (2, 3, AS+FL+, "t2.txt")\n'
        '<WRITETABLE> (1, 1, QU+, "t1.xlsx")\n'
    )
    # table 1 has unprotected primaries: the published workbook is refused, naming cells
    refused = run_batch(arb, logbook=tmp_path / "log0.txt")
    assert refused.exit_code != 0 and refused.error.line == 10
    assert "has not been protected" in str(refused.error) and "activity=" in str(refused.error)
    assert not (tmp_path / "t1.xlsx").exists()
    text = arb.read_text().replace('(1, 1, QU+, "t1.xlsx")', '(1, 1, AS+QU+, "t1.xlsx")')
    arb.write_text(text)  # asked for explicitly: the confidential workbook
    outcome = run_batch(arb, logbook=tmp_path / "log.txt")
    outcome.raise_for_error()
    t1, t2 = outcome.session.tables
    cols = _asc_columns(tmp_path / "enterprise.asc")
    assert t1.value[0] == pytest.approx(cols["turnover"].sum())
    assert t1.dims[1].codes[:5] == ["Total", "N", "01", "02", "03"]
    assert t1.dims[1].codes[-1] == "99"
    assert t2.dims[1].codes == ["Total", "1", "2", "3", "9"]
    assert t2.dims[1].label(1) == "small (0-9)"
    by_size = t2.value.reshape(t2.shape)[0]
    small = np.isin(cols["size"], ["1", "2"])
    assert by_size[1] == pytest.approx(cols["turnover"][small].sum())
    assert by_size[4] == pytest.approx(cols["turnover"][cols["size"] == "9"].sum())
    assert (t1.status == 3).any() and (t2.status == 3).any()  # the rules find unsafe cells
    lines = body_lines(tmp_path / "t2.txt")  # after its CONFIDENTIAL line
    assert lines[0].startswith('"activity","size","turnover"')
    assert len(lines) == 1 + t2.n_cells
    wb = openpyxl.load_workbook(tmp_path / "t1_CONFIDENTIAL.xlsx")
    assert not (tmp_path / "t1.xlsx").exists()
    assert wb.sheetnames == ["table", "cells", "report"]
    ws = wb["table"]
    assert ws["A1"].value == "CONFIDENTIAL — not for publication"
    assert ws.cell(7, 1).value == "Total" and ws.cell(7, 3).value == pytest.approx(t1.value[0])
