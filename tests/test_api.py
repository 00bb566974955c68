"""The Python API (`argusqt.protect`): the README example runs, DataFrame / Parquet / τ-Argus
files agree, rules and parameters are checked, chunked tabulation equals in-memory."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from confidential_helpers import assert_marked
from shared_paths import tauargus_dir

import argusqt
from argusqt.errors import InputError, ParameterError, PublicationError, SpecificationError

ROOT = Path(__file__).resolve().parents[1]
COLS = dict(
    header=None,
    colspecs=[(0, 2), (8, 10), (11, 13), (14, 18), (27, 37)],
    names=["Year", "Size", "Region", "Wgt", "Var2"],
    dtype={"Year": str, "Size": str, "Region": str},
)


@pytest.fixture(scope="module")
def testw() -> Path:
    return tauargus_dir() / "tau_testW"


@pytest.fixture(scope="module")
def records(testw) -> pd.DataFrame:
    return pd.read_fwf(testw / "tau_testW.asc", **COLS)


def _protect(data, testw, **kw):
    args = dict(
        explanatory=["Size", "Region"],
        response="Var2",
        hierarchies={"Region": testw / "region2.hrc"},
        rules="P(15,1)",
        method="OPT",
        progress=False,
    )
    return argusqt.protect(data, **(args | kw))


# ---------------------------------------------------------------------------- README
def test_readme_python_example_runs():
    tauargus_dir()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "9 primary and" in proc.stdout
    assert "unknown parameter 'max_minute'" in proc.stdout


def test_import_argusqt_is_light():
    code = (
        "import sys, argusqt; heavy = [m for m in ('pandas', 'PySide6', 'pyscipopt', "
        "'highspy', 'pyarrow', 'scipy') if m in sys.modules]; print(heavy)"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    assert callable(argusqt.protect) and "protect" in dir(argusqt)


# ---------------------------------------------------------------------------- tau_testW
def test_dataframe_tau_testw_p15_opt(records, testw):
    result = _protect(records, testw, labels={"Region": testw / "region.cdl"})
    assert result.n_primary == 9
    assert result.audit().ok
    cells = result.to_frame()
    assert cells.attrs["confidential"]
    assert list(cells["status"].cat.categories)[:3] == ["safe", "safe_manual", "unsafe_rule"]
    assert (cells["status"] == "unsafe_rule").sum() == 9
    safe = result.publish()
    hidden = cells["status"].isin(["unsafe_rule", "secondary", "empty"]).to_numpy()
    assert np.array_equal(safe["value"].isna().to_numpy(), hidden)
    shown = ~hidden
    assert np.allclose(safe["value"].to_numpy()[shown].astype(float), cells["value"][shown])
    assert "value" in safe and "freq" not in safe and "status" not in safe
    total = safe[(safe["Size"] == "Total") & (safe["Region"] == "Total")]
    assert float(total["value"].iloc[0]) == pytest.approx(16847646.84)
    assert set(safe["Region_label"]) >= {"Groningen", "North"}


def test_dataframe_equals_tau_argus_files(records, testw):
    from_files = argusqt.protect(
        testw / "tau_testW.asc",
        metadata=testw / "tau_testW.rda",
        explanatory=["Size", "Region"],
        response="Var2",
        rules="P(15,1)",
        method="OPT",
        progress=False,
    )
    from_frame = _protect(records, testw)
    # the .rda declares the missing code 99 (no records): the files' table has those cells too
    a, b = from_files.to_frame(), from_frame.to_frame()
    both = a.merge(b, on=["Size", "Region"], suffixes=("_rda", "_frame"))
    assert len(both) == len(b) and set(a["Region"]) - set(b["Region"]) == {"99"}
    assert (a[a["Region"] == "99"]["freq"] == 0).all()
    assert np.allclose(both["value_rda"], both["value_frame"])
    assert (both["freq_rda"] == both["freq_frame"]).all()
    primary = [both[f"status_{k}"].astype(str).str.startswith("unsafe") for k in ("rda", "frame")]
    assert (primary[0] == primary[1]).all() and primary[1].sum() == 9


def test_parquet_and_csv_give_the_same_table(records, testw, tmp_path):
    frame = _protect(records, testw)
    records.to_parquet(tmp_path / "w.parquet")
    records.to_csv(tmp_path / "w.csv", index=False)
    for path in (tmp_path / "w.parquet", tmp_path / "w.csv"):
        other = _protect(path, testw)
        assert other.n_primary == 9
        assert np.allclose(other.table.value, frame.table.value)
        assert np.array_equal(other.table.top, frame.table.top)
        assert other.publish()["value"].isna().sum() == frame.publish()["value"].isna().sum()


def test_unknown_parameter_and_method_are_clear_errors(records, testw):
    with pytest.raises(ParameterError, match=r"unknown parameter 'max_minute' \(did you mean"):
        _protect(records, testw, params={"max_minute": 5})
    with pytest.raises(ParameterError, match="unknown protection method 'OTP'"):
        _protect(records, testw, method="OTP")
    with pytest.raises(ParameterError, match="max_minutes"):
        _protect(records, testw, params={"max_minutes": -1})


def test_typed_rules_equal_rule_text(records, testw):
    text = _protect(records, testw, rules="P(15,1)|NK(3,70)|FREQ(3,30)", method="HEUR")
    typed = _protect(
        records,
        testw,
        rules=[argusqt.P(15, 1), argusqt.NK(3, 70), argusqt.FREQ(3, 30)],
        method="HEUR",
    )
    assert np.array_equal(text.table.status < 10, typed.table.status < 10)
    assert text.n_primary == typed.n_primary >= 9
    with pytest.raises(SpecificationError, match="unknown safety rule"):
        _protect(records, testw, rules=[42])
    with pytest.raises(SpecificationError, match="p ≤ q ≤ 100"):
        _protect(records, testw, rules=[argusqt.P(150)])


def test_parent_child_hierarchy_equals_hrc_file(records, testw):
    pairs = pd.DataFrame(
        {
            "parent": ["Nr"] * 3 + ["Os"] * 4 + ["Ws"] * 3 + ["Zd"] * 2 + [None] * 4,
            "child": [*map(str, range(1, 13)), "Nr", "Os", "Ws", "Zd"],
        }
    )
    by_file = _protect(records, testw, method="HEUR")
    by_frame = _protect(records, testw, hierarchies={"Region": pairs}, method="HEUR")
    assert [c.strip() for c in by_frame.table.dims[1].codes] == [
        c.strip() for c in by_file.table.dims[1].codes
    ]
    assert np.allclose(by_frame.table.value, by_file.table.value)
    assert by_frame.n_primary == by_file.n_primary


def test_missing_code_and_missing_column_are_named(records, testw):
    bad = records.copy()
    bad.loc[7, "Size"] = None
    with pytest.raises(InputError, match=r"column 'Size'.*1 missing value.*record 8"):
        _protect(bad, testw)
    with pytest.raises(SpecificationError, match="'Sise' not found"):
        _protect(records, testw, explanatory=["Sise", "Region"])


def test_writers_and_progress(records, testw, tmp_path):
    events = []
    result = _protect(records, testw, progress=events.append)
    assert events and any(e.fraction == 1.0 for e in events)
    xlsx = result.to_excel(tmp_path / "t.xlsx")
    assert xlsx.is_file()
    pq = result.to_parquet(tmp_path / "t.parquet")
    assert pd.read_parquet(pq).equals(result.publish())
    files = result.write(tmp_path / "t.txt", "codevalue", "AS+")
    assert all(Path(f).is_file() for f in files)
    report = result.write_report(tmp_path / "t.html")
    assert "CONFIDENTIAL" in report.name and report.is_file()
    assert_marked(files[0])  # AS+: internal, marked by its sidecar
    first = Path(files[0]).read_text(encoding="utf-8").splitlines()[0]
    assert first == '"Total","Total",16847646.84,1'  # AS+: the status is added


def test_publish_refuses_a_changed_table(records, testw):
    result = _protect(records, testw, method="HEUR")
    table = result.table
    # the largest published interior cell made unsafe by hand, nothing suppressed around it
    leaf = np.array(
        [all(table.dims[d].is_leaf[n] for d, n in enumerate(table.cell_nodes(c)))
         for c in range(table.n_cells)]
    )  # fmt: skip
    candidates = np.flatnonzero(leaf & (table.status == 1))
    cell = int(candidates[np.argmax(table.value[candidates])])
    result.session.set_status(1, [cell], "unsafe")
    assert result.session.protection_state(1) == "changed"
    assert not result.audit().ok
    with pytest.raises(PublicationError, match="cannot be published"):
        result.publish()
    with pytest.raises(PublicationError):
        result.to_parquet(Path("/nonexistent/never.parquet"))


def test_cancel_keeps_a_safe_result(records, testw, generous_cancel_grace):
    from argusqt.progress import CancelToken

    token = CancelToken()

    def progress(event):
        if event.incumbent is not None or "OPT" in event.message:
            token.cancel()  # as Ctrl-C does: the method stops with its best audited result

    result = _protect(records, testw, progress=progress, cancel=token)
    assert token.cancelled and result.n_primary == 9
    assert result.audit().ok  # cancelled or not, what is kept passes the audit
    assert result.publish()["value"].isna().sum() > 0
    if result.cancelled:  # the API gives the sentence the log gives
        assert "was kept" in result.cancel_note
        assert any(line.endswith(result.cancel_note) for line in result.log)


def test_ctrl_c_cancels_the_worker_and_returns_its_result():
    import _thread
    import signal
    import threading

    from argusqt.api import _run_cancellable
    from argusqt.progress import CancelToken

    before = signal.getsignal(signal.SIGINT)
    token = CancelToken()

    def work():
        # Ctrl-C in the caller's thread while the method runs (sent from the running method:
        # on a loaded machine a timer started before the call could fire before it)
        threading.Timer(0.3, _thread.interrupt_main).start()
        token.wait(600)  # a method polling its cancel token (a generous functional deadline)
        return "best audited result"

    assert _run_cancellable(work, token) == "best audited result"
    assert token.cancelled
    assert signal.getsignal(signal.SIGINT) is before  # the caller's Ctrl-C handling is back


def test_ctrl_c_while_the_worker_starts_still_cancels(monkeypatch):
    """Ctrl-C that lands while the worker thread is being started (a loaded machine) cancels
    the run like any other instead of escaping as KeyboardInterrupt."""
    import _thread
    import threading

    from argusqt.api import _run_cancellable
    from argusqt.progress import CancelToken

    token = CancelToken()
    start = threading.Thread.start

    def slow_start(self):
        _thread.interrupt_main()  # Ctrl-C arrives as the thread starts
        start(self)

    monkeypatch.setattr(threading.Thread, "start", slow_start)

    def work():
        token.wait(600)
        return "best audited result"

    assert _run_cancellable(work, token) == "best audited result"
    assert token.cancelled


def test_tqdm_bar(records, testw, capsys):
    pytest.importorskip("tqdm")
    _protect(records, testw, method="HEUR", progress=True)
    assert "100%" in capsys.readouterr().err


def test_several_tables_share_response_and_rules(records, testw):
    import copy

    result = _protect(records, testw, explanatory=[["Size", "Region"], ["Year", "Size"]])
    assert len(result) == 2 and result[0].n_primary == 9
    assert result[1].name.startswith("Year × Size")
    assert all(t.audit().ok for t in result.tables)
    assert copy.copy(result).tables == result.tables  # no recursion through __getattr__


def test_polars_frame(records, testw):
    pl = pytest.importorskip("polars")
    result = _protect(pl.from_pandas(records), testw)
    assert result.n_primary == 9


# ---------------------------------------------------------------------------- chunks
def _session_tables(data, roles, chunk):
    from argusqt.io.codelists import codelist_for
    from argusqt.io.frames import read_frame
    from argusqt.model.tabulate import build_tables

    meta, micro = read_frame(data, roles, chunk_records=chunk)
    return micro, build_tables(meta, micro, SPECS(), [], codelist_for=codelist_for)


def SPECS():
    from argusqt.model.table import TableSpec
    from argusqt.rules.parse import parse_safety_rule

    return [
        TableSpec(["Size", "Region"], "Var2", rules=parse_safety_rule("P(15,1)|NK(3,70)")),
        TableSpec(["Year", "Size"], "Var2", rules=parse_safety_rule("P(10,2)|WGT(1)")),
        TableSpec(["Region"], None, rules=parse_safety_rule("FREQ(3,30)")),
    ]


def test_chunked_tabulation_equals_in_memory(records, testw):
    from argusqt.io.frames import ChunkedMicroData, Roles

    roles = Roles(
        explanatory=["Year", "Size", "Region"],
        numeric=["Var2"],
        weight="Wgt",
        hier_files={"Region": testw / "region2.hrc"},
    )
    records = records.assign(Wgt=records["Wgt"] / 7.0)  # fractional weights: units straddle
    whole, one = _session_tables(records, roles, None)
    parts, many = _session_tables(records, roles, 4_000)
    assert not isinstance(whole, ChunkedMicroData) and isinstance(parts, ChunkedMicroData)
    for a, b in zip(one, many, strict=True):
        assert [d.codes for d in a.dims] == [d.codes for d in b.dims]
        for name in ("value", "freq", "shadow", "cost_raw", "top"):
            assert np.allclose(getattr(a, name), getattr(b, name)), name


def test_chunked_holdings_equal_in_memory():
    from argusqt.io.codelists import codelist_for
    from argusqt.io.frames import Roles, read_frame
    from argusqt.model.table import TableSpec
    from argusqt.model.tabulate import build_tables
    from argusqt.rules.parse import parse_safety_rule

    rng = np.random.default_rng(3)
    n = 5_000
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 6, n).astype(str),
            "b": rng.integers(0, 4, n).astype(str),
            "hold": np.repeat(np.arange(n // 3 + 1), 3)[:n].astype(str),
            "x": rng.gamma(2.0, 100.0, n).round(1),
        }
    )
    roles = Roles(explanatory=["a", "b"], numeric=["x"], holding="hold")
    spec = TableSpec(["a", "b"], "x", rules=parse_safety_rule("P(10,1)|P(10,1)|P(15,1)"))
    out = []
    for chunk in (None, 701):
        meta, micro = read_frame(frame, roles, chunk_records=chunk)
        out.append(build_tables(meta, micro, [spec], [], codelist_for=codelist_for)[0])
    a, b = out
    for name in ("value", "freq", "top", "hfreq", "htop"):
        assert np.allclose(getattr(a, name), getattr(b, name)), name


def test_ready_table_from_a_dataframe(records, testw):
    micro = _protect(records, testw, method="HEUR")
    cells = micro.to_frame()
    cells["top1"], cells["top2"] = micro.table.top[:, 0], micro.table.top[:, 1]
    leaves = cells[
        (cells["Size"] != "Total")
        & cells["Region"].isin([str(i) for i in range(1, 13)])
        & (cells["freq"] > 0)
    ]
    result = argusqt.protect(
        table=leaves[["Size", "Region", "value", "freq", "top1", "top2"]],
        explanatory=["Size", "Region"],
        response="value",
        freq="freq",
        top=["top1", "top2"],
        hierarchies={"Region": testw / "region2.hrc"},
        decimals={"value": 2, "top1": 2, "top2": 2},
        rules="P(15,1)",
        method="HEUR",
        progress=False,
    )
    assert result.n_primary == 9 and result.audit().ok
    assert np.allclose(result.table.value, micro.table.value)  # totals computed from leaves
    # the τ-Argus files the frame went through live as long as the session, no longer
    folder = result.session.sources[-1].tab_path.parent
    assert folder.is_dir() and folder.name.startswith("argusqt-table-")
    del result
    gc.collect()
    assert not folder.exists()


@pytest.mark.parametrize("method", ["CTA", "IP"])
def test_adjusted_and_interval_faces(records, testw, method):
    result = _protect(records, testw, method=method)
    cells, safe = result.to_frame(), result.publish()
    empty = (cells["status"] == "empty").to_numpy()
    if method == "CTA":  # every non-empty cell is published, with its adjusted value
        assert np.array_equal(safe["value"].isna().to_numpy(), empty)
    else:  # a protected cell is published as an interval around its true value
        wide = safe["value"].isna().to_numpy()
        lo = safe["lower"].to_numpy(dtype=float)
        hi = safe["upper"].to_numpy(dtype=float)
        hidden = wide & ~empty
        assert hidden.sum() > 0
        truth = cells["value"].to_numpy()[hidden]
        assert (lo[hidden] <= truth + 1e-6).all() and (truth <= hi[hidden] + 1e-6).all()
    with pytest.raises(ParameterError, match="base"):
        _protect(records, testw, method="RND")


def test_chunked_csv_and_parquet_files_equal_in_memory(records, testw, tmp_path):
    from argusqt.io.frames import ChunkedMicroData, Roles

    roles = Roles(explanatory=["Size", "Region"], numeric=["Var2"])
    records.to_csv(tmp_path / "w.csv", index=False)
    records.to_parquet(tmp_path / "w.parquet", row_group_size=10_000)
    whole, (a,) = _tables(records, roles)
    for path in (tmp_path / "w.csv", tmp_path / "w.parquet"):
        micro, (b,) = _tables(path, roles, chunk=6_000)
        assert isinstance(micro, ChunkedMicroData) and micro.n_records == len(records)
        assert [d.codes for d in a.dims] == [d.codes for d in b.dims]
        for name in ("value", "freq", "top"):
            assert np.allclose(getattr(a, name), getattr(b, name)), (path.suffix, name)


def _tables(data, roles, chunk=None):
    from argusqt.io.codelists import codelist_for
    from argusqt.io.frames import read_frame
    from argusqt.model.table import TableSpec
    from argusqt.model.tabulate import build_tables
    from argusqt.rules.parse import parse_safety_rule

    meta, micro = read_frame(data, roles, chunk_records=chunk)
    spec = TableSpec(["Size", "Region"], "Var2", rules=parse_safety_rule("P(15,1)"))
    return micro, build_tables(meta, micro, [spec], [], codelist_for=codelist_for)


def test_csv_codes_after_the_first_block(tmp_path, monkeypatch):
    from argusqt.io import frames
    from argusqt.io.frames import Roles

    monkeypatch.setattr(frames, "CSV_BLOCK", 1 << 16)
    n = 300_000  # far beyond the first CSV block: 'Nr' and 0.5 come late
    frame = pd.DataFrame({"a": np.r_[np.ones(n, int), 2].astype(str), "x": np.r_[np.ones(n), 0.5]})
    frame.loc[n, "a"] = "Nr"
    frame.to_csv(tmp_path / "late.csv", index=False)
    micro, (table,) = _tables_of(tmp_path / "late.csv", Roles(explanatory=["a"], numeric=["x"]))
    assert [c.strip() for c in table.dims[0].codes] == ["Total", "1", "Nr"]
    assert table.value[0] == pytest.approx(n + 0.5)


def _tables_of(data, roles):
    from argusqt.io.codelists import codelist_for
    from argusqt.io.frames import read_frame
    from argusqt.model.table import TableSpec
    from argusqt.model.tabulate import build_tables

    meta, micro = read_frame(data, roles, chunk_records=100_000)
    spec = TableSpec(list(roles.explanatory), roles.numeric[0])
    return micro, build_tables(meta, micro, [spec], [], codelist_for=codelist_for)
