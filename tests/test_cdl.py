"""Codelist files `.cdl` (argusqt/docs/formats.md §5): labels for display."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from argusqt.errors import InputError
from argusqt.io.cdl import label_of, read_cdl
from argusqt.io.codelists import codelist_for
from argusqt.io.rda import read_rda


def test_region_cdl_keeps_leading_blanks(shared_data: Path, tmp_path: Path) -> None:
    p = tmp_path / "region.cdl"
    shutil.copy(shared_data / "tau_testW" / "region.cdl", p)
    labels = read_cdl(p)
    assert labels[" 1"] == "Groningen" and labels["12"] == "Limburg"
    assert label_of(labels, " 9") == "Zuid-Holland"
    assert label_of(labels, "9") == "Zuid-Holland"  # trimmed lookup
    assert label_of(labels, "77") == "77"  # no label: the code itself


def test_first_comma_splits(tmp_path: Path) -> None:
    p = tmp_path / "a.cdl"
    p.write_bytes(b"A,one, two, three\r\n\r\n B ,b\r\n")
    labels = read_cdl(p)
    assert labels["A"] == "one, two, three"
    assert labels[" B"] == "b" and labels["B"] == "b"


def test_line_without_comma_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "a.cdl"
    p.write_text("A,one\nB two\n")
    with pytest.raises(InputError) as e:
        read_cdl(p)
    assert str(e.value).startswith(f"{p}, line 2:") and "code,label" in str(e.value)


def test_pp_rda_names_region_cdl_in_upper_case(shared_data: Path, tmp_path: Path) -> None:
    case = shutil.copytree(shared_data / "tableinput", tmp_path / "tableinput")
    assert not (case / "REGION.CDL").exists()
    meta = read_rda(case / "pp.rda")
    log: list[str] = []
    region = codelist_for(meta.variable("Region"), meta, None, log)
    assert region.label(region.codes.index("Nr")) == "North"
    assert region.label(region.codes.index(" 3")) == "Drenthe"
    used = [line for line in log if "REGION.CDL" in line]
    assert len(used) == 1 and "ignoring case" in used[0]
    assert str(case / "region.cdl") in used[0]


def test_missing_cdl_is_a_logged_warning(tmp_path: Path) -> None:
    rda = tmp_path / "m.rda"
    rda.write_text('A 1 2\n <RECODEABLE>\n <CODELIST> "none.cdl"\n')
    meta = read_rda(rda)
    log: list[str] = []
    codes = codelist_for(meta.variable("A"), meta, ["01"], log)
    assert codes.codes == ["Total", "01"] and codes.label(1) == "01"
    assert len(log) == 1 and log[0].startswith("warning:") and "none.cdl" in log[0]
