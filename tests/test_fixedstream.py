"""Streamed fixed-format microdata (io/fixedstream.py): the same tables, warnings and errors
as the in-memory read, a part of the file at a time (issue 26, goal 3)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from argusqt.errors import InputError
from argusqt.io import fixedstream
from argusqt.io.fixedstream import StreamedMicroData
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.table import TableSpec
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from tests.shared_paths import copy_case

#: per-cell arrays of a computed table that must agree cell by cell
ARRAYS = ("value", "freq", "shadow", "cost_raw", "top", "hfreq", "htop", "weight_sum",
          "request_top", "status", "cost", "lpl", "upl")  # fmt: skip


def _tables(folder: Path, data: str, meta: str, specs: list[TableSpec]):
    s = Session()
    s.open_microdata(folder / data, folder / meta)
    for spec in specs:
        s.specify_table(spec)
        s.set_safety_rules(spec.rules)
    tables = s.compute_tables()
    return s, tables


def _same_tables(a, b) -> None:
    assert len(a) == len(b)
    for ta, tb in zip(a, b, strict=True):
        assert [d.codes for d in ta.dims] == [d.codes for d in tb.dims]
        checked = 0
        for name in ARRAYS:
            x, y = getattr(ta, name, None), getattr(tb, name, None)
            if x is None and y is None:
                continue
            x, y = np.asarray(x), np.asarray(y)
            if x.dtype.kind == "f":  # sums added part by part: the last bits may differ
                np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9, err_msg=name)
            else:
                np.testing.assert_array_equal(x, y, err_msg=name)
            checked += 1
        assert checked >= 8


def _streamed(monkeypatch, part_bytes: int) -> None:
    monkeypatch.setattr(fixedstream, "STREAM_BYTES", 0)
    monkeypatch.setattr(fixedstream, "PART_BYTES", part_bytes)


def test_tau_testw_streamed_equals_in_memory(tmp_path, monkeypatch):
    """Weights, requests, a `.hrc` hierarchy, digit levels and CRLF lines over ~90 parts."""
    folder = copy_case("tau_testW", tmp_path)
    rules = parse_safety_rule("P(15,1)|FREQ(3,30)|REQ(80,70,3)")
    weighted = parse_safety_rule("NK(3,75)|WGT(1)")
    specs = [
        TableSpec(["Region", "Size"], "Var2", rules=rules),
        TableSpec(["IndustryCode", "Year"], "Var1", rules=weighted),
        TableSpec(["Size", "Region", "Year"], None, rules=parse_safety_rule("FREQ(3,20)")),
    ]
    s_mem, mem = _tables(folder, "tau_testW.asc", "tau_testW.rda", specs)
    assert not hasattr(s_mem.microdata, "iter_chunks")
    _streamed(monkeypatch, 50_000)
    s_str, streamed = _tables(folder, "tau_testW.asc", "tau_testW.rda", specs)
    assert isinstance(s_str.microdata, StreamedMicroData)
    assert s_str.microdata.n_records == 42_723
    _same_tables(mem, streamed)


def test_enterprise_holdings_streamed_equals_in_memory(tmp_path, monkeypatch):
    """Holding-level rules: holdings go on across the parts' borders."""
    folder = copy_case("enterprise", tmp_path)
    rules = parse_safety_rule("P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MAN(10)|MIS(1)")
    specs = [
        TableSpec(["act", "product"], "turnover", rules=rules),
        TableSpec(["region", "mun"], "turnover", rules=rules),
    ]
    _, mem = _tables(folder, "example_enterprise.asc", "example_enterprise.rda", specs)
    _streamed(monkeypatch, 5_000)  # ~190 records a part: many holdings cross a border
    s, streamed = _tables(folder, "example_enterprise.asc", "example_enterprise.rda", specs)
    assert isinstance(s.microdata, StreamedMicroData)
    assert any(np.asarray(t.hfreq).any() for t in streamed)
    _same_tables(mem, streamed)


