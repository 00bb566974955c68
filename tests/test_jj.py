"""JJ output and input (formats.md §9) on the batch_ex1 table built by hand (E8 values)."""

from __future__ import annotations

import numpy as np
import pytest
from test_export_text import ex1_table

from argusqt.errors import InputError
from argusqt.io.jj import read_jj, reduce_trivial, scaled_costs, write_jj
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec

EX1_RELATIONS = """\
0 5 : 0 (-1) 3 (1) 6 (1) 9 (1) 12 (1)
0 5 : 1 (-1) 4 (1) 7 (1) 10 (1) 13 (1)
0 5 : 2 (-1) 5 (1) 8 (1) 11 (1) 14 (1)
0 3 : 0 (-1) 1 (1) 2 (1)
0 3 : 3 (-1) 4 (1) 5 (1)
0 3 : 6 (-1) 7 (1) 8 (1)
0 3 : 9 (-1) 10 (1) 11 (1)
0 3 : 12 (-1) 13 (1) 14 (1)""".splitlines()


def _primary_only():
    t = ex1_table()
    t.status[:] = 1
    t.status[5] = 9
    return t


def test_jj_ex1_exact(tmp_path):
    out = tmp_path / "ex1.jj"
    write_jj(_primary_only(), out)
    lines = out.read_text().splitlines()
    assert lines[:2] == ["0", "15"]
    assert lines[2] == "0 5146 20000 s 0 7719 0.000 0.000 0"
    assert lines[3] == "1 2757 10715 s 0 7719 0.000 0.000 0"
    assert lines[4] == "2 2389 9285 s 0 7719 0.000 0.000 0"
    assert lines[5] == "3 1032 4011 s 0 7719 0.000 0.000 0"
    assert lines[6] == "4 895 3478 s 0 7719 0.000 0.000 0"
    assert lines[7] == "5 137 532 u 0 7719 1.000 1.000 0"
    assert lines[16] == "14 793 3082 s 0 7719 0.000 0.000 0"
    assert lines[17] == "8"
    assert lines[18:] == EX1_RELATIONS


def test_jj_status_letters_and_roundtrip(tmp_path):
    t = ex1_table()  # statuses 2, 9, 12
    t.status[14] = 14
    t.status[13] = 10
    out = tmp_path / "ex1.jj"
    write_jj(t, out)
    letters = [line.split()[3] for line in out.read_text().splitlines()[2:17]]
    assert letters[4] == "m" and letters[5] == "u" and letters[13] == "z" and letters[14] == "z"
    assert letters[0] == "s"
    p = read_jj(out)
    assert p.n_cells == 15
    np.testing.assert_allclose(p.values, t.value)
    assert p.relations.shape == (8, 15)
    np.testing.assert_allclose(p.relations @ p.values, p.rhs)
    assert p.status[5] == 9 and p.status[4] == 11 and p.status[0] == 1
    assert p.lpl[5] == 1 and p.upl[5] == 1 and p.lpl[0] == 0
    assert p.cost[0] == 20000 and p.upper[0] == 7719


def test_jj_reader_accepts_any_coefficient_and_reports_lines(tmp_path):
    good = tmp_path / "g.jj"
    good.write_text("0\n2\n0 1.5 1 s 0 10 0 0 0\n1 3 1 u 0 10 1 1 0\n1\n4.5 2 : 0 (3) 1 (-0.5)\n")
    p = read_jj(good)
    assert p.rhs.tolist() == [4.5]
    assert p.relations.toarray().tolist() == [[3.0, -0.5]]
    bad = tmp_path / "b.jj"
    bad.write_text("0\n2\n0 1.5 1 s 0 10 0 0 0\n1 3 1 q 0 10 1 1 0\n0\n")
    with pytest.raises(InputError, match="status") as err:
        read_jj(bad)
    assert err.value.line == 4
    bad.write_text("0\n2\n0 1.5 1 s 0 10 0 0 0\n1 abc 1 u 0 10 1 1 0\n0\n")
    with pytest.raises(InputError, match="abc") as err:
        read_jj(bad)
    assert err.value.line == 4
    bad.write_text("0\n1\n0 1 1 s 0 10 0 0 0\n1\n0 2 : 0 (1) 7 (1)\n")
    with pytest.raises(InputError, match="out of range") as err:
        read_jj(bad)
    assert err.value.line == 5


def test_cost_scaling_minimum_and_unity():
    assert scaled_costs(np.array([1.0, 40000.0, 0.0])).tolist() == [1, 20000, 1]
    assert scaled_costs(np.array([3.0, 5.0]), unity=True).tolist() == [1, 1]


def test_jj_counts_manual_example_e15_7():
    """Size 9 codes (flat) × Region 18 codes with 5 parents: 162 cells, 63 relations."""
    size = CodeList.flat("Size", [f"{i:2d}" for i in range(1, 9)])
    region = CodeList.from_tree(
        "Region",
        [(1, "Nr"), (2, " 1"), (2, " 2"), (2, " 3"), (1, "Os"), (2, " 4"), (2, " 5"),
         (2, " 6"), (2, " 7"), (1, "Ws"), (2, " 8"), (2, " 9"), (2, "10"), (1, "Zd"),
         (2, "11"), (2, "12")],
        missing=["99"],
    )  # fmt: skip
    assert len(size) == 9 and len(region) == 18
    t = Table(
        spec=TableSpec(["Size", "Region"], None),
        dims=[size, region],
        value=np.ones(162),
        freq=np.ones(162),
        shadow=np.ones(162),
        cost_raw=np.ones(162),
        top=np.zeros((162, 2)),
    )
    assert t.relations.shape == (63, 162)


def test_trivial_levels_removed(tmp_path):
    # A has the single child A1 (a trivial level): A1 is dropped, A stands for both
    region = CodeList.from_tree("region", [(1, "A"), (2, "A1"), (1, "B")])
    dims, kept = reduce_trivial([region])
    assert dims[0].codes == ["Total", "A", "B"] and kept[0].tolist() == [0, 1, 3]
    v = np.array([5.0, 2.0, 2.0, 3.0])
    t = Table(
        spec=TableSpec(["region"], None),
        dims=[region],
        value=v,
        freq=v,
        shadow=v,
        cost_raw=v,
        top=np.zeros((4, 2)),
    )
    out = tmp_path / "tr.jj"
    write_jj(t, out, trivial_removed=True)
    lines = out.read_text().splitlines()
    assert lines[1] == "3"
    assert lines[5:] == ["1", "0 3 : 0 (-1) 1 (1) 2 (1)"]
    write_jj(t, out)
    assert out.read_text().splitlines()[1] == "4"
