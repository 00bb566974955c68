"""HTML report (argusqt/docs/formats.md §11): rules in words, structure, recodes, summary by
status."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest

from argusqt.export.report import rules_in_words, status_summary, write_report
from argusqt.model.codelist import CodeList
from argusqt.model.rulespec import (
    DominanceRule,
    FreqRule,
    PRule,
    RequestRule,
    SafetyRules,
)
from argusqt.model.table import CostSpec, TableSpec
from argusqt.model.tabulate import build_fine, table_from_fine
from argusqt.recode.apply import recode_variable


class _Tables(HTMLParser):
    """Collects the text of every table row (list of cell texts) and headings."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.items: list[str] = []
        self._cell: list[str] | None = None
        self._li = False

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "li":
            self._li = True
            self.items.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "li":
            self._li = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._li:
            self.items[-1] += data


def test_rules_in_words():
    rules = SafetyRules(
        nk_individual=[DominanceRule(3, 75), DominanceRule(0, 0)],
        p_individual=[PRule(15)],
        p_holding=[PRule(10, 50, 2)],
        freq_individual=FreqRule(3, 20),
        req_individual=RequestRule(70, 60, 0, 10),
        zero_range=10.0,
    )
    assert rules_in_words(rules) == [
        "Dominance rule (Individual level) with n = 3 and k = 75%",
        "p% rule (Individual level) with p = 15% and n = 1",
        "p% rule (Holding level) with p = 10%, q = 50% and n = 2",
        "Minimum frequency rule (Individual level) with minimum frequency 3 and "
        "frequency safety range 20%",
        "Request rule (Individual level) with p1 = 70%, p2 = 60%, minimum frequency 0 "
        "and safety margin 10%",
        "Zero cells are unsafe; zero safety range 10",
        "Manual safety margin: 20%",
        "Missing codes have been considered unsafe",
    ]
    assert rules_in_words(SafetyRules(missing_safe=True, manual_margin=10))[-2:] == [
        "Manual safety margin: 10%",
        "Missing codes have been considered safe",
    ]
    assert rules_in_words(SafetyRules())[0].startswith("No sensitivity rule")


def _table():
    size_cats = ["1", "2", "3"]
    reg_cats = ["a", "b"]
    rng = np.random.default_rng(3)
    s = rng.integers(0, 3, 40)
    r = rng.integers(0, 2, 40)
    v = rng.integers(1, 100, 40).astype(float)
    spec = TableSpec(
        ["Size", "Reg<ion>"],
        "Turnover",
        cost=CostSpec("frequency"),
        rules=SafetyRules(p_individual=[PRule(15)]),
    )
    fine = build_fine([(s, size_cats), (r, reg_cats)], v, None, None, 2)
    dims = [
        CodeList.flat("Size", size_cats, missing=["9"]),
        CodeList.from_tree("Reg<ion>", [(1, "N"), (2, "a"), (2, "b")]),
    ]
    t = table_from_fine(fine, dims, [np.array([1, 2, 3]), np.array([2, 3])], spec, 2)
    t.name = "Turnover by size"
    return t, v


def test_report_html(tmp_path):
    t, v = _table()
    (tmp_path / "g.grc").write_text("1: 1-2\n")
    t, _ = recode_variable(t, "Size", tmp_path / "g.grc")
    t.status = t.status.copy()
    t.status[4] = 3
    t.status[5] = 11
    t.cost = np.abs(t.value)
    path = tmp_path / "report.html"
    write_report(
        t,
        path,
        {
            "files": {"microdata": "data.asc", "metadata": "data.rda"},
            "method": "Optimal (OPT)",
            "method_options": {"max time": "10 min"},
            "elapsed": 1.234,
            "audit": "Audit passed: 2 primary cells checked",
        },
    )
    text = path.read_text(encoding="utf-8")
    first, second = text.splitlines()[:2]
    assert first.startswith("<!-- CONFIDENTIAL — not for publication") and first.endswith("-->")
    assert second == "<!DOCTYPE html>"  # a comment before the doctype is valid HTML
    p = _Tables()
    p.feed(text)
    assert ["microdata", "data.asc"] in p.rows
    assert ["Reg<ion>", "4", "yes", "2", "0"] in p.rows  # escaped, then parsed back
    assert ["Size", "4", "no", "1", "1"] in p.rows  # Total, 1, 3, missing 9
    assert "p% rule (Individual level) with p = 15% and n = 1" in p.items
    assert "Manual safety margin: 20%" in p.items
    assert ["Size", "g.grc"] in p.rows
    assert "Method: Optimal (OPT)" in text and "Time used: 1.23 s" in text
    assert "Audit: Audit passed: 2 primary cells checked" in text
    assert re.search(r"Secondary suppressions: 1, total cost [\d,]+\.\d\d", text)
    summary = {r[1]: r for r in p.rows if len(r) == 6 and r[0] != "Status"}
    n_empty = int((t.status == 14).sum())
    assert summary["Unsafe (dominance/p%)"][2] == "1"
    assert summary["Secondary"][2] == "1"
    if n_empty:
        assert summary["Empty"][2] == str(n_empty)
    assert summary["Total"][2] == str(t.n_cells)
    assert float(summary["Total"][3].replace(",", "")) == pytest.approx(t.freq.sum())
    assert float(summary["Total"][4].replace(",", "")) == pytest.approx(t.value.sum())
    assert ["Unsafe (dominance/p%)", "1"] in p.rows
    assert "<ion>" not in text  # the variable name was escaped


def test_status_summary_sums():
    t, v = _table()
    rows = status_summary(t)
    total = rows[-1]
    assert total["label"] == "Total" and total["cells"] == t.n_cells
    assert sum(r["cells"] for r in rows[:-1]) == t.n_cells
    assert sum(r["value"] for r in rows[:-1]) == pytest.approx(t.value.sum())
    assert t.value[0] == pytest.approx(v.sum())
