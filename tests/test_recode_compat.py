"""Acceptance: recoding tau_testW tables = tabulating recoded microdata directly (GK.GRC, IndCode2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from argusqt.model.codelist import CodeList, byte_order_key
from argusqt.model.rulespec import DominanceRule, SafetyRules
from argusqt.model.table import Table, TableSpec
from argusqt.model.tabulate import build_fine, table_from_fine
from argusqt.recode.apply import reapply_rules, recode_variable

pytestmark = pytest.mark.compat


def _columns(asc: Path) -> dict[str, np.ndarray]:
    """Fixed-width fields of tau_testW.rda (start, width) read from the records as byte strings."""
    lines = np.array(asc.read_bytes().splitlines(), dtype="S99")
    chars = lines.view("S1").reshape(len(lines), 99)

    def field(start: int, width: int) -> np.ndarray:
        return chars[:, start - 1 : start - 1 + width].copy().view(f"S{width}").ravel()

    return {
        "IndustryCode": field(4, 5).astype(str),
        "Size": field(9, 2).astype(str),
        "Region": field(12, 2).astype(str),
        "Var2": field(28, 10).astype(float),
    }


def _region(hrc: Path) -> CodeList:
    entries = []
    for line in hrc.read_text().splitlines():
        line = line.rstrip()
        if line:
            depth = len(line) - len(line.lstrip("@")) + 1
            entries.append((depth, line.lstrip("@")))
    return CodeList.from_tree("Region", entries, missing=["99"])


def _tree_from_codes(name: str, codes: list[str], cuts: list[int], missing: str) -> CodeList:
    """Every prefix (at the level cuts, up to the code's own length) is a node."""
    nodes = {c[:k] for c in codes if c != missing for k in cuts if k <= len(c)}
    ordered = sorted(nodes, key=byte_order_key)
    entries = [(cuts.index(len(c)) + 1, c) for c in ordered]
    return CodeList.from_tree(name, entries, missing=[missing])


def _tabulate(cols, names, dims, response="Var2") -> Table:
    cats = [np.unique(cols[n], return_inverse=True) for n in names]
    fine = build_fine([(inv, list(u)) for u, inv in cats], cols[response], None, None, 2)
    maps = [np.array([d.leaf_index[c] for c in u]) for d, (u, _) in zip(dims, cats, strict=True)]
    spec = TableSpec(list(names), response, rules=_rules())
    return reapply_rules(table_from_fine(fine, dims, maps, spec, 2))


def _rules() -> SafetyRules:
    """NK(2,75) as in TestRecode.arb (a fresh object per table)."""
    return SafetyRules(nk_individual=[DominanceRule(2, 75)])


def _assert_same_cells(a: Table, b: Table) -> None:
    for da, db in zip(a.dims, b.dims, strict=True):
        assert da.codes == db.codes
        np.testing.assert_array_equal(da.parent, db.parent)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-6)
    np.testing.assert_array_equal(a.freq, b.freq)
    np.testing.assert_allclose(a.shadow, b.shadow, rtol=1e-12, atol=1e-6)
    np.testing.assert_allclose(a.top, b.top)
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_allclose(a.upl, b.upl)
    assert (a.relations != b.relations).nnz == 0


@pytest.fixture(scope="module")
def testw(tmp_path_factory):
    from shared_paths import tauargus_dir

    src = tauargus_dir() / "tau_testW"
    dest = tmp_path_factory.mktemp("testw")
    for name in ("tau_testW.asc", "GK.GRC", "GK.CDL", "IndCode2.grc", "region2.hrc"):
        shutil.copy(src / name, dest / name)
    return dest, _columns(dest / "tau_testW.asc")


def test_gk_grc_on_size(testw):
    folder, cols = testw
    sizes = sorted(set(cols["Size"]) - {"99"}, key=byte_order_key)
    region = _region(folder / "region2.hrc")
    table = _tabulate(
        cols, ["Size", "Region"], [CodeList.flat("Size", sizes, missing=["99"]), region]
    )
    recoded, warnings = recode_variable(table, "Size", folder / "GK.GRC")
    assert any("untouched" in w for w in warnings)
    assert recoded.dims[0].codes == ["Total", " 1", " 6", " 7", " 8", " 9", "99"]
    # direct: recode the microdata column, tabulate from the records
    direct_cols = dict(cols)
    size = cols["Size"].copy()
    size[np.isin(size, [" 1", " 2", " 3", " 4", " 5"])] = " 1"
    direct_cols["Size"] = size
    direct = _tabulate(
        direct_cols,
        ["Size", "Region"],
        [CodeList.flat("Size", [" 1", " 6", " 7", " 8", " 9"], missing=["99"]), region],
    )
    _assert_same_cells(recoded, direct)
    assert (recoded.status == 3).any()  # NK(2,75) found dominated cells in both
    # the Size total row is unchanged by the recode and equals the record sums
    assert recoded.value[0] == pytest.approx(cols["Var2"].sum())
    # recode vs tabulating again is a timing: benchmarks/bench_recode.py measures it


