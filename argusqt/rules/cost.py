"""Cost of suppressing each cell (argusqt/docs/rules.md §6): variable, frequency, unity,
distance, λ transform."""

from __future__ import annotations

import numpy as np

from argusqt.errors import SpecificationError
from argusqt.model.status import is_primary
from argusqt.model.table import Table

#: Integer costs of the optimisation models are scaled so that the largest is this
#: (argusqt/docs/formats.md §9.2).
MAX_SCALED_COST = 20000
#: Distance cost of a cell on no line through a primary ("a large default",
#: argusqt/docs/rules.md §6).
DISTANCE_FAR = 1000.0


def lambda_transform(c: np.ndarray, lam: float) -> np.ndarray:
    """c^λ for λ > 0, ln(c + 1) for λ = 0 (argusqt/docs/rules.md §6)."""
    if not 0.0 <= lam <= 1.0:
        raise SpecificationError(f"lambda must be between 0 and 1, got {lam:g}")
    c = np.asarray(c, dtype=float)
    if lam == 0.0:
        return np.log1p(c)
    if lam == 1.0:
        return c.copy()
    return np.power(c, lam)


def distance_steps(values: list[int] | None) -> list[float]:
    """Five costs d1..d5; missing ones repeat the previous one, none given → all 1."""
    vals = [float(v) for v in (values or [])][:5] or [1.0]
    return vals + [vals[-1]] * (5 - len(vals))


def distance_cost(table: Table, distance_per_dim: list[list[int]] | None = None) -> np.ndarray:
    """Per cell: the smallest d_j[min(steps, 5)] over lines along j through primaries (siblings)."""
    shape = table.shape
    n = table.n_cells
    if distance_per_dim is not None and len(distance_per_dim) != table.ndim:
        raise SpecificationError(
            f"distance costs need one <DISTANCE> list per dimension ({table.ndim}), "
            f"got {len(distance_per_dim)}"
        )
    given: list[list[int] | None] = (
        list(distance_per_dim) if distance_per_dim else [None] * table.ndim
    )
    dists = [distance_steps(d) for d in given]
    far = max(DISTANCE_FAR, 10.0 * max(max(d) for d in dists))
    cost = np.full(n, far)
    prim = np.flatnonzero(is_primary(table.status))
    if prim.size == 0:
        return cost
    nodes = np.stack(np.unravel_index(prim, shape), axis=1)  # (n_prim, ndim)
    strides = np.array([int(np.prod(shape[j + 1 :])) for j in range(len(shape))], dtype=np.int64)
    for j, dim in enumerate(table.dims):
        steps_cost = np.asarray(dists[j])
        pos = np.zeros(len(dim), dtype=np.int64)
        for kids in dim.children:
            pos[kids] = np.arange(len(kids))
        for p, node in zip(prim, nodes[:, j], strict=True):
            par = int(dim.parent[node])
            if par < 0:
                continue  # the primary is the total of this dimension: no line of siblings
            sib = np.asarray(dim.children[par], dtype=np.int64)
            steps = np.abs(pos[sib] - pos[node])
            keep = steps > 0
            cells = p + (sib[keep] - node) * strides[j]
            np.minimum.at(cost, cells, steps_cost[np.minimum(steps[keep], 5) - 1])
    return cost


def compute_cost(table: Table, distance_per_dim: list[list[int]] | None = None) -> None:
    """Set `table.cost` (effective, after λ) from `cost_raw` and the table's CostSpec."""
    spec = table.spec.cost
    if spec.kind == "variable":
        c = np.abs(np.asarray(table.cost_raw, dtype=float))
    elif spec.kind == "frequency":
        c = np.asarray(table.freq, dtype=float).copy()
    elif spec.kind == "unity":
        table.cost = np.ones(table.n_cells)
        return
    elif spec.kind == "distance":
        c = distance_cost(table, distance_per_dim)
    else:
        raise SpecificationError(f"unknown cost function {spec.kind!r}")
    table.cost = lambda_transform(c, spec.lam)


def scaled_integer_cost(cost: np.ndarray) -> np.ndarray:
    """round(c · 20000 / max c), at least 1: the integer costs of JJ files and the models."""
    c = np.asarray(cost, dtype=float)
    top = float(c.max()) if c.size else 0.0
    if top <= 0:
        return np.ones(c.shape, dtype=np.int64)
    return np.maximum(np.rint(c * MAX_SCALED_COST / top), 1).astype(np.int64)
