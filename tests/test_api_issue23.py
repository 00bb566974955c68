"""Issue 23, API items: hierarchies given as a mapping or a parent/child DataFrame are used
(parents named only as parents included), a data frame's text codes stay as given (no left
padding, in tables, `.hrc` matching and Excel), a misspelt column names every column and the
nearest, and `publish()` tells a withheld cell from an empty one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import argusqt
from argusqt.errors import SpecificationError

LEAVES = ["North", "East", "South", "West", "Mid"]
MAPPING = {"North": "NE", "East": "NE", "South": "SW", "West": "SW", "Mid": None}


def _records(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "region": rng.choice(LEAVES, n),
            "sector": rng.choice(
                ["A", "B", "C", "D", "E", "F"], n, p=[0.3, 0.3, 0.2, 0.1, 0.08, 0.02]
            ),
            "sizeclass": rng.choice(["1", "2"], n),
            "turnover": rng.integers(1, 1000, n).astype(float),
        }
    )


def _protect(frame: pd.DataFrame, **kw):
    args = dict(
        explanatory=["region", "sector"],
        response="turnover",
        rules="FREQ(3,30)",
        method="OPT",
        progress=False,
    )
    return argusqt.protect(frame, **(args | kw))


def _region_sums(result) -> dict[str, float]:
    """Each region code's total over all sectors (the published table's region × Total)."""
    cells = result.to_frame()
    tot = cells[cells["sector"] == "Total"]
    return dict(zip(tot["region"].astype(str), tot["value"], strict=True))


def test_mapping_hierarchy_adds_its_parents():
    frame = _records()
    flat = _protect(frame)
    mapped = _protect(frame, hierarchies={"region": MAPPING})
    codes = list(mapped.table.dims[0].codes)
    assert codes == ["Total", "NE", "North", "East", "SW", "South", "West", "Mid"]
    assert mapped.table.n_cells == 8 * 7 > flat.table.n_cells == 6 * 7
    sums = _region_sums(mapped)
    truth = frame.groupby("region")["turnover"].sum()
    assert sums["NE"] == pytest.approx(truth["North"] + truth["East"])
    assert sums["SW"] == pytest.approx(truth["South"] + truth["West"])
    assert sums["Total"] == pytest.approx(frame["turnover"].sum())
    assert mapped.audit().ok


def test_parent_child_frame_equals_mapping():
    frame = _records()
    pairs = pd.DataFrame(
        {"parent": [p for p in MAPPING.values()], "child": list(MAPPING)}, dtype=object
    )
    by_pairs = _protect(frame, hierarchies={"region": pairs})
    by_mapping = _protect(frame, hierarchies={"region": MAPPING})
    assert list(by_pairs.table.dims[0].codes) == list(by_mapping.table.dims[0].codes)
    assert {"NE", "SW"} <= set(by_pairs.table.dims[0].codes)
    assert np.array_equal(by_pairs.table.value, by_mapping.table.value)
    assert by_pairs.publish().equals(by_mapping.publish())


def test_text_codes_of_unequal_length_match_an_hrc_and_stay_unpadded(tmp_path: Path):
    hrc = tmp_path / "region.hrc"
    hrc.write_text("NE\n@North\n@East\nSW\n@South\n@West\nMid\n", encoding="utf-8")
    frame = _records()
    result = _protect(frame, hierarchies={"region": hrc})
    codes = list(result.table.dims[0].codes)
    assert codes == ["Total", "NE", "North", "East", "SW", "South", "West", "Mid"]
    assert list(result.table.dims[1].codes) == ["Total", "A", "B", "C", "D", "E", "F"]
    xlsx = result.to_excel(tmp_path / "t.xlsx")
    cells = [c for row in openpyxl.load_workbook(xlsx).worksheets[0].iter_rows(values_only=True)
             for c in row if isinstance(c, str)]  # fmt: skip
    assert "East" in cells and "Mid" in cells
    assert not [c for c in cells if c != c.lstrip() and c.strip() in LEAVES + ["NE", "SW"]]
    # the same hierarchy given in memory: the same table
    mapped = _protect(frame, hierarchies={"region": MAPPING})
    assert np.array_equal(mapped.table.value, result.table.value)


def test_blank_padded_hrc_codes_match_the_frames_codes(tmp_path: Path):
    """An `.hrc` written for fixed-width data (` 1`) matches a frame's `1` and `10`, text or
    numbers; number codes keep their order (1 before 10)."""
    hrc = tmp_path / "size.hrc"
    hrc.write_text("S\n@ 1\n@ 2\nL\n@10\n@11\n", encoding="utf-8")
    rng = np.random.default_rng(1)
    sizes = rng.choice([1, 2, 10, 11], 300)
    for column in (sizes, sizes.astype(str)):
        frame = pd.DataFrame({"size": column, "turnover": rng.integers(1, 99, 300) * 1.0})
        result = argusqt.protect(
            frame, explanatory=["size"], response="turnover", rules="FREQ(3,30)",
            hierarchies={"size": hrc}, method="OPT", progress=False,
        )  # fmt: skip
        codes = [c.strip() for c in result.table.dims[0].codes]
        assert codes == ["Total", "S", "1", "2", "L", "10", "11"]
        assert result.table.value[0] == pytest.approx(frame["turnover"].sum())
    # flat integer codes still sort as numbers
    flat = argusqt.protect(
        frame.assign(size=sizes), explanatory=["size"], response="turnover",
        rules="FREQ(3,30)", method="OPT", progress=False,
    )  # fmt: skip
    assert [c.strip() for c in flat.table.dims[0].codes] == ["Total", "1", "2", "10", "11"]


def test_a_parent_that_is_its_own_child_is_refused():
    with pytest.raises(SpecificationError, match="cycle"):
        _protect(_records(), hierarchies={"region": {**MAPPING, "NE": "North"}})


def test_misspelt_column_lists_every_column_and_the_nearest():
    frame = _records()
    with pytest.raises(SpecificationError) as err:
        _protect(frame, explanatory=["regoin", "sector"])
    text = str(err.value)
    assert "'regoin' not found" in text and "did you mean 'region'" in text
    assert "it has: region, sector, sizeclass, turnover" in text
    with pytest.raises(SpecificationError, match="did you mean 'region'.*it has: region, sector"):
        argusqt.protect(
            frame, explanatory=["Region"], response="turnover", rules="FREQ(3,30)",
            method="OPT", progress=False,
        )  # fmt: skip


def test_publish_flags_withheld_and_empty_cells():
    frame = _records()
    frame = frame[~((frame["region"] == "Mid") & (frame["sector"] == "F"))]  # an empty cell
    result = _protect(frame, hierarchies={"region": MAPPING})
    cells, safe = result.to_frame(), result.publish()
    status = cells["status"].astype(str).to_numpy()
    empty = status == "empty"
    suppressed = np.isin(status, ["unsafe_frequency", "secondary", "unsafe_rule"])
    assert empty.sum() >= 1 and suppressed.sum() >= 1
    flag = safe["flag"].astype(str).to_numpy()
    assert np.array_equal(flag == "-", empty)
    assert np.array_equal(flag == "x", suppressed)
    assert np.array_equal(flag == "", ~(empty | suppressed))
    assert np.array_equal(safe["value"].isna().to_numpy(), empty | suppressed)
    # status-free: the flag never tells a primary from a secondary cell
    assert set(safe["flag"].cat.categories) == {"", "x", "-"}
    assert "status" not in safe


def test_mapping_hierarchy_survives_the_batch_file_and_the_session(tmp_path: Path):
    """The codes as given and the in-memory hierarchy are written beside the batch file and
    session (fixed-width data + `.hrc`), and read back to the same table and statuses."""
    from argusqt.batch.runner import run_batch

    result = _protect(_records(), hierarchies={"region": MAPPING})
    result.write_batch_file(tmp_path / "job.arb")
    out = run_batch(tmp_path / "job.arb")
    assert out.ok, out.error
    again = out.session.tables[0]
    assert list(again.dims[0].codes) == list(result.table.dims[0].codes)
    assert np.array_equal(again.status, result.table.status)
    assert np.allclose(again.value, result.table.value)
    assert (tmp_path / "job_data_region.hrc").read_text().split() == [
        "NE", "@North", "@East", "SW", "@South", "@West", "Mid",
    ]  # fmt: skip
    result.save_session(tmp_path / "work.aqs")
    reopened = argusqt.open_session(tmp_path / "work.aqs")
    assert np.array_equal(reopened.table.status, result.table.status)
