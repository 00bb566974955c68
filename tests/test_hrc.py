"""Hierarchy files `.hrc` (argusqt/docs/formats.md §4.1, §4.3) and codelists built from them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from argusqt.errors import InputError
from argusqt.io.codelists import codelist_for
from argusqt.io.hrc import read_hrc, write_hrc
from argusqt.io.rda import read_rda

E15_1 = [
    (1, "Nr"),
    (2, " 1"),
    (2, " 2"),
    (2, " 3"),
    (1, "Os"),
    (2, " 4"),
    (2, " 5"),
    (2, " 6"),
    (2, " 7"),
    (1, "Ws"),
    (2, " 8"),
    (2, " 9"),
    (2, "10"),
    (1, "Zd"),
    (2, "11"),
    (2, "12"),
]


def test_e15_1_region2(shared_data: Path, tmp_path: Path) -> None:
    p = tmp_path / "region2.hrc"
    shutil.copy(shared_data / "tau_testW" / "region2.hrc", p)
    entries = read_hrc(p, "@")
    assert [(d, c) for d, c, _ in entries] == E15_1  # "Os " lost its trailing blank
    assert [n for _, _, n in entries] == list(range(1, 17))


def test_e15_1_table_order_with_missing(shared_data: Path, tmp_path: Path) -> None:
    case = tmp_path / "tau_testW"
    case.mkdir()
    for name in ("tau_testW.rda", "region2.hrc", "region.cdl"):
        shutil.copy(shared_data / "tau_testW" / name, case / name)
    meta = read_rda(case / "tau_testW.rda")
    log: list[str] = []
    region = codelist_for(meta.variable("Region"), meta, [" 1", "12"], log)
    assert region.codes == ["Total"] + [c for _, c in E15_1] + ["99"]
    assert len(region) == 18
    assert region.is_missing.tolist() == [False] * 17 + [True]
    leaves = [region.codes[i] for i in np.flatnonzero(region.is_leaf)]
    assert leaves == [c for d, c in E15_1 if d == 2] + ["99"]
    assert region.parents == [0, 1, 5, 10, 14]  # one relation each: 1·18 + 5·… (E15.7)
    assert region.label(2) == "Groningen" and region.label(0) == "Total"
    assert any("region2.hrc" in line for line in log)
    assert any("region.cdl" in line for line in log)


def test_crcrlf_line_ends_keep_leading_blanks(shared_data: Path, tmp_path: Path) -> None:
    p = tmp_path / "g.hrc"
    shutil.copy(shared_data / "batch_ex2" / "hier_gender_ex2.hrc", p)
    assert b"\r\r\n" in p.read_bytes()
    assert read_hrc(p, "@") == [(1, "  male", 1), (1, "female", 2)]


def test_duplicate_non_leaf_codes_are_distinct_nodes(shared_data: Path, tmp_path: Path) -> None:
    p = tmp_path / "NUTS.hrc"
    shutil.copy(shared_data / "enterprise" / "NUTS.hrc", p)
    entries = read_hrc(p, "@")
    eleven = [i for i, (d, c, _) in enumerate(entries) if c == "11" and d == 2]
    assert len(eleven) == 2  # @11 under both 1 and 2


def test_multi_character_lead_and_write_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "a.hrc"
    p.write_text("A\n##a1\n####x\n##a2\nB\n##b1\n")
    entries = read_hrc(p, "##")
    assert [(d, c) for d, c, _ in entries] == [
        (1, "A"),
        (2, "a1"),
        (3, "x"),
        (2, "a2"),
        (1, "B"),
        (2, "b1"),
    ]
    out = tmp_path / "o.hrc"
    write_hrc(entries, out)
    assert out.read_text() == "A\n@a1\n@@x\n@a2\nB\n@b1\n"
    assert [(d, c) for d, c, _ in read_hrc(out, "@")] == [(d, c) for d, c, _ in entries]


def test_blank_lines_skipped(tmp_path: Path) -> None:
    p = tmp_path / "a.hrc"
    p.write_text("A\n\n@ 1\n   \n@ 2\n")
    assert read_hrc(p, "@") == [(1, "A", 1), (2, " 1", 3), (2, " 2", 5)]


@pytest.mark.parametrize(
    "text,kwargs,line,words",
    [
        ("A\n@@x\n", {}, 2, ["depth 3", "depth 1"]),
        ("@x\n", {}, 1, ["depth 2", "depth 0"]),
        ("A\n@x\nB\n@x\n", {}, 4, ["code 'x' appears twice", "a leaf on line 2"]),
        ("A\n@\n", {}, 2, ["code is empty"]),
        ("A\n@99\n", {"missing": ["99"]}, 2, ["missing code"]),
        ("Total\n@1\n", {"total_code": "Total"}, 1, ["total code"]),
    ],
)
def test_errors_name_file_and_line(
    tmp_path: Path, text: str, kwargs: dict, line: int, words: list[str]
) -> None:
    p = tmp_path / "bad.hrc"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_hrc(p, "@", **kwargs)
    msg = str(e.value)
    assert msg.startswith(f"{p}, line {line}:"), msg
    for w in words:
        assert w in msg, msg


def test_missing_hrc_file_names_the_rda(tmp_path: Path) -> None:
    rda = tmp_path / "m.rda"
    rda.write_text(
        'A 1 2\n <RECODEABLE>\n <HIERARCHICAL>\n <HIERCODELIST> "gone.hrc"\n <HIERLEADSTRING> "@"\n'
    )
    meta = read_rda(rda)
    with pytest.raises(InputError) as e:
        codelist_for(meta.variable("A"), meta, ["01"], [])
    msg = str(e.value)
    assert msg.startswith(f"{rda}, line 1:") and "gone.hrc" in msg


def test_enterprise_unc_paths_resolve_by_base_name(shared_data: Path, tmp_path: Path) -> None:
    case = shutil.copytree(shared_data / "enterprise", tmp_path / "enterprise")
    meta = read_rda(case / "example_enterprise.rda")
    log: list[str] = []
    act = codelist_for(meta.variable("act"), meta, None, log)
    assert act.codes[:3] == ["Total", "A", "01"] and act.codes[-1] == "00"
    assert act.is_missing[-1] and act.hierarchical
    assert len(log) == 1 and "nace_divisions.hrc" in log[0] and "by base name" in log[0]
    assert str(case / "nace_divisions.hrc") in log[0]
    mun = codelist_for(meta.variable("mun"), meta, None, log)
    assert mun.index_of("11") and len(mun.index_of("11")) == 2


def test_codelist_from_digits_and_flat(tmp_path: Path) -> None:
    rda = tmp_path / "m.rda"
    rda.write_text(
        "Ind 1 5 99999\n <RECODEABLE>\n <HIERARCHICAL>\n <HIERLEVELS> 3 1 1 0 0\n"
        "Size 6 2 99\n <RECODEABLE>\n"
    )
    meta = read_rda(rda)
    ind = codelist_for(meta.variable("Ind"), meta, ["01211", "01120", "01130", "99999"], [])
    # argusqt/docs/formats.md §4.2 example, then the missing code at depth 1
    assert ind.codes == [
        "Total",
        "011",
        "0112",
        "01120",
        "0113",
        "01130",
        "012",
        "0121",
        "01211",
        "99999",
    ]
    assert ind.depth.tolist() == [0, 1, 2, 3, 2, 3, 1, 2, 3, 1]
    size = codelist_for(meta.variable("Size"), meta, [" 9", "10", " 2", "99"], [])
    assert size.codes == ["Total", " 2", " 9", "10", "99"]
    assert size.is_missing.tolist() == [False, False, False, False, True]


@pytest.mark.parametrize(
    "text, line, words",
    [
        # A a leaf under X and a parent of C, D: two different "A" rows
        ("X\n@A\n@B\nA\n@C\n@D\n", 4, ["'A' appears twice", "a leaf on line 2", "a parent here"]),
        # A its own child: rows written twice
        ("AB\n@A\n@@A\n@B\nC\nD\n", 3, ["'A' is under itself", "ancestor on line 2"]),
        # a leaf repeated (the old check, now naming both lines)
        ("X\n@A\nY\n@A\n", 4, ["'A' appears twice", "a leaf on line 2", "a leaf here"]),
        # a parent that is a leaf elsewhere, leaf first
        ("A\nX\n@A\n@@C\n", 3, ["'A' appears twice", "a leaf on line 1", "a parent here"]),
    ],
)
def test_contradictory_hierarchies_are_refused_naming_both_lines(tmp_path, text, line, words):
    p = tmp_path / "bad.hrc"
    p.write_text(text)
    with pytest.raises(InputError) as info:
        read_hrc(p, "@")
    assert info.value.line == line and info.value.file == str(p)
    for w in words:
        assert w in str(info.value)


def test_parents_may_repeat_under_different_parents(tmp_path):
    """τ-Argus's own NUTS.hrc pattern: `11` under `1` and under `2`, each with its leaves."""
    p = tmp_path / "ok.hrc"
    p.write_text("1\n@11\n@@a\n2\n@11\n@@b\n")
    assert [c for _, c, _ in read_hrc(p, "@")] == ["1", "11", "a", "2", "11", "b"]
