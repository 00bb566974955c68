"""The `<SAFETYRULE>` mini-language (argusqt/docs/formats.md §8.4): text ↔ SafetyRules,
position-counted."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from argusqt.errors import SpecificationError
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule, RequestRule, SafetyRules

_RULE = re.compile(r"^([A-Za-z]+)\s*\((.*)\)$")
_MAX = {"P": 4, "NK": 4, "FREQ": 2, "REQ": 2, "ZERO": 1}
#: argument names of the readable form, in τ-Argus's positional order
_NAMED = {
    "P": ("p", "q", "n"),
    "NK": ("n", "k"),
    "FREQ": ("m", "r", "unweighted"),
    "REQ": ("p1", "p2", "m", "margin"),
}
_NAMED_DEFAULTS = {"P": {"q": "100", "n": "1"}, "FREQ": {"unweighted": ""}, "REQ": {"m": "0"}}
_SYNONYM = {"minfreq": "m", "range": "r", "safety_range": "r"}
#: rules per level (τ-Argus: two P and two NK, one FREQ and one REQ on records and holdings)
_PER_LEVEL = {"P": 2, "NK": 2, "FREQ": 1, "REQ": 1}


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
        #: "individual" | "holding" when named (`level=holding`), None: by position
        self.level: str | None = None
        if any("=" in a for a in self.args):
            self._named()

    def _named(self) -> None:
        """argusqt's readable form `P(p=20, n=1, level=holding)` (US#204) → the positional
        arguments τ-Argus uses, and the level it names instead of the position."""
        names = _NAMED.get(self.name)
        if names is None:
            self.fail("named arguments are accepted only for P, NK, FREQ and REQ")
        given: dict[str, str] = {}
        for a in self.args:
            key, eq, val = a.partition("=")
            key = _SYNONYM.get(key.strip().lower(), key.strip().lower())
            if not eq:
                self.fail(f"expected name=value for every argument, got {a!r}")
            if key != "level" and key not in names:
                self.fail(f"unknown argument {key!r}; expected {', '.join([*names, 'level'])}")
            if key in given:
                self.fail(f"argument {key!r} given twice")
            given[key] = val.strip()
        level = given.pop("level", None)
        if level is not None:
            self.level = level.lower()
            if self.level not in ("individual", "holding"):
                self.fail(f"expected level=individual or level=holding, got {level!r}")
        defaults = _NAMED_DEFAULTS.get(self.name, {})
        missing = [k for k in names if k not in given and k not in defaults]
        if missing:
            self.fail(f"missing argument(s) {', '.join(missing)}")
        self.args = [given.get(k, defaults.get(k, "")) for k in names]
        if self.name == "FREQ" and self.args[-1].lower() in ("", "0", "no", "false"):
            self.args = self.args[:2]
        elif self.name == "FREQ" and self.args[-1].lower() in ("1", "yes", "true", "u"):
            self.args[-1] = "U"

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
    text: str,
    file: str | Path | None = None,
    line: int | None = None,
    level: str | None = None,
) -> SafetyRules:
    """Parse a `<SAFETYRULE>` argument; 1st/2nd P and NK are individual, 3rd/4th holding,
    unless a rule names its level (`level=holding`) or `level` puts every rule on one level
    (`<SAFETYRULEHOLDING>`)."""
    rules = SafetyRules()
    seen = dict.fromkeys(_MAX, 0)
    per_level: dict[tuple[str, bool], int] = {}
    positional: dict[str, int] = {}
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
        if r.level is None:  # a rule naming its level takes no position
            positional[r.name] = positional.get(r.name, 0) + 1
        pos = positional.get(r.name, 0)
        holding = (r.name in ("P", "NK") and pos > 2) or (r.name in ("FREQ", "REQ") and pos > 1)
        if r.level is not None:
            holding = r.level == "holding"
        elif level is not None and r.name in _PER_LEVEL:
            holding = level == "holding"
        if r.name in _PER_LEVEL:
            key = (r.name, holding)
            per_level[key] = per_level.get(key, 0) + 1
            if per_level[key] > _PER_LEVEL[r.name]:
                where = "holding" if holding else "individual"
                r.fail(f"at most {_PER_LEVEL[r.name]} {r.name} rule(s) at the {where} level")
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
            unweighted = _unweighted_flag(r)
            m, rng = r.numbers((2,))
            m_int = r.integer(m, "minimum frequency")
            if m_int < 0:
                r.fail("expected a minimum frequency ≥ 0")
            if m_int == 0:
                continue
            rule_f = FreqRule(m_int, r.percent(rng, "range"), unweighted)
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
        elif r.name == "COMB":  # argusqt extension (US#160): rules on combined cells
            (flag,) = r.numbers((1,))
            if flag not in (0, 1):
                r.fail("expected 0 (off) or 1 (on)")
            rules.combined = bool(flag)
        elif r.name in ("WGT", "MIS"):
            (flag,) = r.numbers((1,))
            if flag not in (0, 1):
                r.fail("expected 0 or 1")
            if r.name == "WGT":
                rules.use_weights = bool(flag)
            else:
                rules.missing_safe = bool(flag)
        else:
            r.fail("unknown rule; expected P, NK, FREQ, REQ, ZERO, MAN, WGT, MIS or COMB")
    if rules.use_weights and rules.uses_holdings:
        raise SpecificationError(
            f"safety rule {text!r}: weights (WGT(1)) and holding-level rules cannot be combined",
            file=file,
            line=line,
        )
    return rules


def _unweighted_flag(r: _Rule) -> bool:
    """argusqt's extension `FREQ(m,r,U)`: count respondents, not weights (US#98); the flag
    is taken off the arguments so that the numbers are checked as τ-Argus's two."""
    if len(r.args) == 3 and r.args[2].upper() in ("U", "UNWEIGHTED"):
        r.args = r.args[:2]
        return True
    if len(r.args) == 3:
        r.fail(f"expected U (unweighted) as a third FREQ argument, got {r.args[2]!r}")
    return False


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
        if hold:  # all four positions: τ-Argus 4.2.0 read a 3rd rule without a 4th as
            # individual (US#204)
            parts += [blank] * (2 - len(ind)) + [fmt(x) for x in hold]
            parts += [blank] * (2 - len(hold))
    if rules.freq_individual or rules.freq_holding:
        f = rules.freq_individual
        parts.append(_fmt_freq(f) if f else "FREQ(0,0)")
        if rules.freq_holding:
            parts.append(_fmt_freq(rules.freq_holding))
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
    if rules.combined is not None:
        parts.append(f"COMB({int(rules.combined)})")
    if rules.manual_margin != 20.0 or not parts:
        parts.append(f"MAN({_num(rules.manual_margin)})")
    return "|".join(parts)


