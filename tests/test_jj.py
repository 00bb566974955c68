"""JJ output and input (argusqt/docs/formats.md §9) on the batch_ex1 table built by hand."""

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
    # the leading 0, then the CONFIDENTIAL banner as a comment τ-Argus's JJ reader ignores
    assert (
        lines[0]
        == "0 // CONFIDENTIAL — not for publication: values, statuses and protection levels of every cell"
    )
    assert lines[1] == "15"
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
    good.write_text("0\n2\n0 1.5 1 s 0 10 0 0 0\n1 3 1 u 0 10 1 1 0\n1\n3 2 : 0 (3) 1 (-0.5)\n")
    p = read_jj(good)
    assert p.rhs.tolist() == [3.0]
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


# ---------------------------------------------------------------------- issue 15 defects
def _hier_table(decimals: int = 0, scale: float = 1.0, places: int = 3) -> Table:
    """Region (A = A1 + A2, B = B1 + B2) × gender (m, f) from leaves of `places` decimals."""
    from protect_helpers import flat_codelist, hier_codelist, table_from_leaves

    dims = [hier_codelist("region", [2, 2]), flat_codelist("gender", 2)]
    leaves = np.array([[12.125, 7.5], [3.333, 9.001], [20.0, 1.25], [4.875, 6.002]]) * scale
    leaves = np.round(leaves, places)
    t = table_from_leaves(dims, leaves, decimals=decimals)
    t.status = np.ones(t.n_cells, dtype=np.int8)
    t.status[t.cell_index((2, 1))] = 3
    t.lpl = np.where(t.status == 3, 0.5, 0.0)
    t.upl = t.lpl.copy()
    return t


def test_writer_keeps_decimals_the_metadata_does_not_declare(tmp_path):
    # regression: 3-decimal values without <DECIMALS> were written as integers, so the
    # totals no longer added up in the JJ file
    t = _hier_table(decimals=0)
    out = tmp_path / "t.jj"
    write_jj(t, out)
    cell = out.read_text().splitlines()[2].split()
    assert cell[1] == f"{t.value[0]:.3f}"
    p = read_jj(out)
    np.testing.assert_allclose(p.values, t.value, atol=1e-9)
    np.testing.assert_allclose(p.relations @ p.values, 0.0, atol=1e-9)
    assert p.decimals == 3


def test_reader_rejects_relations_that_do_not_hold(tmp_path):
    bad = tmp_path / "bad.jj"
    bad.write_text(
        "0\n3\n0 10.00 1 s 0 30 0 0 0\n1 4.00 1 u 0 30 1 1 0\n2 5.00 1 s 0 30 0 0 0\n"
        "1\n0 3 : 0 (-1) 1 (1) 2 (1)\n"
    )
    with pytest.raises(InputError, match="relation 1 does not hold") as err:
        read_jj(bad)
    assert err.value.line == 7 and "bad.jj" in str(err.value)


def test_totals_off_by_rounding_no_longer_crash_opt(tmp_path):
    # regression: OPT on a JJ file whose totals were 0.01 off crashed inside a SCIP
    # callback ("attacker LP not solved: Infeasible" → "SCIP: unspecified error")
    from argusqt.model.status import is_suppressed
    from argusqt.protection.audit.outsider import audit
    from argusqt.protection.run import run_method

    t = _hier_table(decimals=2, places=2)
    out = tmp_path / "t.jj"
    write_jj(t, out)
    text = out.read_text().splitlines()
    first = text[2].split()
    first[1] = f"{float(first[1]) + 0.01:.2f}"  # the grand total 0.01 off
    text[2] = " ".join(first)
    out.write_text("\n".join(text) + "\n")
    p = read_jj(out)
    np.testing.assert_allclose(p.relations @ p.values, p.rhs, atol=1e-9)  # noise absorbed
    r = run_method(p, "OPT", {"max_time": 30})
    assert audit(p, is_suppressed(r.status)).ok


def test_table_loaded_from_jj_keeps_its_structure(tmp_path):
    # regression: a table read from JJ had no dimensions (MOD refused it, HEUR had no
    # neighbourhoods and slowed down 100×)
    from argusqt.protection.run import run_method

    t = _hier_table(decimals=3)
    out = tmp_path / "t.jj"
    write_jj(t, out)
    p = read_jj(out)
    assert p.dims is not None
    assert [len(d) for d in p.dims] == [len(d) for d in t.dims]
    for mine, theirs in zip(p.dims, t.dims, strict=True):
        assert mine.parent.tolist() == theirs.parent.tolist()
    assert run_method(p, "MOD", {"max_time_per_subtable": 30}).audit.ok
    # relations that are not a table's: no structure, nothing invented
    other = tmp_path / "o.jj"
    other.write_text("0\n3\n0 9 1 s 0 30 0 0 0\n1 4 1 u 0 30 1 1 0\n2 5 1 s 0 30 0 0 0\n"
                     "1\n0 3 : 2 (-1) 0 (1) 1 (-1)\n")  # fmt: skip
    assert read_jj(other).dims is None


def test_reader_takes_real_costs_instead_of_the_scaled_ones(tmp_path):
    t = _hier_table(decimals=3, scale=1000.0)
    out = tmp_path / "t.jj"
    write_jj(t, out)
    scaled = read_jj(out)
    assert scaled.cost.max() == 20000  # JJ costs: τ-Argus's integers
    real = read_jj(out, cost=t.cost)
    np.testing.assert_allclose(real.cost, t.cost)
    with pytest.raises(InputError, match="real costs"):
        read_jj(out, cost=t.cost[:3])
