"""model.distinct against numpy's own `np.unique` (the reference): the same values, dtype,
shape and order for booleans and integers of every width, empty, one-element, 0-d and
multi-dimensional inputs; floats and other kinds are np.unique's own answer."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from argusqt.model.distinct import sorted_difference, sorted_distinct

PROFILE = settings(max_examples=300, deadline=None, derandomize=True)
INT_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64]  # fmt: skip


def same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=got.dtype.kind in "fc")


@PROFILE
@given(
    hnp.arrays(
        dtype=st.sampled_from(INT_DTYPES),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=12),
    )
)
def test_integers_and_booleans_as_np_unique(a):
    same(sorted_distinct(a), np.unique(a))


@PROFILE
@given(st.lists(st.integers(-3, 3), max_size=40))
def test_lists_with_repeats_as_np_unique(values):
    same(sorted_distinct(values), np.unique(values))


def test_extremes_and_the_input_left_alone():
    a = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0, -1, 0], dtype=np.int64)
    before = a.copy()
    same(sorted_distinct(a), np.unique(a))
    assert np.array_equal(a, before)  # sorted in a copy, as np.unique
    for empty in (np.zeros(0, np.int64), np.zeros((0, 3), np.uint8), np.array(7)):
        same(sorted_distinct(empty), np.unique(empty))


def test_other_kinds_are_np_unique_itself():
    for a in (np.array([0.0, -0.0, np.nan, 1.5, np.nan]), np.array(["b", "a", "b"])):
        same(sorted_distinct(a), np.unique(a))


@PROFILE
@given(
    hnp.arrays(dtype=st.sampled_from(INT_DTYPES), shape=hnp.array_shapes(max_dims=2, max_side=15)),
    hnp.arrays(dtype=st.sampled_from(INT_DTYPES), shape=hnp.array_shapes(max_dims=2, max_side=15)),
)
def test_differences_as_np_setdiff1d(a, b):
    same(sorted_difference(a, b), np.setdiff1d(a, b))


@PROFILE
@given(st.lists(st.integers(-4, 4), max_size=30), st.lists(st.integers(-4, 4), max_size=30))
def test_differences_of_lists_with_repeats_as_np_setdiff1d(a, b):
    same(sorted_difference(a, b), np.setdiff1d(a, b))
    same(sorted_difference(np.array(a, np.int32), np.array(b, np.int64)),
         np.setdiff1d(np.array(a, np.int32), np.array(b, np.int64)))  # fmt: skip


def test_differences_of_other_kinds_as_np_setdiff1d():
    a, b = np.array([0.5, np.nan, -0.0, 2.0, 0.5]), np.array([0.0, 7.0])
    same(sorted_difference(a, b), np.setdiff1d(a, b))