def _fmt_p(r: PRule) -> str:
    return f"P({_num(r.p)},{_num(r.q)},{r.n})"


def _fmt_nk(r: DominanceRule) -> str:
    return f"NK({r.n},{_num(r.k)})"


def _fmt_freq(r: FreqRule) -> str:
    """τ-Argus's `FREQ(m,r)`; argusqt's extension `FREQ(m,r,U)` when counting respondents."""
    return f"FREQ({r.minfreq},{_num(r.range)}{',U' if r.unweighted else ''})"


def _fmt_req(r: RequestRule) -> str:
    return f"REQ({_num(r.p1)},{_num(r.p2)},{r.minfreq},{_num(r.margin)})"


def add_holding_rules(
    rules: SafetyRules, text: str, file: str | Path | None = None, line: int | None = None
) -> SafetyRules:
    """`<SAFETYRULEHOLDING>` (argusqt's readable form, US#204): the P, NK, FREQ and REQ of
    `text` become the holding-level rules of `rules` (a copy), whatever their position."""
    hold = parse_safety_rule(text, file, line, level="holding")
    other = [
        name
        for name, on in (
            ("individual-level rules (level=individual)", hold.nk_individual
             or hold.p_individual or hold.freq_individual or hold.req_individual),
            ("ZERO", hold.zero_range is not None),
            ("MAN", hold.manual_margin != SafetyRules().manual_margin),
            ("WGT", hold.use_weights),
            ("MIS", hold.missing_safe),
        )
        if on
    ]  # fmt: skip
    if other:
        raise SpecificationError(
            f"holding rules {text!r}: only P, NK, FREQ and REQ belong here, not "
            f"{', '.join(other)} (they go in <SAFETYRULE>)",
            file=file,
            line=line,
        )
    if rules.uses_holdings:
        raise SpecificationError(
            f"holding rules {text!r}: the <SAFETYRULE> before already gives holding-level "
            "rules by position; give them in one of the two forms",
            file=file,
            line=line,
        )
    out = replace(
        rules,
        nk_holding=list(hold.nk_holding),
        p_holding=list(hold.p_holding),
        freq_holding=hold.freq_holding,
        req_holding=hold.req_holding,
    )
    if out.use_weights and out.uses_holdings:
        raise SpecificationError(
            f"holding rules {text!r}: weights (WGT(1)) and holding-level rules cannot be combined",
            file=file,
            line=line,
        )
    return out
