"""The HTML report written next to a saved table (argusqt/docs/formats.md §11), and its building
blocks.

It counts and sums suppressed cells per status: a confidential file, which says so first.

`rules_in_words`, `status_summary` and `table_structure` are shared with the Excel export's
"report" sheet so that both say the same thing.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

import argusqt
from argusqt.export.gate import CONFIDENTIAL_BANNER
from argusqt.io.atomic import atomic_write_text
from argusqt.model.rulespec import SafetyRules
from argusqt.model.status import STATUS_LABELS, is_secondary
from argusqt.model.table import Table


def _num(x: float) -> str:
    """Rule parameters without a useless '.0' (75 not 75.0, 2.5 stays 2.5)."""
    return f"{x:g}"


def rules_in_words(rules: SafetyRules) -> list[str]:
    """One sentence per active rule, in τ-Argus report wording."""
    out: list[str] = []
    for level, nks in (("Individual", rules.nk_individual), ("Holding", rules.nk_holding)):
        for r in nks:
            if r.n > 0 and r.k > 0:
                out.append(f"Dominance rule ({level} level) with n = {r.n} and k = {_num(r.k)}%")
    for level, ps in (("Individual", rules.p_individual), ("Holding", rules.p_holding)):
        for rp in ps:
            if rp.p > 0:
                q = f", q = {_num(rp.q)}%" if rp.q != 100 else ""
                out.append(f"p% rule ({level} level) with p = {_num(rp.p)}%{q} and n = {rp.n}")
    for level, fr in (("Individual", rules.freq_individual), ("Holding", rules.freq_holding)):
        if fr is not None and fr.minfreq > 0:
            out.append(
                f"Minimum frequency rule ({level} level) with minimum frequency {fr.minfreq} "
                f"and frequency safety range {_num(fr.range)}%"
            )
    for level, rq in (("Individual", rules.req_individual), ("Holding", rules.req_holding)):
        if rq is not None:
            out.append(
                f"Request rule ({level} level) with p1 = {_num(rq.p1)}%, p2 = {_num(rq.p2)}%, "
                f"minimum frequency {rq.minfreq} and safety margin {_num(rq.margin)}%"
            )
    if rules.zero_range is not None:
        out.append(f"Zero cells are unsafe; zero safety range {_num(rules.zero_range)}")
    if not rules.has_sensitivity_rules:
        out.append("No sensitivity rule: the given cell statuses are used")
    out.append(f"Manual safety margin: {_num(rules.manual_margin)}%")
    out.append(
        "Missing codes have been considered safe"
        if rules.missing_safe
        else "Missing codes have been considered unsafe"
    )
    if rules.use_weights:
        out.append("Sampling weights have been applied")
    return out


def table_structure(table: Table) -> list[dict[str, Any]]:
    """Per explanatory variable: name, number of codes, hierarchy levels, recode applied."""
    recodes = getattr(table.recode_state, "recodes", {}) or {}
    rows = []
    for name, dim in zip(table.spec.explanatory, table.dims, strict=True):
        rows.append(
            {
                "variable": name,
                "codes": len(dim),
                "hierarchical": dim.hierarchical,
                "levels": dim.n_levels,
                "missing": int(dim.is_missing.sum()),
                "recode": recodes.get(name, ""),
            }
        )
    return rows


def status_summary(table: Table) -> list[dict[str, Any]]:
    """Per status present (1–14) and a total row: cells, records, sum of value, sum of cost."""
    status = np.asarray(table.status, dtype=np.int64)
    rows = []
    for s in range(1, 15):
        m = status == s
        if not m.any():
            continue
        rows.append(
            {
                "status": s,
                "label": STATUS_LABELS[s],
                "cells": int(m.sum()),
                "records": float(np.asarray(table.freq)[m].sum()),
                "value": float(np.asarray(table.value)[m].sum()),
                "cost": float(np.asarray(table.cost)[m].sum()),
            }
        )
    rows.append(
        {
            "status": None,
            "label": "Total",
            "cells": int(status.size),
            "records": float(np.asarray(table.freq).sum()),
            "value": float(np.asarray(table.value).sum()),
            "cost": float(np.asarray(table.cost).sum()),
        }
    )
    return rows


def secondary_figures(table: Table) -> tuple[int, float]:
    """Number of secondary suppressions (11, 12) and their total cost."""
    s = np.asarray(table.status)
    m = is_secondary(s)
    return int(m.sum()), float(np.asarray(table.cost)[m].sum())


def cause_counts(table: Table) -> list[tuple[str, str, int]]:
    """(cause code, its words, number of primary cells) per cause present (US#174)."""
    from collections import Counter

    from argusqt.rules.cause import cause_codes, cause_words

    counts = Counter(c for c in cause_codes(table) if c)
    return [(code, cause_words(code), n) for code, n in sorted(counts.items())]


def audit_text(audit: Any) -> str:
    """One line about the audit (an AuditResult, a ready string, or nothing)."""
    if audit is None:
        return "not run"
    if isinstance(audit, str):
        return audit
    summary = getattr(audit, "summary", None)
    return summary() if callable(summary) else str(audit)


def _fmt(x: float, decimals: int) -> str:
    return f"{x:,.{decimals}f}"


def _files(info: Mapping[str, Any]) -> list[tuple[str, str]]:
    files = info.get("files") or {}
    if isinstance(files, Mapping):
        return [(str(k), str(v)) for k, v in files.items()]
    return [("", str(f)) for f in files]


def _table(headers: list[str], rows: list[list[str]], numeric_from: int = 99) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{html.escape(c)}</td>'
            if i >= numeric_from
            else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


_CSS = (
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border:1px solid #999;padding:2px 8px}th{background:#ddd}td.num{text-align:right}"
    "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}"
)


def report_html(table: Table, info: Mapping[str, Any] | None = None) -> str:
    """The report as an HTML string (see `write_report` for the `info` keys)."""
    info = dict(info or {})
    esc = html.escape
    dec = table.decimals
    when = info.get("time") or datetime.now().strftime("%d-%b-%Y %H:%M:%S")
    title = info.get("title") or f"argusqt report: {table.name or 'table'}"
    parts = [
        # the first line says it, whatever the file is named (batch: τ-Argus's `<name>.html`)
        f"<!-- {esc(CONFIDENTIAL_BANNER)}: internal report, it counts and sums the "
        "suppressed cells -->",
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{esc(CONFIDENTIAL_BANNER)}: {esc(title)}</title><style>{_CSS}</style></head><body>",
        f'<p style="color:#c00000;font-weight:bold">{esc(CONFIDENTIAL_BANNER)}</p>',
        f"<h1>{esc(title)}</h1>",
        f"<p>Produced by argusqt {esc(argusqt.__version__)} on {esc(str(when))}</p>",
    ]
    files = _files(info)
    if files:
        parts.append("<h2>Files used</h2>")
        parts.append(_table(["Role", "File"], [[r, f] for r, f in files]))
    parts.append("<h2>Table structure</h2>")
    spec = table.spec
    resp = spec.response or "frequency"
    parts.append(
        f"<p>Response variable: {esc(resp)}; shadow variable: {esc(spec.shadow or resp)}; "
        f"cost: {esc(_cost_words(table))}; {table.n_cells} cells.</p>"
    )
    parts.append(
        _table(
            ["Explanatory variable", "Codes", "Hierarchical", "Levels", "Missing codes"],
            [
                [
                    r["variable"],
                    str(r["codes"]),
                    "yes" if r["hierarchical"] else "no",
                    str(r["levels"]),
                    str(r["missing"]),
                ]
                for r in table_structure(table)
            ],
        )
    )
    parts.append("<h2>Safety rules</h2><ul>")
    parts.extend(f"<li>{esc(s)}</li>" for s in rules_in_words(spec.rules))
    parts.append("</ul>")
    recoded = [(r["variable"], r["recode"]) for r in table_structure(table) if r["recode"]]
    parts.append("<h2>Recodes</h2>")
    if recoded:
        parts.append(_table(["Variable", "Recode"], [[v, d] for v, d in recoded]))
    else:
        parts.append("<p>No variable has been recoded.</p>")
    parts.append("<h2>Protection</h2>")
    method = info.get("method") or "none (primary suppression only)"
    parts.append(f"<p>Method: {esc(str(method))}</p>")
    options = info.get("method_options")
    if options:
        if isinstance(options, Mapping):
            parts.append(
                _table(["Option", "Value"], [[str(k), str(v)] for k, v in options.items()])
            )
        else:
            parts.append(f"<p>Options: {esc(str(options))}</p>")
    n_sec, cost_sec = secondary_figures(table)
    parts.append(f"<p>Secondary suppressions: {n_sec}, total cost {esc(_fmt(cost_sec, 2))}.</p>")
    if info.get("elapsed") is not None:
        parts.append(f"<p>Time used: {float(info['elapsed']):.2f} s</p>")
    parts.append(f"<p>Audit: {esc(audit_text(info.get('audit')))}</p>")
    parts.extend(_ckm_loss_html(info.get("ckm_loss")))
    parts.append("<h2>Unsafe cells by rule</h2>")
    status = np.asarray(table.status, dtype=np.int64)
    unsafe = [[STATUS_LABELS[s], str(int((status == s).sum()))] for s in range(3, 10)]
    unsafe = [r for r in unsafe if r[1] != "0"] or [["none", "0"]]
    parts.append(_table(["Status", "Cells"], unsafe, numeric_from=1))
    causes = cause_counts(table)
    if causes:
        parts.append("<h2>Unsafe cells by cause</h2>")
        rows_c = [[code, esc(words), str(n)] for code, words, n in causes]
        parts.append(_table(["Cause", "Meaning", "Cells"], rows_c, numeric_from=2))
    parts.append("<h2>Summary by status</h2>")
    rows = [
        [
            "" if r["status"] is None else str(r["status"]),
            r["label"],
            str(r["cells"]),
            _fmt(r["records"], 0),
            _fmt(r["value"], dec),
            _fmt(r["cost"], 2),
        ]
        for r in status_summary(table)
    ]
    parts.append(_table(["Status", "Description", "Cells", "Records", "Value", "Cost"], rows, 2))
    for line in info.get("notes") or []:
        parts.append(f"<p>{esc(str(line))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _ckm_loss_html(loss: Mapping[str, Any] | None) -> list[str]:
    """The cell key method's loss and risk figures (argusqt/docs/methods.md §16.7)."""
    if not loss:
        return []
    out = [
        "<h2>Information loss and risk (cell key method)</h2>",
        f"<p>Cells changed: {int(loss['changed'])} of {int(loss['cells'])} "
        f"({100 * float(loss['changed_share']):.1f} %); mean absolute deviation "
        f"{float(loss['mean_abs']):.3g}; mean relative deviation "
        f"{100 * float(loss['mean_rel']):.2f} %; largest deviation {float(loss['max_abs']):.3g}; "
        f"small cells (1–4) at their true value {100 * float(loss['small_exact_share']):.1f} %."
        "</p>",
    ]
    rows = [
        [
            str(c["class"]),
            str(c["cells"]),
            str(c["changed"]),
            f"{float(c['mean_abs']):.3g}",
            f"{100 * float(c['mean_rel']):.2f} %",
            f"{100 * float(c['exact_share']):.1f} %",
        ]
        for c in loss.get("classes", [])
    ]
    headers = ["Original value", "Cells", "Changed", "Mean abs. dev.", "Mean rel. dev.",
               "At true value (risk)"]  # fmt: skip
    out.append(_table(headers, rows, numeric_from=1))
    return out


def _cost_words(table: Table) -> str:
    c = table.spec.cost
    base = {
        "variable": f"variable {c.variable or table.spec.response or 'frequency'}",
        "frequency": "frequency",
        "unity": "unity",
        "distance": "distance",
    }[c.kind]
    return base + (f", lambda {c.lam:g}" if c.lam != 1 else "")


def write_report(table: Table, path: str | Path, info: Mapping[str, Any] | None = None) -> None:
    """Write the HTML report atomically.

    `info` keys (all optional): "files" (role → path, or a list), "method", "method_options"
    (dict or text), "elapsed" (seconds), "time", "audit" (AuditResult or text), "title",
    "notes" (extra lines).
    """
    atomic_write_text(path, report_html(table, info))
