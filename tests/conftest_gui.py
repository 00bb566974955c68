"""Helpers for the GUI tests: offscreen Qt, tiny hand-built tables, message-box capture."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from argusqt.model.codelist import CodeList  # noqa: E402
from argusqt.model.table import Table, TableSpec  # noqa: E402
from argusqt.rules.spec import PRule, SafetyRules  # noqa: E402


def membership(dim: CodeList) -> np.ndarray:
    """(nodes × leaves) 0/1 matrix: which leaves each node adds up."""
    leaves = np.flatnonzero(dim.is_leaf)
    m = np.zeros((len(dim), len(leaves)))
    for j, leaf in enumerate(leaves):
        for a in dim.ancestors[leaf]:
            m[a, j] = 1.0
    return m


def small_table(seed: int = 1) -> Table:
    """Region (hierarchical: North{A,B}, South{C,D}) × Gender (flat), additive, with statuses."""
    region = CodeList.from_tree(
        "Region",
        [(1, "N"), (2, "A"), (2, "B"), (1, "S"), (2, "C"), (2, "D")],
        labels={"N": "North", "S": "South", "A": "Amsterdam", "B": "Breda"},
    )
    gender = CodeList.flat("Gender", ["male", "female"])
    rng = np.random.default_rng(seed)
    leaf_val = rng.integers(1, 900, size=(4, 2)).astype(float)
    leaf_val[1, 1] = 12.5
    leaf_freq = rng.integers(1, 20, size=(4, 2)).astype(float)
    leaf_freq[1, 1] = 1
    leaf_freq[2, 0] = 0
    leaf_val[2, 0] = 0
    mr, mg = membership(region), membership(gender)
    value = (mr @ leaf_val @ mg.T).ravel()
    freq = (mr @ leaf_freq @ mg.T).ravel()
    top = np.stack([value * 0.6, value * 0.3], axis=1)
    spec = TableSpec(["Region", "Gender"], "Turnover", rules=SafetyRules(p_individual=[PRule(15)]))
    t = Table(spec, [region, gender], value, freq, value.copy(), value.copy(), top, decimals=1)
    t.status[(freq > 0) & (freq < 3)] = 5
    t.lpl[t.status == 5] = 3.0
    t.upl[t.status == 5] = 3.0
    return t
