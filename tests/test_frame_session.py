"""A session opened from a data frame (Python API) is saved as a session file and a batch
file: its microdata is written beside them (fixed width + generated `.rda`), and reopening
the session or running the batch gives the same tables, statuses and protection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from confidential_helpers import assert_marked

import argusqt
from argusqt.batch.render import write_batch_file
from argusqt.io.framefiles import frame_file_paths, write_microdata_files
from argusqt.io.frames import Roles, read_frame, tree_from_pairs
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.table import CostSpec, TableSpec
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.sessionfile import load_session, save_session

ROOT = Path(__file__).resolve().parents[1]
REGIONS = {"N": None, "N1": "N", "N2": "N", "S": None, "S1": "S", "S2": "S", "S3": "S"}


def _records(n: int = 1500, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    leaves = ["N1", "N2", "S1", "S2", "S3"]
    return pd.DataFrame(
        {
            "region": rng.choice(leaves, n, p=[0.3, 0.02, 0.3, 0.3, 0.08]),
            "size": rng.choice(["1", "2", "10", "Zürich"], n),  # widths differ, one non-ASCII
            # awkward floats: 17 significant digits, tiny and huge magnitudes
            "turnover": rng.lognormal(6, 2, n) * (1 + 1e-13) + rng.choice([0, 1e-7, 3e5], n),
            "weight": rng.uniform(1, 3, n),
        }
    )


def _roles() -> Roles:
    roles = Roles(explanatory=["region", "size"], numeric=["turnover"], weight="weight")
    roles.trees["region"] = tree_from_pairs(list(REGIONS.items()), "region")
    roles.labels["region"] = {"N": "North, with a comma", "S": "South"}
    return roles


def _worked(frame) -> Session:
    """Frame → table → rules → a manual change → protect, as a statistician would."""
    s = Session()
    s.open_microdata_frame(frame, _roles())
    s.specify_table(TableSpec(["region", "size"], "turnover", None, CostSpec("variable")))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(5,20)"))
    s.compute_tables()
    t = s.table(1)
    s.set_cost(1, np.flatnonzero(t.status == 1)[:1], 123.0)
    s.protect(1, "HEUR")
    assert s.protection_state(1) == "cleared"  # the method's publication audit passed
    return s


def _same_tables(a: Session, b: Session) -> None:
    ta, tb = a.table(1), b.table(1)
    assert [d.codes for d in ta.dims] == [d.codes for d in tb.dims]
    # records are written exactly (test_written_microdata_reads_back_exactly); a total sums
    # its cells in category order, which differs between a frame and a file: last bits only
    assert np.allclose(ta.value, tb.value, rtol=1e-13, atol=0)
    assert np.array_equal(ta.freq, tb.freq)
    assert np.array_equal(ta.status, tb.status)
    assert np.array_equal(ta.lpl, tb.lpl) and np.array_equal(ta.upl, tb.upl)
    assert np.array_equal(ta.cost, tb.cost)
    # reopened: audited again on loading; the publication gate audits before any export
    assert b.protection_state(1) in ("cleared", "protected")


def test_frame_session_saves_its_data_and_reopens_the_same(tmp_path):
    s = _worked(_records())
    target = tmp_path / "work.aqs"
    save_session(s, target)
    data, rda = frame_file_paths(target)
    assert data.name == "work_data.asc" and rda.name == "work_data.rda"
    assert {p.name for p in tmp_path.iterdir()} == {
        "work.aqs", "work_data.asc", "work_data.rda", "work_data_region.hrc",
        "work_data_region.cdl",
    }  # fmt: skip
    message = next(str(e) for e in reversed(s.log) if "data frame written" in str(e))
    assert str(data) in message and rda.name in message  # the message names the files
    assert "CONFIDENTIAL" in message
    assert rda.read_text(encoding="utf-8").startswith("// CONFIDENTIAL — not for publication")
    again = load_session(target)  # a fresh Session
    _same_tables(s, again)
    assert again.table(1).dims[0].labels.get("N") == "North, with a comma"
    assert again.table(1).audit is not None and again.table(1).audit.ok
    # the API's door does the same
    reopened = argusqt.open_session(target, progress=False)
    assert np.array_equal(reopened.table.status, s.table(1).status)
    assert reopened.publish()["value"].isna().sum() > 0


def test_frame_session_batch_file_runs_to_the_same_statuses(tmp_path):
    s = _worked(_records())
    mine = tmp_path / "mine.csv"
    s.write_table(1, 3, "AS+", mine)  # code-value with statuses: the batch writes it again
    (tmp_path / "run").mkdir()
    arb = tmp_path / "run" / "job.arb"
    ours = mine.read_text(encoding="utf-8").splitlines()
    mine.unlink()  # the batch writes it again, where the session wrote it
    written = write_batch_file(s, arb)
    assert [p.name for p in written[:2]] == ["job_data.asc", "job_data.rda"]
    text = arb.read_text()
    assert '<OPENMICRODATA> "job_data.asc"' in text and '<OPENMETADATA> "job_data.rda"' in text
    proc = subprocess.run(
        [sys.executable, "-m", "argusqt", "batch", str(arb)],
        cwd=tmp_path / "run", capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    theirs = mine.read_text(encoding="utf-8").splitlines()
    assert_marked(mine)  # the sidecar, written again by the batch
    assert len(ours) == s.table(1).n_cells
    assert ours == theirs  # same cells, values and statuses (the last column)
    assert sum(line.endswith(",11") for line in ours) > 0  # secondaries, from the batch too


def test_parquet_in_chunks_saves_and_reopens(tmp_path, monkeypatch):
    """A Parquet file large enough to be read in chunks: the data written chunk by chunk."""
    import argusqt.io.frames as frames

    monkeypatch.setattr(frames, "CHUNK_RECORDS", 400)
    _records().to_parquet(tmp_path / "in.parquet", row_group_size=300)
    s = _worked(tmp_path / "in.parquet")
    assert isinstance(s.microdata, frames.ChunkedMicroData)
    save_session(s, tmp_path / "big.aqs")
    _same_tables(s, load_session(tmp_path / "big.aqs"))


def test_written_microdata_reads_back_exactly(tmp_path):
    """Every float64 and every code (non-ASCII, different lengths) reads back the same."""
    frame = _records(4000, seed=9)
    rng = np.random.default_rng(2)
    frame["turnover"] = rng.normal(size=4000) * 10.0 ** rng.integers(-12, 18, 4000)
    meta, micro = read_frame(frame, _roles())
    files = write_microdata_files(meta, micro, tmp_path / "x.aqs")
    back = read_microdata(read_rda(files[1]), files[0])
    for name in ("region", "size"):
        a, b = micro.codes(name), back.codes(name)
        assert np.array_equal(np.asarray(a.categories)[a.codes], np.asarray(b.categories)[b.codes])
    for name in ("turnover", "weight"):
        assert np.array_equal(micro.values(name), back.values(name))


def test_unsaveable_frame_session_writes_nothing(tmp_path):
    """The session-file builder refuses to name a data frame it has not written."""
    from argusqt.errors import ArgusError
    from argusqt.sessionfile import session_to_dict

    s = Session()
    s.open_microdata_frame(_records(50), _roles())
    with pytest.raises(ArgusError, match="data frame"):
        session_to_dict(s, tmp_path / "x.aqs")
    assert not any(tmp_path.iterdir())


def test_api_protection_saves_and_reopens(tmp_path):
    """`argusqt.protect(frame, …).save_session(path)` and `argusqt.open_session(path)`."""
    frame = _records()
    done = argusqt.protect(
        frame, explanatory=["region", "size"], response="turnover", rules="P(15,1)",
        hierarchies={"region": REGIONS}, method="HEUR", progress=False,
    )  # fmt: skip
    done.save_session(tmp_path / "api.aqs")
    again = argusqt.open_session(tmp_path / "api.aqs", progress=False)
    assert np.array_equal(again.table.status, done.table.status)
    assert again.n_secondary == done.n_secondary > 0
    assert again.publish()["value"].isna().sum() == done.publish()["value"].isna().sum()
    files = done.write_batch_file(tmp_path / "api.arb")
    assert files[-1].name == "api.arb" and files[0].name == "api_data.asc"


def test_ready_table_from_a_frame_saves_and_reopens(tmp_path):
    """`protect(table=frame)` reads the table through files in a temporary folder: saving
    writes them beside the session (and batch) file, so the temporary folder may go."""
    import shutil

    from argusqt.batch.runner import run_batch

    records = _records()
    leaves = (
        records.groupby(["region", "size"])
        .agg(value=("turnover", "sum"), freq=("turnover", "size"))
        .reset_index()
    )
    done = argusqt.protect(
        table=leaves, explanatory=["region", "size"], response="value", freq="freq",
        hierarchies={"region": REGIONS}, labels={"region": {"N": "North", "S": "South"}},
        decimals={"value": 6}, rules="FREQ(40,20)", method="HEUR", progress=False,
    )  # fmt: skip
    assert done.n_primary > 0 and done.n_secondary > 0
    done.save_session(tmp_path / "t.aqs")
    assert {p.name for p in tmp_path.iterdir()} >= {"t.aqs", "t_table.tab", "t_table.rda"}
    head = (tmp_path / "t_table.rda").read_text(encoding="utf-8").splitlines()[0]
    assert head.startswith("// CONFIDENTIAL — not for publication")
    (tmp_path / "run").mkdir()
    files = done.write_batch_file(tmp_path / "run" / "t.arb")
    shutil.rmtree(done.session.sources[0].tab_path.parent)  # the API's temporary folder
    again = argusqt.open_session(tmp_path / "t.aqs", progress=False)
    assert np.array_equal(again.table.status, done.table.status)
    assert [d.codes for d in again.table.dims] == [d.codes for d in done.table.dims]
    assert again.table.dims[0].labels.get("N") == "North"
    assert {"t_table.tab", "t_table.rda", "t.arb"} <= {p.name for p in files}
    assert '<OPENTABLEDATA> "t_table.tab"' in (tmp_path / "run" / "t.arb").read_text()
    outcome = run_batch(tmp_path / "run" / "t.arb")
    assert outcome.ok, outcome.error
    assert np.array_equal(outcome.session.table(1).status, done.table.status)
