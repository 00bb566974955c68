"""Cell keys (argusqt/docs/methods.md §16.1) checked against the test's own oracle: keys read
from the raw file with Decimal, cells from the `.hrc` files, sums with Python integers."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from ckm_oracle import cell_key, hrc_leaves, key_int
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_paths import tauargus_dir

from argusqt.batch.arb import parse_specify_table
from argusqt.model.cellkey import (
    cell_key_inputs,
    generated_record_keys,
    key_units,
    shift_first_digit_units,
    sum_keys,
)
from argusqt.session import Session


def magnitude_session(tmp_path: Path) -> Session:
    """The Magnitude example of τ-Argus's cellkey folder: Sex × Age, counts and Savings."""
    folder = tmp_path / "Magnitude"
    shutil.copytree(tauargus_dir() / "cellkey" / "Magnitude", folder)
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"<freq>"|""|""'))
    s.specify_table(parse_specify_table('"Sex""Age"|"Savings"|""|""'))
    s.compute_tables()
    return s


def _records(folder: Path) -> list[list[str]]:
    return [line.split(";") for line in (folder / "microdata.csv").read_text().splitlines()]


def test_magnitude_cell_keys_match_the_oracle(tmp_path: Path) -> None:
    s = magnitude_session(tmp_path)
    folder = tmp_path / "Magnitude"
    recs = _records(folder)
    sex = hrc_leaves(folder / "dim_sex.hrc")
    age = hrc_leaves(folder / "dim_age.hrc")
    sex["Total"] = {r[0] for r in recs}
    age["Total"] = {r[1] for r in recs}
    for table in s.tables:
        inputs = cell_key_inputs(table)
        assert inputs is not None
        for c in range(table.n_cells):
            cs, ca = (x.strip() for x in table.cell_codes(c))
            members = [r for r in recs if r[0] in sex[cs] and r[1] in age[ca]]
            keys = [key_int(r[5], 8) for r in members]
            assert inputs.cells.count[c] == len(members)
            assert inputs.cells.key[c] == pytest.approx(cell_key(keys, 8), abs=1e-12)
            if table.spec.response == "Savings" and members:
                nz = [key_int(r[5], 8) for r in members if float(r[3]) != 0]
                assert inputs.cells.key_nonzero[c] == pytest.approx(cell_key(nz, 8), abs=1e-12)
                top = sorted((float(r[3]) for r in members), reverse=True)[:3]
                assert list(inputs.cells.top[c, : len(top)]) == top


def test_cell_keys_follow_a_recode(tmp_path: Path) -> None:
    """A recoded table keeps the keys of its records: the new total cell has the old key."""
    s = magnitude_session(tmp_path)
    before = cell_key_inputs(s.table(1))
    assert before is not None
    total_before = before.cells.key_units[s.table(1).cell_index((0, 0))]
    s.recode(1, "Age", 1)
    assert len(s.table(1).dims[1]) < len(s.tables[1].dims[1])
    after = cell_key_inputs(s.table(1))
    assert after is not None
    assert after.cells.key_units[s.table(1).cell_index((0, 0))] == total_before


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 10**15 - 1), min_size=1, max_size=60),
    st.lists(st.integers(0, 3), min_size=60, max_size=60),
)
def test_key_sums_are_exact_modulo_one(keys: list[int], groups: list[int]) -> None:
    g = np.array(groups[: len(keys)])
    got = sum_keys(g, np.array(keys, dtype=np.int64), 4, 15)
    for k in range(4):
        want = sum(x for x, gg in zip(keys, groups, strict=False) if gg == k) % 10**15
        assert int(got[k]) == want


def test_first_digit_shift_matches_tau_argus_text_rule() -> None:
    """τ-Argus prints the key with n decimals and moves the first decimal to the end."""
    units = np.array([12345678, 5, 90000000, 99999999])
    got = shift_first_digit_units(units, 8)
    for u, g in zip(units, got, strict=True):
        text = f"{u:08d}"
        assert int(g) == int(text[1:] + text[0])


def test_generated_keys_repeat_with_the_seed() -> None:
    a = generated_record_keys(1000, seed=7)
    assert np.array_equal(a, generated_record_keys(1000, seed=7))
    assert not np.array_equal(a, generated_record_keys(1000, seed=8))
    assert (a >= 0).all() and (a < 1).all()
    assert np.array_equal(key_units(a, 15), np.rint(a * 1e15).astype(np.int64))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(-5, 9), st.integers(1, 3)), max_size=40),
    st.integers(1, 3),
)
def test_top_contributions_are_the_largest_per_cell(records, k) -> None:
    """The k largest values per group with their weights, against a plain sort."""
    from argusqt.model.cellkey import fine_cell_keys

    g = np.array([r[0] for r in records], dtype=np.int64)
    x = np.array([r[1] for r in records], dtype=float)
    w = np.array([r[2] for r in records], dtype=float)
    units = np.zeros(len(records), dtype=np.int64)
    got = fine_cell_keys(g, 5, units, 8, x, w, k, contributions=True)
    for grp in range(5):
        mine = sorted(((xx, -i) for i, (gg, xx) in enumerate(zip(g, x, strict=True)) if gg == grp),
                      reverse=True)[:k]  # fmt: skip
        assert list(got.top[grp, : len(mine)]) == [m[0] for m in mine]
        assert list(got.top_weight[grp, : len(mine)]) == [w[-m[1]] for m in mine]
        assert (got.top_weight[grp, len(mine) :] == 0).all()
