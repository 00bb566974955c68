"""The `<SAFETYRULE>` mini-language (argusqt/docs/formats.md §8.4): text ↔ SafetyRules,
position-counted."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from argusqt.errors import SpecificationError
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule, RequestRule, SafetyRules

_RULE = re.compile(r"^([A-Za-z]+)\s*\((.*)\)$")
_MAX = {"P": 4, "NK": 4, "FREQ": 2, "REQ": 2, "ZERO": 1}


class _Rule:
    """One `NAME(args)` item with its context for error messages."""

    def __init__(self, text: str, whole: str, file: str | Path | None, line: int | None):
        self.text = text
        self.whole = whole
        self.file = file
        self.line = line
        m = _RULE.match(text)
        if not m:
            self.fail("expected NAME(arguments) such as P(15,1), NK(3,75), FREQ(3,30)")
        self.name = m.group(1).upper()
        raw = m.group(2).strip()
        self.args = [a.strip() for a in raw.split(",")] if raw else []

    def fail(self, what: str) -> NoReturn:
        raise SpecificationError(
            f"safety rule {self.text!r} in {self.whole!r}: {what}", file=self.file, line=self.line
        )

    def numbers(self, counts: tuple[int, ...]) -> list[float]:
        if len(self.args) not in counts:
            want = " or ".join(str(c) for c in counts)
            self.fail(f"expected {want} arguments, got {len(self.args)}")
        out: list[float] = []
        for k, a in enumerate(self.args, start=1):
            try:
                out.append(float(a))
            except ValueError:
                self.fail(f"expected a number as argument {k}, got {a!r}")
        return out

    def integer(self, x: float, what: str) -> int:
        if x != int(x):
            self.fail(f"expected an integer {what}, got {x:g}")
        return int(x)

    def percent(self, x: float, what: str, upper: float = 100.0) -> float:
        if not 0 <= x <= upper:
            self.fail(f"expected {what} between 0 and {upper:g}, got {x:g}")
        return x


def parse_safety_rule(
    text: str, file: str | Path | None = None, line: int | None = None
) -> SafetyRules:
    """Parse a `<SAFETYRULE>` argument; 1st/2nd P and NK are individual, 3rd/4th holding."""
    rules = SafetyRules()
    seen = dict.fromkeys(_MAX, 0)
    parts = [p.strip() for p in text.split("|")]
    while parts and parts[-1] == "":
        parts.pop()
    for part in parts:
        if not part:
            raise SpecificationError(
                f"safety rule {text!r}: expected a rule between two '|'", file=file, line=line
            )
        r = _Rule(part, text, file, line)
        if r.name in _MAX:
            seen[r.name] += 1
            if seen[r.name] > _MAX[r.name]:
                r.fail(f"at most {_MAX[r.name]} {r.name} rule(s) allowed")
        pos = seen.get(r.name, 0)
        holding = (r.name in ("P", "NK") and pos > 2) or (r.name in ("FREQ", "REQ") and pos > 1)
        if r.name == "P":
            _add_p(r, rules, holding)
        elif r.name == "NK":
            n, k = r.numbers((2,))
            if n == 0 and k == 0:
                continue
            rule = DominanceRule(r.integer(n, "n"), r.percent(k, "k"))
            if rule.n < 1 or rule.k <= 0:
                r.fail("expected n ≥ 1 and 0 < k ≤ 100 (NK(0,0) = unused)")
            (rules.nk_holding if holding else rules.nk_individual).append(rule)
        elif r.name == "FREQ":
            m, rng = r.numbers((2,))
            m_int = r.integer(m, "minimum frequency")
            if m_int < 0:
                r.fail("expected a minimum frequency ≥ 0")
            if m_int == 0:
                continue
            rule_f = FreqRule(m_int, r.percent(rng, "range"))
            if holding:
                rules.freq_holding = rule_f
            else:
                rules.freq_individual = rule_f
        elif r.name == "REQ":
            vals = r.numbers((3, 4))
            p1, p2 = r.percent(vals[0], "p1"), r.percent(vals[1], "p2")
            minfreq = r.integer(vals[2], "minimum frequency") if len(vals) == 4 else 0
            margin = r.percent(vals[-1], "margin")
            if p1 == 0 and p2 == 0:
                continue
            rule_r = RequestRule(p1, p2, minfreq, margin)
            if holding:
                rules.req_holding = rule_r
            else:
                rules.req_individual = rule_r
        elif r.name == "ZERO":
            (z,) = r.numbers((1,))
            if z < 0:
                r.fail("expected a zero range ≥ 0")
            rules.zero_range = z
        elif r.name == "MAN":
            (m,) = r.numbers((1,))
            rules.manual_margin = r.percent(m, "manual safety margin")
        elif r.name in ("WGT", "MIS"):
            (flag,) = r.numbers((1,))
            if flag not in (0, 1):
                r.fail("expected 0 or 1")
            if r.name == "WGT":
                rules.use_weights = bool(flag)
            else:
                rules.missing_safe = bool(flag)
        else:
            r.fail("unknown rule; expected P, NK, FREQ, REQ, ZERO, MAN, WGT or MIS")
    if rules.use_weights and rules.uses_holdings:
        raise SpecificationError(
            f"safety rule {text!r}: weights (WGT(1)) and holding-level rules cannot be combined",
            file=file,
            line=line,
        )
    return rules


def _add_p(r: _Rule, rules: SafetyRules, holding: bool) -> None:
    vals = r.numbers((1, 2, 3))
    p = vals[0]
    q = vals[1] if len(vals) == 3 else 100.0
    n = vals[-1] if len(vals) >= 2 else 1.0
    if p == 0:
        return  # P(0,0) / P(0,100,0): placeholder
    n_int = r.integer(n, "coalition size n")
    if n_int < 1:
        r.fail("expected a coalition size n ≥ 1")
    if not 0 < q <= 100 or not 0 < p <= q:
        r.fail(f"expected 0 < p ≤ q ≤ 100, got p = {p:g}, q = {q:g}")
    (rules.p_holding if holding else rules.p_individual).append(PRule(p, q, n_int))


def _num(x: float) -> str:
    """Numbers as τ-Argus writes them: integers without decimals."""
    return str(int(x)) if float(x) == int(x) else f"{x:g}"


def format_safety_rule(rules: SafetyRules) -> str:
    """The `<SAFETYRULE>` text τ-Argus writes, with placeholders where positions need them."""
    parts: list[str] = []
    kinds: tuple[tuple[Sequence[Any], Sequence[Any], str, Callable[[Any], str]], ...] = (
        (rules.p_individual, rules.p_holding, "P(0,0)", _fmt_p),
        (rules.nk_individual, rules.nk_holding, "NK(0,0)", _fmt_nk),
    )
    for ind, hold, blank, fmt in kinds:
        parts += [fmt(x) for x in ind]
        if hold:
            parts += [blank] * (2 - len(ind)) + [fmt(x) for x in hold]
    if rules.freq_individual or rules.freq_holding:
        f = rules.freq_individual
        parts.append(f"FREQ({f.minfreq},{_num(f.range)})" if f else "FREQ(0,0)")
        if rules.freq_holding:
            h = rules.freq_holding
            parts.append(f"FREQ({h.minfreq},{_num(h.range)})")
    if rules.req_individual or rules.req_holding:
        parts.append(_fmt_req(rules.req_individual) if rules.req_individual else "REQ(0,0,0,0)")
        if rules.req_holding:
            parts.append(_fmt_req(rules.req_holding))
    if rules.zero_range is not None:
        parts.append(f"ZERO({_num(rules.zero_range)})")
    if rules.missing_safe:
        parts.append("MIS(1)")
    if rules.use_weights:
        parts.append("WGT(1)")
    if rules.manual_margin != 20.0 or not parts:
        parts.append(f"MAN({_num(rules.manual_margin)})")
    return "|".join(parts)


def _fmt_p(r: PRule) -> str:
    return f"P({_num(r.p)},{_num(r.q)},{r.n})"


def _fmt_nk(r: DominanceRule) -> str:
    return f"NK({r.n},{_num(r.k)})"


def _fmt_req(r: RequestRule) -> str:
    return f"REQ({_num(r.p1)},{_num(r.p2)},{r.minfreq},{_num(r.margin)})"
