"""Cause codes (US#174): why a primary cell is unsafe — one or two dominant contributors, the
p% rule, the frequency or request rule, a holding, a zero cell, a manual choice — beside the
τ-Argus status number, which says only "unsafe (rule)" (argusqt/docs/rules.md §7.5)."""

from __future__ import annotations

import numpy as np

from argusqt.errors import ArgusError
from argusqt.model.status import Status, is_primary
from argusqt.model.table import Table

#: the code of each cause, in words (the report, the cell information panel)
CAUSE_WORDS: dict[str, str] = {
    "D": "dominance: the n largest contributors (Dn: n of them) exceed k % of the cell",
    "P": "p% rule: a coalition of n contributors (Pn) estimates the largest too closely",
    "HD": "dominance on holdings (HDn: n largest holdings)",
    "HP": "p% rule on holdings (HPn: coalition of n holdings)",
    "F": "minimum frequency: too few contributors",
    "HF": "minimum frequency on holdings: too few holdings",
    "R": "request rule: a contributor asked for protection",
    "Z": "zero cell",
    "M": "made unsafe by hand (manual or a-priori file)",
    "S": "singleton (τ-Argus's obsolete status)",
    "G": "status given in the table file (the rules were not evaluated)",
}

#: the cause of a primary status when the rules cannot tell more (status given as such)
_BY_STATUS: dict[int, str] = {
    Status.UNSAFE_RULE: "G",
    Status.UNSAFE_REQUEST: "R",
    Status.UNSAFE_FREQ: "F",
    Status.UNSAFE_ZERO: "Z",
    Status.UNSAFE_SINGLETON: "S",
    Status.UNSAFE_SINGLETON_MANUAL: "S",
    Status.UNSAFE_MANUAL: "M",
}
#: statuses the rules give (their causes are the failing rules)
_BY_RULE = (Status.UNSAFE_RULE, Status.UNSAFE_REQUEST, Status.UNSAFE_FREQ, Status.UNSAFE_ZERO)


def cause_words(code: str) -> str:
    """A cause code in words, e.g. 'D1+F' → 'dominance … (1 largest); minimum frequency …'."""
    out = []
    for part in code.split("+"):
        head = part.rstrip("0123456789")
        n = part[len(head) :]
        words = CAUSE_WORDS.get(head, part)
        out.append(f"{words} [{part}]" if n else words)
    return "; ".join(out)


def cause_codes(table: Table, cells: np.ndarray | None = None) -> list[str]:
    """The cause code of every cell (or of `cells`, in their order): '' for cells that are
    not primary; several causes of one cell are joined by '+' in the order NK/P, REQ, FREQ,
    ZERO (the status's order)."""
    status = np.asarray(table.status)
    idx = np.arange(table.n_cells) if cells is None else np.asarray(cells, dtype=np.int64)
    out = [""] * idx.size
    where = np.flatnonzero(is_primary(status[idx]))
    if where.size == 0:
        return out
    prim = idx[where]
    found = _rule_causes(table, prim)
    for j, (k, c) in enumerate(zip(where.tolist(), prim.tolist(), strict=True)):
        s = int(status[c])
        parts = found[j] if s in _BY_RULE else []
        if s == Status.UNSAFE_RULE and not any(p.lstrip("H")[:1] in ("D", "P") for p in parts):
            parts = ["G"]  # given as status 3, no dominance or p% rule fails
        elif s in _BY_RULE and not parts:
            parts = [_BY_STATUS[s]]
        out[k] = "+".join(parts) if parts else _BY_STATUS.get(s, "G")
    return out


def _rule_causes(table: Table, cells: np.ndarray) -> list[list[str]]:
    """Per cell, the codes of the rules it fails (empty when the rules cannot be evaluated)."""
    from argusqt.rules.classify import (
        check_rules,
        dominance_fails,
        freq_count,
        p_fails,
        request_fails,
    )

    empty: list[list[str]] = [[] for _ in cells]
    rules = table.spec.rules
    if not rules.has_sensitivity_rules:
        return empty
    try:
        check_rules(table)
    except ArgusError:
        return empty
    found = empty
    t = np.abs(np.asarray(table.shadow, dtype=float)[cells])
    f = np.asarray(table.freq, dtype=float)[cells]

    def mark(mask: np.ndarray, code: str) -> None:
        for k in np.flatnonzero(mask).tolist():
            if code not in found[k]:
                found[k].append(code)

    levels = []
    if (rules.nk_individual or rules.p_individual) and table.top is not None:
        levels.append(("", table.top, rules.nk_individual, rules.p_individual))
    if (rules.nk_holding or rules.p_holding) and table.htop is not None:
        levels.append(("H", table.htop, rules.nk_holding, rules.p_holding))
    for prefix, top_all, nks, ps in levels:
        top = np.abs(np.asarray(top_all, dtype=float)[cells])
        for r in nks:
            mark(dominance_fails(top, t, r.n, r.k), f"{prefix}D{r.n}")
        for rp in ps:
            mark(p_fails(top, t, rp.p, rp.q, rp.n), f"{prefix}P{rp.n}")
    if rules.req_individual:
        mark(request_fails(table, cells, t, f), "R")
    if rules.freq_individual:
        mark((f > 0) & (freq_count(table, cells) < rules.freq_individual.minfreq), "F")
    if rules.freq_holding and table.hfreq is not None:
        hf = np.asarray(table.hfreq, dtype=float)[cells]
        mark((hf > 0) & (hf < rules.freq_holding.minfreq), "HF")
    if rules.zero_range is not None:
        value = np.asarray(table.value, dtype=float)[cells]
        mark((f > 0) & (np.abs(value) <= 1e-9), "Z")
    return found
