"""Global recode: `.grc` parsing (argusqt/docs/formats.md §6), codelist transforms, tables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argusqt.errors import InputError, SpecificationError
from argusqt.model.codelist import CodeList
from argusqt.model.table import TableSpec
from argusqt.model.tabulate import build_fine, table_from_fine
from argusqt.recode.apply import (
    fold_hierarchy,
    original_codelist,
    recode_flat,
    recode_table,
    recode_variable,
    undo_recode,
)
from argusqt.recode.grc import RecodeSpec, grc_text, read_grc, write_grc

CODES_182 = [f"{i:3d}" for i in range(1, 183)]


def _grc(tmp_path: Path, text: str, name: str = "r.grc") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("latin-1"))
    return p


# ---------------------------------------------------------------------------- parsing
def test_e15_2_width3_ranges(tmp_path):
    p = _grc(tmp_path, "1: - 49\n2: 50 - 99\n3: 100 - 149\n4: 150 -\n")
    spec = read_grc(p, 3, CODES_182)
    counts = Counter(spec.mapping.values())
    assert counts == {"1": 49, "2": 50, "3": 50, "4": 33}
    assert spec.mapping["  1"] == "1" and spec.mapping["  9"] == "1"
    assert spec.mapping[" 49"] == "1" and spec.mapping[" 50"] == "2"
    assert spec.mapping["149"] == "3" and spec.mapping["182"] == "4"
    assert not any("untouched" in w for w in spec.warnings)


def test_e15_2_width2_padding_and_lists(tmp_path):
    size = [f"{i:2d}" for i in range(1, 10)]
    spec = read_grc(_grc(tmp_path, "1:1-5\n"), 2, [*size, "99"], missing=["99"])
    assert [c for c, d in spec.mapping.items() if d == " 1"] == [" 1", " 2", " 3", " 4", " 5"]
    assert spec.mapping[" 6"] == " 6" and spec.mapping["99"] == "99"
    assert spec.new_missing == ["99"]
    assert "4 code(s) not mentioned keep their own code (untouched)" in spec.warnings
    codes = [f"{i:02d}" for i in range(1, 11)]
    spec = read_grc(_grc(tmp_path, "1: 02 - 06, 09\n"), 2, codes)
    assert sorted(c for c, d in spec.mapping.items() if d == " 1") == [
        "02",
        "03",
        "04",
        "05",
        "06",
        "09",
    ]
    # destinations padded to the common width of destinations and untouched codes
    assert spec.mapping["01"] == "01" and spec.mapping["10"] == "10"


def test_quoted_codes_overlap_and_no_sense(tmp_path):
    codes = ["  a", "  b", " cc", "ddd"]
    text = 'X: "  a", b\nY: b, zz\nZ: "q" - "r"\n'
    spec = read_grc(_grc(tmp_path, text), 3, codes)
    assert spec.mapping["  a"] == "  X"  # width 3 = longest untouched code
    assert spec.mapping["  b"] == "  Y"  # later assignment wins
    assert any("overlap" in w and "'b'" in w for w in spec.warnings)
    assert any("'zz'" in w and "no sense" in w for w in spec.warnings)
    assert any("selects no code" in w for w in spec.warnings)
    assert any(w.startswith("2 code(s)") for w in spec.warnings)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("1: 01\n2 03\n", 2, "column 2: expected ':'"),
        ("1: 05-02\n", 1, "lower > upper"),
        ("1: 123\n", 1, "longer than the variable width 2"),
        ("1: 01 02\n", 1, "expected ',' between items"),
        ("1: 01,\n", 1, "after ','"),
        ("1:\n", 1, "at least one code"),
        ('1: "01\n', 1, "not closed"),
        ("<MISS> 9\n", 1, "unknown keyword"),
        ("1: 01\n<TREERECODE>\n", 2, "first line"),
    ],
)
def test_errors_name_file_line_and_position(tmp_path, text, line, fragment):
    p = _grc(tmp_path, text)
    with pytest.raises(InputError) as info:
        read_grc(p, 2, ["01", "02", "03"])
    err = info.value
    assert err.file == str(p) and err.line == line
    assert fragment in err.message


def test_missing_codes_rules(tmp_path):
    codes = ["01", "02", "98", "99"]
    ok = read_grc(_grc(tmp_path, "<MISSING> 9\n9: 98, 99\n1: 01\n"), 2, codes, ["98", "99"])
    assert ok.new_missing == [" 9"]
    assert ok.mapping["98"] == " 9" and ok.mapping["99"] == " 9"
    with pytest.raises(InputError, match="may only be recoded into a missing code"):
        read_grc(_grc(tmp_path, "1: 01, 99\n"), 2, codes, ["98", "99"])
    with pytest.raises(InputError, match="only missing codes may become missing"):
        read_grc(_grc(tmp_path, "<MISSING> 7\n7: 01\n"), 2, codes, ["98", "99"])


def test_real_files_parse(shared_data):
    d = shared_data / "tau_testW"
    spec = read_grc(d / "GK.GRC", 2, [f"{i:2d}" for i in range(1, 10)], ["99"])
    assert not spec.tree and spec.lines[0].dest == "1"
    tree = read_grc(d / "IndCode2.grc", 5, ["142", "1421", "1500", "1512", "15120"])
    assert tree.tree and tree.collapse == ["142", "1500", "1512"]
    with pytest.raises(InputError) as info:
        read_grc(d / "IndCode2.grc", 5, ["142", "1500"])
    assert info.value.line == 4 and "'1512'" in info.value.message


def test_write_read_round_trip(tmp_path):
    text = '<MISSING> 9\n<CODELIST> "new labels.cdl"\nA: -"  b", cc\nB: dd-ee, ff-\n'
    codes = ["  a", "  b", " cc", " dd", " ee", " ff", " gg"]
    spec = read_grc(_grc(tmp_path, text), 3, codes)
    out = tmp_path / "out.grc"
    write_grc(out, spec)
    again = read_grc(out, 3, codes)
    assert again.mapping == spec.mapping and again.codelist_file == "new labels.cdl"
    assert again.missing == ["9"]
    tree = RecodeSpec.tree_collapse(["142", "1500"])
    assert grc_text(tree) == "<TREERECODE>\n142\n1500\n"
    built = RecodeSpec.from_groups(2, {"1": [" 1", " 2"]})
    assert read_grc(_grc(tmp_path, grc_text(built)), 2, [" 1", " 2", " 3"]).mapping == {
        " 1": " 1",
        " 2": " 1",
        " 3": " 3",
    }


# ---------------------------------------------------------------------------- codelists
def _tree() -> CodeList:
    # Total; A (A1 (A11, A12), A2); B (B1); missing 99
    return CodeList.from_tree(
        "v",
        [(1, "A"), (2, "A1"), (3, "A11"), (3, "A12"), (2, "A2"), (1, "B"), (2, "B1")],
        missing=["99"],
        labels={"A": "alpha"},
    )


def test_fold_by_code_and_level():
    cl = _tree()
    new, m = fold_hierarchy(cl, ["A1"])
    assert new.codes == ["Total", "A", "A1", "A2", "B", "B1", "99"]
    assert m.tolist() == [0, 1, 2, 2, 2, 3, 4, 5, 6]
    assert new.is_leaf[2] and new.is_missing.tolist() == [False] * 6 + [True]
    assert new.label(1) == "alpha"
    lvl1, m1 = fold_hierarchy(cl, level=1)
    assert lvl1.codes == ["Total", "A", "B", "99"]
    assert m1.tolist() == [0, 1, 1, 1, 1, 1, 2, 2, 3]
    lvl2, _ = fold_hierarchy(cl, level=2)
    assert lvl2.codes == ["Total", "A", "A1", "A2", "B", "B1", "99"]
    with pytest.raises(InputError):
        fold_hierarchy(cl, ["nope"])
    with pytest.raises(SpecificationError):
        fold_hierarchy(CodeList.flat("f", ["1"]), level=1)


def test_fold_repeated_code_collapses_every_copy():
    cl = CodeList.from_tree(
        "mun", [(1, "1"), (2, "11"), (3, "a"), (1, "2"), (2, "11"), (3, "b"), (3, "c")]
    )
    new, m = fold_hierarchy(cl, ["11"])
    assert new.codes == ["Total", "1", "11", "2", "11"]
    assert m.tolist() == [0, 1, 2, 2, 3, 4, 4, 4]


def test_recode_flat_codelist_and_labels(tmp_path):
    (tmp_path / "L.CDL").write_text("1,small\n6,size 2\n")
    cl = CodeList.flat("Size", [f"{i:2d}" for i in range(1, 10)], missing=["99"])
    spec = read_grc(_grc(tmp_path, '<CODELIST> "l.cdl"\n1:1-5\n'), 2, cl.codes[1:], ["99"])
    new, m = recode_flat(cl, spec)
    assert new.codes == ["Total", " 1", " 6", " 7", " 8", " 9", "99"]
    assert m.tolist() == [0, 1, 1, 1, 1, 1, 2, 3, 4, 5, 6]
    assert new.label(1) == "small" and new.label(2) == "size 2" and new.label(3) == " 7"
    with pytest.raises(SpecificationError, match="hierarchical"):
        recode_flat(_tree(), spec)


# ---------------------------------------------------------------------------- tables
def _small_table():
    size_cats = ["1", "2", "3", "9"]
    reg_cats = ["A11", "A12", "A2", "B1"]
    rng = np.random.default_rng(5)
    n = 300
    s = rng.integers(0, 4, n)
    r = rng.integers(0, 4, n)
    val = rng.gamma(2.0, 50.0, n).round(2)
    spec = TableSpec(["size", "v"], "x")
    fine = build_fine([(s, size_cats), (r, reg_cats)], val, None, None, 3)
    size = CodeList.flat("size", ["1", "2", "3"], missing=["9"])
    reg = _tree()
    maps = [
        np.array([size.leaf_index[c] for c in size_cats]),
        np.array([reg.leaf_index[c] for c in reg_cats]),
    ]
    return table_from_fine(fine, [size, reg], maps, spec, 2), (s, r, val, size_cats, reg_cats)


def test_recode_table_equals_direct_tabulation(tmp_path):
    table, (s, r, val, size_cats, reg_cats) = _small_table()
    spec = read_grc(_grc(tmp_path, "1: 1-2\n"), 1, ["1", "2", "3"], ["9"])
    t1, warn = recode_variable(table, "SIZE", spec)
    assert warn == ["1 code(s) not mentioned keep their own code (untouched)"]
    t2, _ = recode_variable(t1, "v", 1)  # batch digit: collapse level 1
    assert t2.dims[0].codes == ["Total", "1", "3", "9"]
    assert t2.dims[1].codes == ["Total", "A", "B", "99"]
    # direct: recode the records, tabulate from scratch
    s2 = np.array([0, 0, 1, 2])[s]
    r2 = np.array([0, 0, 0, 1])[r]
    fine = build_fine([(s2, ["1", "3", "9"]), (r2, ["A", "B"])], val, None, None, 3)
    dims = [
        CodeList.flat("size", ["1", "3"], missing=["9"]),
        CodeList.from_tree("v", [(1, "A"), (1, "B")], missing=["99"]),
    ]
    maps = [np.array([1, 2, 3]), np.array([1, 2])]
    direct = table_from_fine(fine, dims, maps, TableSpec(["size", "v"], "x"), 2)
    np.testing.assert_allclose(t2.value, direct.value)
    np.testing.assert_array_equal(t2.freq, direct.freq)
    np.testing.assert_allclose(t2.top, direct.top)
    np.testing.assert_array_equal(t2.status, direct.status)
    assert t2.recode_state.recodes == {"size": "r.grc", "v": "level 1"}
    # undo one recode: back to the original Size coding, v stays recoded
    u = undo_recode(t2, "size")
    assert u.dims[0] is table.dims[0] and u.dims[1].codes == t2.dims[1].codes
    np.testing.assert_allclose(
        u.value.reshape(u.shape)[:, 0], table.value.reshape(table.shape)[:, 0]
    )
    back = undo_recode(u, "v")
    np.testing.assert_allclose(back.value, table.value)
    np.testing.assert_allclose(back.top, table.top)
    assert back.recode_state is None and original_codelist(t2, "v") is table.dims[1]


def test_recode_map_must_come_from_original(tmp_path):
    table, _ = _small_table()
    new, m = fold_hierarchy(table.dims[1], level=1)
    with pytest.raises(SpecificationError, match="original codelist"):
        recode_table(table, "v", new, m[:-1])
    with pytest.raises(SpecificationError, match="not an explanatory"):
        recode_table(table, "w", new, m)


def test_en_dash_is_an_error_with_a_hint(tmp_path):
    p = tmp_path / "r.grc"
    p.write_text("2: 50 \u2013 99\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_grc(p, 3, CODES_182)
    assert info.value.line == 1 and "column 7" in info.value.message
    assert "ASCII '-'" in info.value.message


# ---------------------------------------------------------------------------- property
@settings(max_examples=40, deadline=None)
@given(
    group=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    fold=st.lists(st.booleans(), min_size=3, max_size=3),
    seed=st.integers(0, 10_000),
)
def test_recode_equals_direct_tabulation_property(group, fold, seed):
    """Any flat grouping × any fold of a 2-level tree = tabulating the recoded records."""
    rng = np.random.default_rng(seed)
    flat_codes = [f"{i}" for i in range(6)]
    tree_entries = [(1, "P"), (2, "P0"), (2, "P1"), (1, "Q"), (2, "Q0"), (1, "R"), (2, "R0")]
    tree_entries += [(2, "R1"), (2, "R2")]
    leaves = ["P0", "P1", "Q0", "R0", "R1", "R2"]
    n = 60
    a = rng.integers(0, 6, n)
    b = rng.integers(0, 6, n)
    x = rng.gamma(1.5, 10.0, n).round(2)
    spec = TableSpec(["f", "t"], "x")
    flat = CodeList.flat("f", flat_codes)
    tree = CodeList.from_tree("t", tree_entries)
    fine = build_fine([(a, flat_codes), (b, leaves)], x, None, None, 3)
    maps = [np.arange(1, 7), np.array([tree.leaf_index[c] for c in leaves])]
    table = table_from_fine(fine, [flat, tree], maps, spec, 2)
    # recode via the module
    groups: dict[str, list[str]] = {}
    for code, g in zip(flat_codes, group, strict=True):
        groups.setdefault(f"g{g}", []).append(code)
    rspec = RecodeSpec.from_groups(1, groups)
    new_flat, fmap = recode_flat(flat, rspec)
    t1 = recode_table(table, "f", new_flat, fmap)
    parents = [p for p, on in zip(["P", "Q", "R"], fold, strict=True) if on]
    new_tree, tmap = fold_hierarchy(tree, parents)
    t2 = recode_table(t1, "t", new_tree, tmap)
    # direct: recode the records and tabulate from scratch with independently built codelists
    a_codes = np.array([f"g{g}" for g in group])[a]
    b_codes = np.array([c[0] if c[0] in parents else c for c in leaves])[b]
    ua, ia = np.unique(a_codes, return_inverse=True)
    ub, ib = np.unique(b_codes, return_inverse=True)
    dflat = CodeList.flat("f", list(ua))
    entries = []
    for p in ["P", "Q", "R"]:
        entries.append((1, p))
        if p not in parents:
            entries += [(2, c) for c in leaves if c[0] == p]
    dtree = CodeList.from_tree("t", entries)
    dfine = build_fine([(ia, list(ua)), (ib, list(ub))], x, None, None, 3)
    dmaps = [
        np.array([dflat.leaf_index[c] for c in ua]),
        np.array([dtree.leaf_index[c] for c in ub]),
    ]
    direct = table_from_fine(dfine, [dflat, dtree], dmaps, spec, 2)
    assert t2.dims[0].codes == dflat.codes and t2.dims[1].codes == dtree.codes
    np.testing.assert_allclose(t2.value, direct.value)
    np.testing.assert_array_equal(t2.freq, direct.freq)
    np.testing.assert_allclose(t2.top, direct.top)
    back = undo_recode(undo_recode(t2, "t"), "f")
    np.testing.assert_allclose(back.value, table.value)


def test_recode_recomputes_rules_and_costs(tmp_path):
    from argusqt.model.rulespec import FreqRule, SafetyRules
    from argusqt.model.table import CostSpec

    table, _ = _small_table()
    table.spec = TableSpec(
        ["size", "v"],
        "x",
        cost=CostSpec("frequency", lam=0.5),
        rules=SafetyRules(freq_individual=FreqRule(30, 10)),
    )
    t, _ = recode_variable(table, "v", 1)
    np.testing.assert_allclose(t.cost, np.sqrt(t.freq))
    unsafe = (t.freq > 0) & (t.freq < 30)
    assert unsafe.any()
    assert ((t.status == 5) == unsafe).all()
    np.testing.assert_allclose(t.upl[unsafe], 0.1 * np.abs(t.value[unsafe]), rtol=1e-9)
    # distance costs use the <DISTANCE> lists passed along
    table.spec = TableSpec(["size", "v"], "x", cost=CostSpec("distance"), rules=table.spec.rules)
    near, _ = recode_variable(table, "v", 1, distance_per_dim=[[7, 8], [9]])
    plain, _ = recode_variable(table, "v", 1)
    assert 7.0 in near.cost and 7.0 not in plain.cost


def test_bom_crlf_tabs_and_missing_file(tmp_path):
    p = tmp_path / "b.grc"
    p.write_bytes(b"\xef\xbb\xbf1:\t1-2\r\n\r\n3: 3\r\r\n")
    spec = read_grc(p, 1, ["1", "2", "3"])
    assert spec.mapping == {"1": "1", "2": "1", "3": "3"} and spec.lines[1].line == 3
    with pytest.raises(InputError, match="not found"):
        read_grc(tmp_path / "nope.grc", 1, ["1"])


def test_parse_grc_from_editor_text():
    from argusqt.recode.grc import parse_grc

    spec = parse_grc(["1:\t1-2", "", "2: 3"], 1, ["1", "2", "3", "4"], where="editor")
    assert spec.mapping == {"1": "1", "2": "1", "3": "2", "4": "4"}
    assert spec.warnings == ["1 code(s) not mentioned keep their own code (untouched)"]
    with pytest.raises(InputError) as info:
        parse_grc(["1: 1", "x"], 1, ["1"], where="editor")
    assert str(info.value).startswith("editor, line 2: column 2: expected ':'")
