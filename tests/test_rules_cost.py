"""Cell costs (argusqt/docs/rules.md §6) and the JJ integer scaling
(argusqt/docs/formats.md §9.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from argusqt.errors import SpecificationError
from argusqt.model.codelist import CodeList
from argusqt.model.table import CostSpec, Table, TableSpec
from argusqt.rules.cost import DISTANCE_FAR, compute_cost, scaled_integer_cost


def table_1d(cost_raw, freq, kind="variable", lam=1.0, codes=None) -> Table:
    codes = codes or [f"{i}" for i in range(1, len(cost_raw))]
    dim = CodeList.flat("x", codes)
    v = np.asarray(cost_raw, dtype=float)
    spec = TableSpec(["x"], "y", cost=CostSpec(kind, None, lam))
    return Table(spec, [dim], v, np.asarray(freq, float), v, v, np.zeros((len(v), 2)))


def test_variable_frequency_unity():
    t = table_1d([9.0, 4.0, -5.0], [3, 1, 2])
    compute_cost(t)
    assert t.cost.tolist() == [9.0, 4.0, 5.0]
    t = table_1d([9.0, 4.0, 5.0], [3, 1, 2], kind="frequency")
    compute_cost(t)
    assert t.cost.tolist() == [3.0, 1.0, 2.0]
    t = table_1d([9.0, 4.0, 5.0], [3, 1, 2], kind="unity", lam=0.5)
    compute_cost(t)
    assert t.cost.tolist() == [1.0, 1.0, 1.0]


def test_lambda_transform():
    t = table_1d([9.0, 4.0, 16.0], [3, 1, 2], lam=0.5)
    compute_cost(t)
    assert t.cost.tolist() == [3.0, 2.0, 4.0]
    t = table_1d([9.0, 4.0, 0.0], [3, 1, 2], lam=0.0)
    compute_cost(t)
    assert t.cost == pytest.approx([math.log(10), math.log(5), 0.0])
    t = table_1d([9.0, 4.0, 0.0], [3, 1, 2], lam=1.5)
    with pytest.raises(SpecificationError, match="lambda"):
        compute_cost(t)


def test_scaled_integer_cost():
    assert scaled_integer_cost(np.array([5146, 2757, 137, 0.01])).tolist() == [20000, 10715, 532, 1]
    assert scaled_integer_cost(np.array([0.0, 0.0])).tolist() == [1, 1]


def test_distance_cost_2d():
    # rows 1..4, cols 1..3; primary at (row 2, col 2); distances rows 1,2,3 / cols 5 (repeated)
    rows = CodeList.flat("r", ["1", "2", "3", "4"])
    cols = CodeList.flat("c", ["1", "2", "3"])
    n = 5 * 4
    v = np.arange(1.0, n + 1)
    spec = TableSpec(["r", "c"], "y", cost=CostSpec("distance"))
    t = Table(spec, [rows, cols], v, np.ones(n), v, v, np.zeros((n, 2)))
    p = t.cell_index((2, 2))
    t.status[p] = 3
    compute_cost(t, [[1, 2, 3], [5]])
    c = t.cost.reshape(5, 4)
    assert c[1, 2] == 1 and c[3, 2] == 1 and c[4, 2] == 2  # along rows: steps 1, 1, 2
    assert c[2, 1] == 5 and c[2, 3] == 5  # along columns
    assert c[0, 2] == DISTANCE_FAR and c[2, 0] == DISTANCE_FAR  # marginals excluded
    assert c[1, 1] == DISTANCE_FAR  # on no line through the primary
    with pytest.raises(SpecificationError, match="per dimension"):
        compute_cost(t, [[1]])
