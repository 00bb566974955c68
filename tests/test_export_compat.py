"""Code-value output against τ-Argus's own files (enterprise/expected), line for line (§10.3, E16).

The table is built by argusqt (values and primary statuses are fully determined by the rules);
the secondary suppressions are τ-Argus's, copied from the expected file, since a pattern may
legitimately differ. Every other byte of every line must then be identical.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from argusqt.export.writetable import write_table
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.table import CostSpec, TableSpec
from argusqt.model.tabulate import build_table
from argusqt.rules.classify import apply_rules
from argusqt.rules.spec import PRule, SafetyRules

pytestmark = pytest.mark.compat


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory):
    from shared_paths import tauargus_dir

    dst = tmp_path_factory.mktemp("cv") / "enterprise"
    shutil.copytree(tauargus_dir() / "enterprise", dst)
    meta = read_rda(dst / "example_enterprise.rda")
    return meta, read_microdata(meta, dst / "example_enterprise.asc"), dst


@pytest.mark.parametrize(
    "name, dims",
    [
        ("test_1.txt", ("act", "product")),
        ("test_2b.txt", ("act", "region")),
        ("test_3a.txt", ("region", "mun")),
    ],
)
def test_codevalue_matches_tauargus_file(enterprise, tmp_path, name, dims):
    meta, data, folder = enterprise
    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    spec = TableSpec(list(dims), "turnover", cost=CostSpec("variable", "turnover"), rules=rules)
    table = build_table(meta, data, spec, [])
    apply_rules(table)
    expected = (folder / "expected" / name).read_text().splitlines()
    given = np.array([int(line.rsplit(",", 1)[1]) for line in expected])
    assert len(given) == table.n_cells
    secondary = np.isin(given, (11, 12))
    table.status = np.where(secondary, given, table.status).astype(np.int8)
    out = tmp_path / name
    write_table(table, 3, "AS+", out)
    ours = out.read_text().splitlines()
    diff = [(i, a, b) for i, (a, b) in enumerate(zip(ours, expected, strict=True)) if a != b]
    assert not diff, f"{len(diff)} lines differ, first: {diff[:3]}"