def _damaged(folder: Path) -> Path:
    """tau_testW with short lines, a blank number, empty lines, a control code and a holding
    of Request-free damage spread over the file."""
    path = folder / "tau_testW.asc"
    lines = path.read_bytes().split(b"\r\n")
    lines[5] = lines[5][:20]  # short: cut inside Var1
    lines[9000] = lines[9000][:30] + b" " * 10 + lines[9000][40:]  # Var2 blank
    lines[20000] = b""  # empty lines
    lines[30001] = b""
    lines[25000] = lines[25000][:8] + b"\x1b" + lines[25000][9:]  # a control byte in Size
    lines[41000] = lines[41000][:20]
    path.write_bytes(b"\r\n".join(lines))
    return path


def _stream_all(meta, path: Path) -> StreamedMicroData:
    data = StreamedMicroData(path, meta)
    for _ in data.iter_chunks():
        pass
    return data


def test_warnings_add_up_over_parts(tmp_path, monkeypatch):
    folder = copy_case("tau_testW", tmp_path)
    path = _damaged(folder)
    meta = read_rda(folder / "tau_testW.rda")
    mem = read_microdata(meta, path)
    monkeypatch.setattr(fixedstream, "PART_BYTES", 200_000)
    streamed = _stream_all(read_rda(folder / "tau_testW.rda"), path)
    assert streamed.n_records == mem.n_records == 42_721
    warnings = [w for w in streamed.pass_log if w.startswith("warning")]
    assert len(warnings) >= 4
    assert sorted(warnings) == sorted(mem.log)


def test_error_names_the_line_in_the_file(tmp_path, monkeypatch):
    folder = copy_case("tau_testW", tmp_path)
    path = folder / "tau_testW.asc"
    lines = path.read_bytes().split(b"\r\n")
    lines[33332] = lines[33332][:30] + b"    12x4.5" + lines[33332][40:]
    path.write_bytes(b"\r\n".join(lines))
    meta = read_rda(folder / "tau_testW.rda")
    with pytest.raises(InputError) as mem:
        read_microdata(meta, path)
    monkeypatch.setattr(fixedstream, "PART_BYTES", 100_000)
    with pytest.raises(InputError) as streamed:
        _stream_all(meta, path)
    assert mem.value.line == streamed.value.line == 33_333
    assert str(mem.value) == str(streamed.value)


def test_holding_coming_back_in_a_later_part(tmp_path, monkeypatch):
    folder = copy_case("enterprise", tmp_path)
    path = folder / "example_enterprise.asc"
    raw = path.read_bytes()
    path.write_bytes(raw + raw.split(b"\r\n")[0] + b"\r\n")  # the first holding comes back
    meta = read_rda(folder / "example_enterprise.rda")
    mem = read_microdata(meta, path)
    monkeypatch.setattr(fixedstream, "PART_BYTES", 7_000)
    streamed = _stream_all(meta, path)
    back = [w for w in mem.log if "comes back" in w]
    assert len(back) == 1 and "line 8170" in back[0]
    assert [w for w in streamed.pass_log if "comes back" in w] == back


