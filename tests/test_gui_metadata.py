"""Metadata editor: shows every .rda attribute, validates with row/column messages, saves .rda."""

from __future__ import annotations

import shutil
from pathlib import Path

import conftest_gui  # noqa: F401
import pytest

from argusqt.gui.metadataeditor import C, MetadataEditor
from argusqt.io.rda import read_rda

pytestmark = pytest.mark.gui

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture
def meta(tmp_path):
    for f in SAMPLE.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    return read_rda(tmp_path / "enterprise.rda")


def test_grid_shows_attributes_and_round_trips(qtbot, meta, tmp_path):
    ed = MetadataEditor(meta)
    qtbot.addWidget(ed)
    assert ed.grid.rowCount() == len(meta.variables)
    names = [ed.grid.item(r, C["Name"]).text() for r in range(ed.grid.rowCount())]
    assert names == [v.name for v in meta.variables]
    r = names.index("region")
    assert ed.grid.cellWidget(r, C["Role"]).currentText() == "explanatory"
    assert ed.grid.item(r, C["Hierarchy file"]).text() == "region.hrc"
    assert ed.grid.item(r, C["Start"]).text() == "11"
    assert ed.validate() == []
    out = tmp_path / "copy.rda"
    assert ed.save_to(out)
    back = read_rda(out)
    for a, b in zip(meta.variables, back.variables, strict=True):
        assert (
            a.name,
            a.start,
            a.width,
            a.missing,
            a.recodeable,
            a.numeric,
            a.weight,
            a.holding,
        ) == (
            b.name,
            b.start,
            b.width,
            b.missing,
            b.recodeable,
            b.numeric,
            b.weight,
            b.holding,
        )
        assert (a.hier_file, a.hier_lead, a.decimals, a.codelist) == (
            b.hier_file,
            b.hier_lead,
            b.decimals,
            b.codelist,
        )


def test_validation_marks_problems(qtbot, meta, tmp_path):
    ed = MetadataEditor(meta)
    qtbot.addWidget(ed)
    ed.grid.item(1, C["Width"]).setText("0")
    ed.grid.item(2, C["Name"]).setText("activity")
    ed.grid.item(2, C["Lead string"]).setText("")
    problems = ed.validate()
    where = {(r, c) for r, c, _ in problems}
    assert (1, "Width") in where
    assert (2, "Name") in where
    assert (2, "Lead string") in where
    assert "Row 2, Width: expected a width ≥ 1" in ed.problems.text()
    assert not ed.save_to(tmp_path / "bad.rda")
    assert not (tmp_path / "bad.rda").exists()


def test_move_up_keeps_row_content(qtbot, meta):
    ed = MetadataEditor(meta)
    qtbot.addWidget(ed)
    ed.grid.setCurrentCell(2, 0)
    ed._move_up()
    assert ed.grid.item(1, C["Name"]).text() == meta.variables[2].name
    assert ed.grid.item(2, C["Name"]).text() == meta.variables[1].name
    assert ed.metadata().variables[1].recodeable == meta.variables[2].recodeable
