"""Microdata readers (argusqt/docs/formats.md §2): real counts and sums, code normalisation,
errors."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_paths import tauargus_dir

from argusqt.errors import Cancelled, InputError, SpecificationError
from argusqt.io.microdata import _parse_decimal_block, read_microdata
from argusqt.io.rda import read_rda
from argusqt.progress import CancelToken


@pytest.fixture(scope="module")
def tau_testw(tmp_path_factory):
    shared = tauargus_dir()  # what the shared_data fixture returns (module scope here)
    case = shutil.copytree(shared / "tau_testW", tmp_path_factory.mktemp("md") / "tau_testW")
    meta = read_rda(case / "tau_testW.rda")
    return meta, read_microdata(meta, case / "tau_testW.asc"), case


def plain_field(line: str, start: int, width: int) -> str:
    return line[start - 1 : start - 1 + width]


def test_tau_testw_counts(tau_testw) -> None:
    meta, data, _ = tau_testw
    assert data.n_records == 42723
    codes, cats = data.column("Size")
    counts = dict(zip(cats, np.bincount(codes, minlength=len(cats)).tolist(), strict=True))
    assert counts["99"] == 5
    assert sum(counts.values()) == 42723
    region = data.codes("Region")
    assert region.categories == [" 1", " 2", " 3", " 4", " 5", " 6", " 7", " 8", " 9"] + [
        "10",
        "11",
        "12",
    ]
    assert region.codes.dtype == np.int32
    assert all(len(c) == 5 for c in data.codes("IndustryCode").categories)
    assert data.line_of(0) == 1 and data.log == []


def test_tau_testw_numbers_match_plain_python(tau_testw) -> None:
    meta, data, case = tau_testw
    lines = (case / "tau_testW.asc").read_text().splitlines()
    assert len(lines) == 42723
    for name in ("Var2", "Wgt", "Var1", "Var8"):
        v = meta.variable(name)
        expected = [float(plain_field(ln, v.start, v.width).strip() or 0) for ln in lines]
        got = data.values(name)
        assert got.dtype == np.float64
        assert math.fsum(got) == math.fsum(expected)
        assert got.tolist() == expected
    assert math.fsum(data.values("Var2")) == pytest.approx(16847646.84, abs=1e-6)
    size = meta.variable("Size")
    expected_size = [plain_field(ln, size.start, size.width) for ln in lines]
    codes, cats = data.codes("size")  # case-insensitive
    assert [cats[c] for c in codes.tolist()] == expected_size


def test_enterprise(shared_data: Path, tmp_path: Path) -> None:
    case = shutil.copytree(shared_data / "enterprise", tmp_path / "enterprise")
    meta = read_rda(case / "example_enterprise.rda")
    data = read_microdata(meta, case / "example_enterprise.asc")
    assert data.n_records == 8169
    h_codes, h_cats = data.column("h_id")
    assert all(len(c) == 9 for c in h_cats) and h_codes.max() == len(h_cats) - 1
    assert len(h_cats) == 5100 and data.holding_runs("h_id").max() == 5099  # contiguous
    assert data.log == []
    lines = (case / "example_enterprise.asc").read_text().splitlines()
    expected = [float(ln[18:26]) for ln in lines]
    assert math.fsum(data.values("turnover")) == math.fsum(expected)
    act_codes, act_cats = data.column("act")
    assert act_cats[0] == "00"  # the missing code occurs in the data


def test_free_format_ex2(shared_data: Path, tmp_path: Path) -> None:
    case = shutil.copytree(shared_data / "batch_ex2", tmp_path / "batch_ex2")
    assert b"\r\r\n" in (case / "microdata_ex2.asc").read_bytes()
    meta = read_rda(case / "metadata_ex2.rda")
    data = read_microdata(meta, case / "microdata_ex2.asc")
    assert data.n_records == 100
    assert data.codes("gender").categories == ["  male", "female"]  # padded to width 6
    assert data.codes("region").categories == ["A", "B", "C", "D"]
    # the expected output of batch_ex2 starts with the Total cell 10484.95 (num1)
    assert math.fsum(data.values("num1")) == pytest.approx(10484.95, abs=1e-9)
    assert math.fsum(data.values("weight")) == 5146.0
    assert "weight" in data.numeric and "weight" not in data.categorical


# ---------------------------------------------------------------------- synthetic fixed
def fixed_case(tmp_path: Path, rda: str, data: bytes) -> tuple:
    (tmp_path / "m.rda").write_text(rda)
    (tmp_path / "d.asc").write_bytes(data)
    return read_rda(tmp_path / "m.rda"), tmp_path / "d.asc"


RDA = "C 1 3 99\n <RECODEABLE>\nV 4 6 9\n <NUMERIC>\n"


def test_codes_trailing_blanks_short_lines_and_blank_numbers(tmp_path: Path) -> None:
    meta, p = fixed_case(tmp_path, RDA, b" 1   12.5\n1  \n   -3.25\n 99     9\n\n")
    data = read_microdata(meta, p)
    assert data.n_records == 4
    codes, cats = data.column("C")
    # " 1" keeps its leading blank, "1  " loses its trailing blanks, a blank field stays blank
    assert [cats[c] for c in codes] == [" 1", "1", "   ", " 99"]
    assert data.values("V").tolist() == [12.5, 0.0, -3.25, 9.0]
    # τ-Argus pads short lines with blanks; argusqt does too but says so (docs/design.md)
    short, missing, empty = data.log
    assert "1 empty line(s) skipped (first: line 5)" in empty
    assert "missing value 9" in missing
    assert "2 record(s) end before column 9" in short and "first: line 2" in short
    assert "V (1 cut, 1 blank)" in short


def test_blank_number_on_a_full_line_is_logged(tmp_path: Path) -> None:
    meta, p = fixed_case(tmp_path, RDA, b" 1   12.5\n 2       \n 3       \n")
    data = read_microdata(meta, p)
    assert data.values("V").tolist() == [12.5, 0.0, 0.0]
    assert data.log == [
        "warning: d.asc: 2 record(s) have a blank V field, read as 0 (first: line 2)"
    ]


def test_line_endings_and_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    meta, p = fixed_case(tmp_path, RDA, b"A    1\r\r\n\r\nB  abc\r\n")
    with pytest.raises(InputError) as e:
        read_microdata(meta, p)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line 3, column 4:"), msg
    assert "V" in msg and "'abc'" in msg and "columns 4-9" in msg
    meta, p = fixed_case(tmp_path, RDA, b"A    1\rB    2\r")  # CR only
    data = read_microdata(meta, p)
    assert data.values("V").tolist() == [1.0, 2.0]


@pytest.mark.parametrize("bad", [b"  1 2", b" 1-2", b"--1", b"1.2.3", b"  nan", b"    x", b" +-1"])
def test_non_numeric_value_is_an_error(tmp_path: Path, bad: bytes) -> None:
    meta, p = fixed_case(tmp_path, RDA, b"A    1\nB " + bad.rjust(6) + b"\n")
    with pytest.raises(InputError) as e:
        read_microdata(meta, p)
    assert str(e.value).startswith(f"{p}, line 2, column 4:")
    assert "variable V" in str(e.value)


def test_exponents_and_many_digits_use_the_exact_path(tmp_path: Path) -> None:
    rda = "C 1 1\n <RECODEABLE>\nV 2 24\n <NUMERIC>\n"
    texts = ["1.5e3", "12345678901234567.5", "-0.000000000000000001", "+7", ".5", "5."]
    body = b"".join(b"A" + t.encode().rjust(24) + b"\n" for t in texts)
    meta, p = fixed_case(tmp_path, rda, body)
    assert read_microdata(meta, p).values("V").tolist() == [float(t) for t in texts]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "-", "+"]),
            st.text("0123456789", min_size=1, max_size=9),
            st.one_of(st.none(), st.text("0123456789", max_size=6)),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_fast_decimal_parser_matches_float(rows) -> None:
    texts = []
    for sign, whole, frac, pad in rows:
        t = sign + whole + ("" if frac is None else "." + frac)
        texts.append(" " * pad + t)
    w = max(len(t) for t in texts) + 1
    mat = np.array([list(t.rjust(w).encode()) for t in texts], dtype=np.uint8)
    values, ok = _parse_decimal_block(np.ascontiguousarray(mat.T))
    assert ok.all()
    assert values.tolist() == [float(t) for t in texts]


def test_subset_both_roles_and_non_uniform_lines(tmp_path: Path) -> None:
    rda = "C 1 2\n <RECODEABLE>\n <NUMERIC>\nD 3 1\n <RECODEABLE>\nV 4 3\n <NUMERIC>\n"
    meta, p = fixed_case(tmp_path, rda, b"10A 5\n 2B\n10A100 trailing text\n")
    data = read_microdata(meta, p, ["c", "V"])
    assert not data.has("D") and data.has("C")
    assert data.codes("C").categories == [" 2", "10"]
    assert data.values("C").tolist() == [10.0, 2.0, 10.0]
    assert data.values("V").tolist() == [5.0, 0.0, 100.0]
    with pytest.raises(SpecificationError):
        data.values("D")


def test_tabular_metadata_refused(shared_data: Path, tmp_path: Path) -> None:
    shutil.copy(shared_data / "tableinput" / "pp.rda", tmp_path / "pp.rda")
    meta = read_rda(tmp_path / "pp.rda")
    with pytest.raises(SpecificationError, match="tabular"):
        read_microdata(meta, tmp_path / "pp.tab")


def test_missing_file(tmp_path: Path) -> None:
    meta, _ = fixed_case(tmp_path, RDA, b"")
    with pytest.raises(InputError, match="not found"):
        read_microdata(meta, tmp_path / "gone.asc")


def test_progress_and_cancel(tmp_path: Path) -> None:
    meta, p = fixed_case(tmp_path, RDA, b"A    1\n" * 10)
    events = []
    data = read_microdata(meta, p, progress=events.append)
    assert data.n_records == 10 and events[-1].fraction == 1.0
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        read_microdata(meta, p, cancel=token)


# ---------------------------------------------------------------------- synthetic free
def free_case(tmp_path: Path, sep: str, data: bytes, width: int = 3) -> tuple:
    rda = f'<SEPARATOR> "{sep}"\nC {width} 99\n <RECODEABLE>\nV 8 999\n <NUMERIC>\n'
    (tmp_path / "m.rda").write_text(rda)
    (tmp_path / "d.csv").write_bytes(data)
    return read_rda(tmp_path / "m.rda"), tmp_path / "d.csv"


def test_free_trims_quotes_and_pads(tmp_path: Path) -> None:
    meta, p = free_case(tmp_path, ",", b' "1" , 2.5\n\t1,\n99,999\nab,-1\n')
    data = read_microdata(meta, p)
    assert data.codes("C").categories == ["  1", " 99", " ab"]
    assert [data.codes("C").categories[c] for c in data.codes("C").codes] == [
        "  1",
        "  1",
        " 99",
        " ab",
    ]
    assert data.values("V").tolist() == [2.5, 0.0, 999.0, -1.0]
    assert any("missing value 999" in line for line in data.log)


def test_free_multichar_separator_and_decimal_comma(tmp_path: Path) -> None:
    meta, p = free_case(tmp_path, ";;", b"a;;1,5\nb;;2\n")
    data = read_microdata(meta, p)
    assert data.values("V").tolist() == [1.5, 2.0]
    assert data.codes("C").categories == ["  a", "  b"]


def test_free_wrong_field_count(tmp_path: Path) -> None:
    meta, p = free_case(tmp_path, ",", b"a,1\n\nb,2,3\n")
    with pytest.raises(InputError) as e:
        read_microdata(meta, p)
    assert str(e.value).startswith(f"{p}, line 3:") and "expected 2 fields" in str(e.value)


def test_free_non_numeric(tmp_path: Path) -> None:
    meta, p = free_case(tmp_path, ",", b"a,1\n\nb,1x\n")
    with pytest.raises(InputError) as e:
        read_microdata(meta, p)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line 3, column 3:") and "variable V" in msg and "'1x'" in msg


def test_free_code_longer_than_width_warns(tmp_path: Path) -> None:
    meta, p = free_case(tmp_path, ",", b"abcd,1\n", width=3)
    data = read_microdata(meta, p)
    assert data.codes("C").categories == ["abcd"]
    assert any("longer than its width" in line for line in data.log)


@pytest.mark.parametrize(
    "body", [b"A    1\r\nB    2", b"A    1\r\nB    2\r\n", b"A    1\nB    2\n", b"A    1\nB  2\n"]
)
def test_last_line_without_line_end_and_crlf(tmp_path: Path, body: bytes) -> None:
    meta, p = fixed_case(tmp_path, RDA, body)
    data = read_microdata(meta, p)
    assert data.n_records == 2
    assert data.codes("C").categories == ["A", "B"]
    assert data.values("V").tolist() == [1.0, 2.0]


def test_holding_runs_and_contiguity_warning(tmp_path: Path) -> None:
    rda = "H 1 1\n <HOLDING>\nC 2 1\n <RECODEABLE>\n"
    meta, p = fixed_case(tmp_path, rda, b"aX\naY\nbX\naX\n")
    data = read_microdata(meta, p)
    assert data.holding_runs("H").tolist() == [0, 0, 1, 2]
    assert len(data.log) == 1 and "line 4" in data.log[0] and "'a'" in data.log[0]
    meta, p = fixed_case(tmp_path, rda, b"aX\naY\nbX\n")
    assert read_microdata(meta, p).log == []


def test_empty_file_reads_no_records_with_a_warning(tmp_path: Path) -> None:
    meta, p = fixed_case(tmp_path, RDA, b"")
    data = read_microdata(meta, p)
    assert data.n_records == 0 and data.codes("C").categories == []
    assert data.values("V").shape == (0,) and "no records" in data.log[0]
    meta, p = free_case(tmp_path, ",", b"\n")
    data = read_microdata(meta, p)
    assert data.n_records == 0 and data.values("V").shape == (0,)


def test_sorted_and_hashed_numbering_read_the_same_columns(tau_testw, monkeypatch) -> None:
    """Files beyond HASH_ROWS records number categories by hashing (pandas), smaller ones by
    sorting (numpy): both give the same codes and category lists, fields wider than 8 bytes
    included (tau_testW's 42,723 records read both ways)."""
    import argusqt.io.microdata as md

    meta, sorted_read, case = tau_testw
    monkeypatch.setattr(md, "HASH_ROWS", 0)
    hashed_read = read_microdata(meta, case / "tau_testW.asc")
    assert sorted_read.categorical.keys() == hashed_read.categorical.keys()
    for name, (codes, cats) in sorted_read.categorical.items():
        h_codes, h_cats = hashed_read.categorical[name]
        assert cats == h_cats, name
        np.testing.assert_array_equal(codes, h_codes, err_msg=name)
    wide = np.frombuffer(b"abcdefghij" * 3 + b"abcdefghiX" * 2 + b"zbcdefghij", np.uint8)
    for limit in (0, 10**9):
        monkeypatch.setattr(md, "HASH_ROWS", limit)
        codes, cats = md._categorical_from_bytes(wide.reshape(6, 10))
        assert cats == ["abcdefghiX", "abcdefghij", "zbcdefghij"]
        assert codes.tolist() == [1, 1, 1, 0, 0, 2]