def test_memory_holds_a_part_not_the_file(tmp_path, monkeypatch):
    """Peak traced memory of reading and tabulating a 6 MB file in 64 kB parts stays a
    small multiple of the part, far below the file (the in-memory read takes several times
    the file)."""
    rda = "a 1 2\n  <RECODEABLE>\nb 4 2\n  <RECODEABLE>\nx 7 10\n  <NUMERIC>\n  <DECIMALS> 2\n"
    (tmp_path / "m.rda").write_text(rda)
    rng = np.random.default_rng(7)
    n = 360_000
    a = rng.integers(10, 40, n)
    b = rng.integers(10, 60, n)
    x = rng.integers(1, 10**8, n)
    text = "".join(f"{i} {j} {k / 100:10.2f}\n" for i, j, k in zip(a, b, x, strict=True))
    (tmp_path / "m.asc").write_text(text)
    size = (tmp_path / "m.asc").stat().st_size
    assert size > 6_000_000
    _streamed(monkeypatch, 64_000)
    spec = TableSpec(["a", "b"], "x", rules=parse_safety_rule("P(15,1)"))
    s = Session()
    s.open_microdata(tmp_path / "m.asc", tmp_path / "m.rda")
    s.specify_table(spec)
    s.set_safety_rules(spec.rules)
    tracemalloc.start()
    try:
        (table,) = s.compute_tables()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.freq[0] == n
    assert table.value[0] == pytest.approx(x.sum() / 100)
    assert peak < size / 4, f"peak {peak:,} bytes for a {size:,}-byte file"


def test_a_sum_beyond_the_float_range_over_parts_is_refused(tmp_path, monkeypatch):
    """Each part's sum is finite, the file's is not: refused as the in-memory read does."""
    (tmp_path / "m.rda").write_text("a 1 1\n  <RECODEABLE>\nx 3 8\n  <NUMERIC>\n")
    (tmp_path / "m.asc").write_text("1  5.0e307\n2  9.0e307\n1  9.0e307\n2  1.0e307\n")
    meta = read_rda(tmp_path / "m.rda")
    with pytest.raises(InputError) as mem:
        read_microdata(meta, tmp_path / "m.asc")
    monkeypatch.setattr(fixedstream, "PART_BYTES", 8)  # one line a part
    with pytest.raises(InputError) as streamed:
        _stream_all(meta, tmp_path / "m.asc")
    assert mem.value.line == streamed.value.line == 2
    assert str(mem.value) == str(streamed.value)


def test_byte_order_mark_and_no_final_line_end(tmp_path, monkeypatch):
    (tmp_path / "m.rda").write_text("a 1 1\n  <RECODEABLE>\nx 3 4\n  <NUMERIC>\n")
    text = "1 12\n2  3\n\n1  4\n2 10"  # an empty line, no line end after the last record
    (tmp_path / "m.asc").write_bytes(b"\xef\xbb\xbf" + text.encode())
    meta = read_rda(tmp_path / "m.rda")
    mem = read_microdata(meta, tmp_path / "m.asc")
    monkeypatch.setattr(fixedstream, "PART_BYTES", 6)
    streamed = _stream_all(meta, tmp_path / "m.asc")
    parts = list(streamed.iter_chunks())
    assert sum(p.n_records for p in parts) == mem.n_records == 4
    values = np.concatenate([p.numeric["x"] for p in parts])
    np.testing.assert_array_equal(values, mem.numeric["x"])
    codes = np.concatenate([p.categorical["a"].codes for p in parts])
    assert [streamed.final_categories("a")[c] for c in codes] == [
        mem.categorical["a"].categories[c] for c in mem.categorical["a"].codes
    ]
    assert [w for w in streamed.pass_log if w.startswith("warning")] == mem.log


def test_recode_of_a_streamed_table_equals_in_memory(tmp_path, monkeypatch):
    """Recoding works from the table's fine cells, never the records: a streamed table
    recodes as an in-memory one (GK.GRC on Size, IndustryCode to its first level)."""
    folder = copy_case("tau_testW", tmp_path)
    spec = TableSpec(["Size", "IndustryCode"], "Var2", rules=parse_safety_rule("P(15,1)"))
    results = []
    for streamed in (False, True):
        if streamed:
            _streamed(monkeypatch, 60_000)
        s, _ = _tables(folder, "tau_testW.asc", "tau_testW.rda", [spec])
        assert isinstance(s.microdata, StreamedMicroData) == streamed
        s.recode(1, "Size", folder / "GK.GRC")
        results.append([s.recode(1, "IndustryCode", 1)])
    _same_tables(*results)
