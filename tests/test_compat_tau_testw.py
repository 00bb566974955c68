"""tau_testW: every 1–3-variable table has the right cells, grand total and relations.

Code counts are computed here independently from the raw text of the data and the
hierarchy file (not through argusqt's readers).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from shared_paths import copy_case

from argusqt.io.codelists import codelist_for
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.rulespec import FreqRule, SafetyRules
from argusqt.model.table import TableSpec
from argusqt.model.tabulate import build_table

pytestmark = pytest.mark.compat

# name: (start, width, missing code)
FIELDS = {
    "Year": (1, 2, "99"),
    "IndustryCode": (4, 5, "99999"),
    "Size": (9, 2, "99"),
    "Region": (12, 2, "99"),
}
VAR2 = (28, 10)


@pytest.fixture(scope="module")
def testw(tmp_path_factory):
    folder = copy_case("tau_testW", tmp_path_factory.mktemp("testw"))
    meta = read_rda(folder / "tau_testW.rda")
    data = read_microdata(meta, folder / "tau_testW.asc")
    lines = (folder / "tau_testW.asc").read_text(encoding="latin-1").splitlines()
    return meta, data, lines, folder


def _expected_code_count(name: str, lines: list[str], folder) -> int:
    start, width, missing = FIELDS[name]
    codes = {ln[start - 1 : start - 1 + width].ljust(width) for ln in lines}
    codes.discard(missing)
    if name == "Region":  # region2.hrc: every non-empty line is a node
        hrc = (folder / "region2.hrc").read_text(encoding="latin-1").splitlines()
        n_nodes = sum(1 for ln in hrc if ln.strip())
        return 1 + n_nodes + 1
    if name == "IndustryCode":  # <HIERLEVELS> 3 1 1: every prefix of length 3, 4, 5
        nodes = {c[:k] for c in codes for k in (3, 4, 5)}
        return 1 + len(nodes) + 1
    return 1 + len(codes) + 1  # total + codes + missing


COMBOS = [
    c
    for r in (1, 2, 3)
    for c in itertools.combinations(["Year", "Size", "Region", "IndustryCode"], r)
]


@pytest.mark.parametrize("response", ["Var2", None], ids=["Var2", "freq"])
@pytest.mark.parametrize("dims", COMBOS, ids=["x".join(c) for c in COMBOS])
def test_cells_total_and_relations(testw, dims, response):
    meta, data, lines, folder = testw
    rules = SafetyRules(freq_individual=FreqRule(3, 20))
    table = build_table(
        meta, data, TableSpec(list(dims), response, rules=rules), [], codelist_for=codelist_for
    )
    expected_cells = math.prod(_expected_code_count(d, lines, folder) for d in dims)
    assert table.n_cells == expected_cells
    if response is None:
        assert table.value[0] == len(lines)
        decimals = 0
    else:
        s, w = VAR2
        col = [float(ln[s - 1 : s - 1 + w] or 0) for ln in lines]
        decimals = 2
        assert abs(table.value[0] - math.fsum(col)) <= 0.5 * 10**-decimals
    residual = np.abs(table.relations @ table.value)
    scale = np.maximum(1.0, np.abs(table.value).max())
    assert residual.max() <= 1e-9 * scale


def test_declared_missing_region_column_is_empty(testw):
    """argusqt/docs/formats.md §2.1: Region "99" is listed although no record has it (status 14)."""
    meta, data, _, _ = testw
    table = build_table(
        meta, data, TableSpec(["Size", "Region"], "Var2"), [], codelist_for=codelist_for
    )
    region = table.dims[1]
    assert region.codes[-1] == "99"
    cells = [table.cell_index((i, len(region) - 1)) for i in range(len(table.dims[0]))]
    assert all(table.status[c] == 14 for c in cells)
    size = table.dims[0]
    assert table.freq[table.cell_index((size.codes.index("99"), 0))] == 5


# τ-Argus engine's own MOD (pytauargus 0.6, MOD(1, 1, 1, 1, 1)) on Size × Region | Var2,
# measured by benchmarks/bench_vs_tauargus.py: secondary cost (Σ Var2 of statuses 11/12).
# With P(15,1) its pattern leaves 4 primaries to respondents alone in a suppressed cell (our
# insider audit): there the bar is our own OPT, which is safe.
TAU_MOD_COST = {"P(15,1)": 2_524_351.0, "NK(3,70)": 3_040_874.0}
TAU_MOD_SAFE = {"P(15,1)": False, "NK(3,70)": True}


def _protect(folder, tmp_path, rule: str, call: str):
    from argusqt.batch.runner import run_batch

    arb = tmp_path / f"{call[:3]}.arb"
    arb.write_text(
        f'<OPENMICRODATA> "{folder / "tau_testW.asc"}"\n'
        f'<OPENMETADATA> "{folder / "tau_testW.rda"}"\n'
        '<SPECIFYTABLE> "Size""Region"|"Var2"||\n'
        f"<SAFETYRULE> {rule}\n<READMICRODATA>\n<SUPPRESS> {call}\n"
    )
    out = run_batch(arb)
    assert out.ok, out.error
    return out.session.tables[0]


@pytest.mark.parametrize("rule", sorted(TAU_MOD_COST))
def test_mod_with_singleton_options_costs_no_more_than_tau_argus(testw, tmp_path, rule):
    # issue 15: our MOD cost 5,572,460 (P) and 5,572,395 (NK) — the subtables' backtracked
    # margins were never published again; the whole-table clean-up keeps singletons safe
    from argusqt.model.status import is_secondary, is_suppressed
    from argusqt.protection.audit.outsider import audit
    from argusqt.protection.core.problem import CSPProblem

    _meta, _data, _lines, folder = testw
    table = _protect(folder, tmp_path, rule, "MOD(1, 1, 1, 1, 1)")
    cost = float(np.asarray(table.value)[is_secondary(table.status)].sum())
    assert audit(CSPProblem.from_table(table), is_suppressed(table.status), intervals=False).ok
    if TAU_MOD_SAFE[rule]:
        assert cost <= TAU_MOD_COST[rule]
    else:
        # τ-Argus's pattern leaves primaries to insiders: within 1 % of its cost all the same.
        # (This compared with our OPT while OPT's insider repair came after its optimum; with
        # the insiders inside OPT's branch-and-cut OPT proves 1,092,497 here, a lower bound
        # on every publishable pattern, which MOD, at 2.3 times that, does not reach.)
        assert cost <= 1.01 * TAU_MOD_COST[rule]
        opt = _protect(folder, tmp_path, rule, "OPT(1, 1)")
        assert cost >= float(np.asarray(opt.value)[is_secondary(opt.status)].sum()) - 1e-6