def test_indcode2_tree_recode(testw):
    folder, cols = testw
    region = _region(folder / "region2.hrc")
    ind_codes = list(np.unique(cols["IndustryCode"]))
    ind = CodeList.from_digits("IndustryCode", ind_codes, [3, 1, 1], missing=["99999"])
    table = _tabulate(cols, ["Region", "IndustryCode"], [region, ind])
    recoded, _ = recode_variable(table, "IndustryCode", folder / "IndCode2.grc")
    new = recoded.dims[1]
    for code in ("142", "1500", "1512"):
        (i,) = new.index_of(code)
        assert new.is_leaf[i]
    assert not any(c.startswith("142") and len(c) > 3 for c in new.codes)
    # direct: cut the codes of the collapsed subtrees, build the hierarchy from the new codes
    codes = cols["IndustryCode"].copy()
    for prefix in ("142", "1500", "1512"):
        codes[np.char.startswith(codes, prefix)] = prefix
    direct_cols = dict(cols)
    direct_cols["IndustryCode"] = codes
    dim = _tree_from_codes("IndustryCode", list(np.unique(codes)), [3, 4, 5], "99999")
    direct = _tabulate(direct_cols, ["Region", "IndustryCode"], [region, dim])
    _assert_same_cells(recoded, direct)
    assert (recoded.status == 3).any()  # NK(2,75) found dominated cells in both
    assert len(new) < len(ind)


def test_testrecode_arb_batch(testw, tmp_path):
    """The real TestRecode.arb through the batch runner: GK.grc (name case differs), level 2, tree."""
    from shared_paths import tauargus_dir

    from argusqt.batch.runner import run_batch

    folder, cols = testw
    case = tmp_path / "tau_testW"
    shutil.copytree(tauargus_dir() / "tau_testW", case)
    for f in case.iterdir():
        f.chmod(0o644)
    outcome = run_batch(case / "TestRecode.arb", logbook=tmp_path / "log.txt")
    outcome.raise_for_error()
    t1, t2 = outcome.session.tables
    assert t1.dims[0].codes == ["Total", " 1", " 6", " 7", " 8", " 9", "99"]
    assert len(t1.dims[1]) == 18  # Region: level 2 has no node with children
    assert t1.recode_state.recodes == {"Size": "GK.GRC", "Region": "level 2"}
    small = np.isin(cols["Size"], [" 1", " 2", " 3", " 4", " 5"])
    assert t1.value.reshape(t1.shape)[1, 0] == pytest.approx(cols["Var2"][small].sum())
    assert t1.value[0] == pytest.approx(cols["Var2"].sum())
    ind = t2.dims[1]
    assert all(ind.is_leaf[ind.index_of(c)[0]] for c in ("142", "1500", "1512"))
    node = ind.index_of("142")[0]
    in_142 = np.char.startswith(cols["IndustryCode"], "142")
    assert t2.value.reshape(t2.shape)[0, node] == pytest.approx(cols["Var2"][in_142].sum())
    log = (tmp_path / "log.txt").read_text(encoding="utf-8")
    assert "no node at level 2 has children" in log


def test_holding_level_recode_matches_direct(tmp_path):
    """enterprise: act × product with a holding-level p% rule; act folded to its sections."""
    from shared_paths import copy_case

    from argusqt.batch.runner import run_batch

    case = copy_case("enterprise", tmp_path)
    for f in case.rglob("*"):
        f.chmod(0o755 if f.is_dir() else 0o644)
    arb = case / "r.arb"
    arb.write_text(
        '<OPENMICRODATA> "example_enterprise.asc"\n<OPENMETADATA> "example_enterprise.rda"\n'
        '<SPECIFYTABLE> "act""product"|"turnover"||\n'
        "<SAFETYRULE> P(0,1)|P(0,1)|P(10,1)|ZERO(10)|MIS(1)|MAN(10)\n"
        "<READMICRODATA>\n<RECODE> 1, act, 1\n"
    )
    outcome = run_batch(arb, logbook=tmp_path / "log.txt")
    outcome.raise_for_error()
    (recoded,) = outcome.session.tables
    # direct: records → section letters, tabulated from scratch
    lines = np.array((case / "example_enterprise.asc").read_bytes().splitlines())
    width = max(len(x) for x in lines)
    chars = lines.astype(f"S{width}").view("S1").reshape(len(lines), width)

    def field(start: int, w: int) -> np.ndarray:
        return chars[:, start - 1 : start - 1 + w].copy().view(f"S{w}").ravel().astype(str)

    section_of: dict[str, str] = {}
    sections: list[str] = []
    for line in (case / "nace_divisions.hrc").read_text().splitlines():
        line = line.rstrip()
        if line and not line.startswith("@"):
            sections.append(line)
        elif line:
            section_of[line[1:]] = sections[-1]
    act = np.array([section_of.get(c, c) for c in field(10, 2)])
    product = field(12, 2)
    hold = np.unique(field(1, 9), return_inverse=True)[1]
    turnover = field(19, 8).astype(float)
    ua, ia = np.unique(act, return_inverse=True)
    up, ip = np.unique(product, return_inverse=True)
    dims = [
        CodeList.from_tree("act", [(1, s) for s in sections], missing=["00"]),
        CodeList.flat("product", list(up)),
    ]
    fine = build_fine(
        [(ia, list(ua)), (ip, list(up))],
        turnover,
        None,
        None,
        recoded.spec.rules.top_n_needed(),
        holding=hold,
    )
    maps = [np.array([dims[0].index_of(c)[0] for c in ua]), np.arange(1, len(up) + 1)]
    direct = reapply_rules(table_from_fine(fine, dims, maps, recoded.spec, 2))
    _assert_same_cells(recoded, direct)
    np.testing.assert_array_equal(recoded.hfreq, direct.hfreq)
    np.testing.assert_allclose(recoded.htop, direct.htop)
    np.testing.assert_allclose(recoded.lpl, direct.lpl)
    assert (recoded.status == 3).sum() > 0
