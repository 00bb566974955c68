"""Acceptance: the tour table (tau_testW Size × Region | Var2, p%(15,1), OPT) saved as the
default Excel workbook discloses nothing: every cell of every sheet checked against the
suppressed values, per-status sums and costs and the words that tell primary from secondary;
an attacker LP written here (scipy, nothing from argusqt.protection) on what the workbook shows
finds no primary inside its protection interval; the confidential workbook only when asked."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import openpyxl
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from shared_paths import tauargus_dir

from argusqt.batch.arb import parse_specify_table
from argusqt.model.status import is_primary, is_secondary, is_suppressed
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

FORBIDDEN = re.compile(
    r"primar|secondar|unsafe|\bsafe\b|sensitiv|dominan|p ?%|status|cost|manual|audit|"
    r"protection level|\brule|record|respondent count|singleton|confidential workbook",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    shared_data = tauargus_dir()
    folder = tmp_path_factory.mktemp("tour")
    for name in ("tau_testW.asc", "tau_testW.rda", "region.cdl", "region2.hrc", "GK.CDL"):
        if (shared_data / "tau_testW" / name).exists():
            shutil.copy(shared_data / "tau_testW" / name, folder / name)
    s = Session()
    s.open_microdata(folder / "tau_testW.asc", folder / "tau_testW.rda")
    s.specify_table(parse_specify_table('"Size""Region"|"Var2"|""|""'))
    s.set_safety_rules(parse_safety_rule("P(15,1)"))
    s.compute_tables()
    s.protect(1, "OPT", {"max_minutes": 5})
    s.write_table(1, 1, "", folder / "tour.xlsx")
    return s, folder


def _numbers_and_texts(wb):
    numbers, texts, x_styles = [], [], set()
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.value is None:
                    continue
                if isinstance(c.value, int | float):
                    numbers.append(float(c.value))
                else:
                    texts.append(str(c.value))
                if c.value == "x" and c.column > 2:  # the grid (column A: legend symbols)
                    x_styles.add(c.style_id)  # font, fill, format, alignment, border
                assert c.fill.fill_type is None, (ws.title, c.coordinate)  # no colour at all
                assert c.comment is None
    return numbers, texts, x_styles


def test_default_workbook_holds_nothing_confidential(tour):
    s, folder = tour
    t = s.table(1)
    assert s.protection_state(1) == "cleared"
    status = np.asarray(t.status)
    sup = is_suppressed(status)
    prim, sec = is_primary(status), is_secondary(status)
    assert prim.any() and sec.any()
    assert sorted(p.name for p in folder.glob("*.xlsx")) == ["tour.xlsx"]  # not asked for
    wb = openpyxl.load_workbook(folder / "tour.xlsx")
    assert wb.sheetnames == ["table"]
    assert all(ws.sheet_state == "visible" for ws in wb.worksheets)
    assert not wb.defined_names
    props = wb.properties
    for field in (props.title, props.subject, props.description, props.keywords):
        assert not field or not FORBIDDEN.search(str(field))
    numbers, texts, x_styles = _numbers_and_texts(wb)

    d = t.decimals
    published = {round(float(v), d) for v in t.value[~sup & (status != 14)]}
    # every number shown is the value of a published cell, nothing else
    assert {round(v, d) for v in numbers} <= published
    # no suppressed value, no per-status sum, count or cost, as a number or inside a text
    secret = {round(float(v), d) for v in t.value[sup]} - published
    cost = np.asarray(t.cost, dtype=float)
    freq = np.asarray(t.freq, dtype=float)
    for mask in (prim, sec, sup):
        secret |= {
            round(float(t.value[mask].sum()), d),
            round(float(cost[mask].sum()), d),
            round(float(cost[mask].sum()), 2),
            float(freq[mask].sum()),
        }
        secret.add(float(mask.sum()))
    secret -= published
    assert not secret & {round(v, d) for v in numbers}
    as_text = {f"{v:,.{d}f}" for v in secret} | {f"{v:.{d}f}" for v in secret}
    as_text |= {f"{int(v)}" for v in secret if float(v).is_integer() and v >= 100}
    for text in texts:
        assert not FORBIDDEN.search(text), text
        assert not any(s in text for s in as_text), text
    # the suppressed cells all look alike: one "x", one style
    assert texts.count("x") >= int(sup.sum())
    assert len(x_styles) == 1
    # the legend explains the symbols shown
    assert any(tx.startswith("not published") for tx in texts)


def _published_grid(wb, t):
    """{cell index: shown value} read back from the table sheet by codes."""
    ws = wb["table"]
    rows = list(ws.iter_rows(values_only=True))
    rvar = t.dims[0].name
    (h,) = [i for i, r in enumerate(rows) if r and r[0] == rvar]
    col_of = {str(c).strip(): j for j, c in enumerate(rows[h]) if j >= 2 and c is not None}
    r_codes = [c.strip() for c in t.dims[0].codes]
    c_codes = [c.strip() for c in t.dims[1].codes]
    shown = {}
    for r in rows[h + 1 :]:
        if r and r[0] is not None and str(r[0]).strip() in r_codes:
            i = r_codes.index(str(r[0]).strip())
            for j, code in enumerate(c_codes):
                shown[i * len(c_codes) + j] = r[col_of[code]]
    assert len(shown) == t.n_cells
    return shown


def test_attacker_lp_on_the_published_workbook(tour):
    """min/max of every primary over all tables consistent with what the workbook shows."""
    s, folder = tour
    t = s.table(1)
    wb = openpyxl.load_workbook(folder / "tour.xlsx")
    shown = _published_grid(wb, t)
    n = t.n_cells
    hidden = np.array([shown[i] == "x" for i in range(n)])
    np.testing.assert_array_equal(hidden, is_suppressed(t.status))
    values = np.array([0.0 if hidden[i] or shown[i] == "-" else float(shown[i]) for i in range(n)])
    assert (np.asarray(t.value)[~hidden] >= 0).all()  # Var2 ≥ 0: the attacker knows a ≥ 0
    # relations of the table: every parent = sum of its children, in each dimension
    rows, cols, vals = [], [], []
    k = 0
    shape = t.shape
    for d, dim in enumerate(t.dims):
        for p in dim.parents:
            kids = dim.children[p]
            for other in np.ndindex(*[shape[e] for e in range(t.ndim) if e != d]):

                def idx(node, other=other, d=d):
                    full = list(other)
                    full.insert(d, node)
                    return int(np.ravel_multi_index(full, shape))

                rows += [k] * (1 + len(kids))
                cols += [idx(p)] + [idx(c) for c in kids]
                vals += [-1.0] + [1.0] * len(kids)
                k += 1
    m = sp.csr_matrix((vals, (rows, cols)), shape=(k, n))
    var = np.flatnonzero(hidden)
    a_eq = m[:, var]
    b_eq = -(m[:, ~hidden] @ values[~hidden])
    keep = np.asarray(abs(a_eq).sum(axis=1)).ravel() > 0
    a_eq, b_eq = a_eq[keep], b_eq[keep]
    bounds = [(0.0, None)] * var.size
    prim = np.flatnonzero(is_primary(t.status))
    tol = 0.5 * 10.0 ** (-t.decimals)
    worst = np.inf
    for cell in prim:
        j = int(np.searchsorted(var, cell))
        c = np.zeros(var.size)
        c[j] = 1.0
        lo = linprog(c, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
        hi = linprog(-c, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
        assert lo.status == 0 and hi.status == 0
        a = float(t.value[cell])
        assert lo.fun <= a - t.lpl[cell] + tol, (t.cell_codes(cell), lo.fun, a, t.lpl[cell])
        assert -hi.fun >= a + t.upl[cell] - tol, (t.cell_codes(cell), -hi.fun, a, t.upl[cell])
        worst = min(worst, (a - lo.fun) - t.lpl[cell], (-hi.fun - a) - t.upl[cell])
    assert worst >= -tol
    print(
        f"{prim.size} primaries attacked; smallest slack beyond the protection level {worst:,.2f}"
    )


def test_confidential_workbook_only_when_asked(tour):
    s, folder = tour
    written = s.write_confidential(1, folder / "tour.xlsx")
    assert written == folder / "tour_CONFIDENTIAL.xlsx"
    wb = openpyxl.load_workbook(written)
    assert wb.sheetnames == ["table", "cells", "report"]
    for ws in wb.worksheets:
        assert ws["A1"].value == "CONFIDENTIAL — not for publication"
    Path(written).unlink()
