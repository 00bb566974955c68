"""Safety campaign: random tables × methods, every export re-audited by an independent auditor.

Each table is generated here as records (2-D, 1H2D and 3-D; with holdings, zeros and
negative values), written as microdata (`.asc` + `.rda` + `.hrc`) or as a table file
(`.tab` + `.rda`, all cells with frequency and top-2 contributions), read, tabulated and
protected by argusqt as a user would (Session: open, specify, compute, protect), and written
for publication as a code-value file through the publication gate. The file is then read
back and attacked by the auditor of this script:

* the outsider: the published values, the relations of the table (built here from the
  generated hierarchies), the a-priori bounds l = min(0, 1.5·min), u = 1.5·max over the
  non-empty cells (widened for primaries) — min/max of every suppressed primary with
  scipy's linprog;
* the insider: every respondent (holding when holdings are used, else record) alone in a
  suppressed cell knows the cells it alone makes up and attacks every primary except those
  and the cells where its contribution is the largest (docs/design.md, "The insider
  attacker") — respondents and contributions computed here from the generated records;
* rounding: published values are multiples of the base, within one base of the truth, each
  primary's rounding interval (the truth lies strictly within one base of what is printed)
  covers its protection interval, and the attacker (outsider and insider) over all rounding
  intervals keeps every primary's interval; CTA: the published table is additive, every
  primary moved by at least a protection level and no level estimate (adjusted ∓ level)
  comes near the truth; interval protection: the published intervals contain the truth, no
  midpoint or endpoint comes near it, and the attacker (outsider and insider) keeps every
  primary's interval. "Near": within max(half a printed unit, a tenth of the mean
  protection level) — argusqt/docs/methods.md §2.1, coded here from that text.

Primaries and protection levels are argusqt's rule engine's (argusqt.rules), the only thing
this auditor takes from the program; it imports nothing from argusqt.protection.

Report: runs, refusals (the gate or the method refused: nothing published), method errors,
unsafe exports (must be 0). Usage:
    python benchmarks/safety_campaign.py [--tables 1000] [--seed 0] [--methods OPT MOD …]
        [--max-time 20] [--out results.csv]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import linprog

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

METHODS = ("OPT", "MOD", "HEUR", "IP", "RND", "CTA")
KINDS = ("2D", "1H2D", "3D")


# ============================================================================ generator
@dataclass
class Dim:
    """A spanning variable: leaf codes and, for a hierarchy, each node's parent code."""

    name: str
    leaves: list[str]
    parent: dict[str, str]  # node → parent node ("Total" at the top)
    hrc: list[str] | None = None  # lines of the .hrc file (None: flat)

    @property
    def nodes(self) -> list[str]:
        inner = [c for c in self.parent if c not in self.leaves]
        return ["Total", *inner, *self.leaves]

    def chain(self, code: str) -> list[str]:
        """The code and its ancestors up to Total."""
        out = [code]
        while out[-1] != "Total":
            out.append(self.parent[out[-1]])
        return out


def flat_dim(name: str, n: int) -> Dim:
    leaves = [f"{k:02d}" for k in range(1, n + 1)]
    return Dim(name, leaves, dict.fromkeys(leaves, "Total"))


def hier_dim(name: str, rng: np.random.Generator) -> Dim:
    n_top = int(rng.integers(2, 4))
    parent: dict[str, str] = {}
    leaves: list[str] = []
    hrc: list[str] = []
    for i in range(n_top):
        top = f"{chr(65 + i)}0"
        parent[top] = "Total"
        hrc.append(top)
        for j in range(int(rng.integers(2, 4))):
            leaf = f"{chr(65 + i)}{j + 1}"
            parent[leaf] = top
            leaves.append(leaf)
            hrc.append("@" + leaf)
    return Dim(name, leaves, parent, hrc)


@dataclass
class Case:
    """One generated table: its records and how argusqt gets them."""

    seed: int
    kind: str
    dims: list[Dim]
    codes: np.ndarray  # (records, dims) leaf codes
    value: np.ndarray  # integer response per record
    holding: np.ndarray | None  # holding id per record (contiguous), None without holdings
    tabular: bool
    zeros: bool
    negatives: bool
    freq_rule: bool

    @property
    def label(self) -> str:
        parts = [self.kind, "tab" if self.tabular else "micro"]
        parts += ["hold"] if self.holding is not None else []
        parts += ["zeros"] if self.zeros else []
        parts += ["neg"] if self.negatives else []
        parts += ["freq"] if self.freq_rule else []
        return "+".join(parts)


def generate(seed: int) -> Case:
    """A random small table: few records per cell so that singletons are common."""
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % 3]
    if kind == "2D":
        dims = [flat_dim("a", int(rng.integers(3, 6))), flat_dim("b", int(rng.integers(3, 6)))]
    elif kind == "1H2D":
        dims = [hier_dim("a", rng), flat_dim("b", int(rng.integers(3, 5)))]
    else:
        dims = [hier_dim("a", rng), flat_dim("b", int(rng.integers(2, 4))), flat_dim("c", 2)]
    tabular = bool(rng.random() < 0.3)
    holdings = (not tabular) and bool(rng.random() < 0.4)
    zeros = bool(rng.random() < 0.3)
    # a table file's top contributions must not exceed the cell's value: no negatives there
    negatives = (not tabular) and bool(rng.random() < 0.25)
    n_leaf = int(np.prod([len(d.leaves) for d in dims]))
    n_rec = int(rng.integers(max(8, n_leaf // 2), 3 * n_leaf + 10))
    # skewed cell choice: some leaf cells crowded, many with one or two records
    weights = rng.pareto(1.2, size=n_leaf) + 0.05
    cell = rng.choice(n_leaf, size=n_rec, p=weights / weights.sum())
    idx = np.unravel_index(cell, tuple(len(d.leaves) for d in dims))
    codes = np.stack([np.asarray(d.leaves)[i] for d, i in zip(dims, idx, strict=True)], axis=1)
    value = np.round(rng.lognormal(4.0, 1.2, size=n_rec)).astype(np.int64) + 1
    if zeros:
        value[rng.random(n_rec) < 0.15] = 0
    if negatives:
        neg = rng.random(n_rec) < 0.15
        value[neg] = -value[neg]
    holding = None
    if holdings:
        n_hold = max(2, int(n_rec * rng.uniform(0.3, 0.8)))
        holding = np.sort(rng.integers(1, n_hold + 1, size=n_rec))  # contiguous in the file
    freq_rule = bool(rng.random() < 0.3)
    return Case(seed, kind, dims, codes, value, holding, tabular, zeros, negatives, freq_rule)


# ============================================================================ own tabulation
@dataclass
class Truth:
    """The table computed here from the records: cells by code tuple, relations, respondents."""

    cells: list[tuple[str, ...]]
    index: dict[tuple[str, ...], int]
    value: np.ndarray
    freq: np.ndarray
    relations: np.ndarray  # dense (relations × cells): parent −1, children +1
    known: list[np.ndarray] = field(default_factory=list)  # per respondent: cells it alone makes up
    exempt: list[set[int]] = field(default_factory=list)  # per respondent: known ∪ largest share


def tabulate_truth(case: Case) -> Truth:
    dims = case.dims
    cells = list(itertools.product(*[d.nodes for d in dims]))
    index = {c: i for i, c in enumerate(cells)}
    n = len(cells)
    value = np.zeros(n)
    freq = np.zeros(n)
    # respondent of each record: its holding, or the record itself
    resp = case.holding if case.holding is not None else np.arange(len(case.value))
    share: dict[tuple[int, int], float] = {}  # (respondent, cell) → Σ contributions
    for r, (row, v) in enumerate(zip(case.codes, case.value, strict=True)):
        chains = [d.chain(code) for d, code in zip(dims, row, strict=True)]
        for c in itertools.product(*chains):
            i = index[c]
            value[i] += v
            freq[i] += 1
            key = (int(resp[r]), i)
            share[key] = share.get(key, 0.0) + float(v)
    rows = []
    for k, d in enumerate(dims):
        kids: dict[str, list[str]] = {}
        for node, par in d.parent.items():
            kids.setdefault(par, []).append(node)
        others = [dd.nodes for j, dd in enumerate(dims) if j != k]
        for par, children in kids.items():
            for rest in itertools.product(*others):
                row = np.zeros(n)

                def at(code: str, rest=rest, k=k) -> int:
                    full = list(rest)
                    full.insert(k, code)
                    return index[tuple(full)]

                row[at(par)] = -1.0
                for ch in children:
                    row[at(ch)] = 1.0
                rows.append(row)
    truth = Truth(cells, index, value, freq, np.array(rows))
    # respondents per cell and the largest |share| per cell (rules look at |contributions|)
    per_cell: dict[int, list[int]] = {}
    biggest = np.zeros(n)
    for (r, i), s in share.items():
        per_cell.setdefault(i, []).append(r)
        biggest[i] = max(biggest[i], abs(s))
    alone: dict[int, list[int]] = {}
    for i, rs in per_cell.items():
        if len(rs) == 1:
            alone.setdefault(rs[0], []).append(i)
    for r, known in alone.items():
        exempt = set(known)
        exempt |= {i for (q, i), s in share.items() if q == r and abs(s) >= biggest[i] - 1e-9}
        truth.known.append(np.array(sorted(known)))
        truth.exempt.append(exempt)
    return truth


# ============================================================================ files for argusqt
def write_microdata(case: Case, folder: Path) -> tuple[Path, Path]:
    lines = []
    meta = []
    pos = 1
    if case.holding is not None:
        meta += ["holding 1 6", "  <HOLDING>"]
        pos = 8
    for d in case.dims:
        meta.append(f"{d.name} {pos} 2 99")
        meta.append("  <RECODEABLE>")
        if d.hrc is not None:
            (folder / f"{d.name}.hrc").write_text("\n".join(d.hrc) + "\n")
            meta += [
                "  <HIERARCHICAL>",
                f'  <HIERCODELIST> "{d.name}.hrc"',
                '  <HIERLEADSTRING> "@"',
            ]
        pos += 3
    meta += [f"value {pos} 10", "  <NUMERIC>"]
    for r, row in enumerate(case.codes):
        head = f"{case.holding[r]:06d} " if case.holding is not None else ""
        lines.append(head + " ".join(row) + f" {case.value[r]:10d}")
    (folder / "data.rda").write_text("\n".join(meta) + "\n")
    (folder / "data.asc").write_text("\n".join(lines) + "\n")
    return folder / "data.asc", folder / "data.rda"


def write_tabular(case: Case, truth: Truth, folder: Path) -> tuple[Path, Path]:
    """Every cell with value, frequency and the two largest |contributions| (records)."""
    meta = ['   <SEPARATOR> ";"']
    for d in case.dims:
        meta += [f'{d.name} "99"', "    <RECODEABLE>", '    <TOTCODE> "Total"']
        if d.hrc is not None:
            (folder / f"{d.name}.hrc").write_text("\n".join(d.hrc) + "\n")
            meta += ["    <HIERARCHICAL>", f'    <HIERCODELIST> "{d.name}.hrc"']
            meta += ['    <HIERLEADSTRING> "@"']
    meta += ["value", "    <NUMERIC>", "freq", "    <FREQUENCY>"]
    meta += ["top1", "    <MAXSCORE>", "top2", "    <MAXSCORE>"]
    tops: dict[int, list[float]] = {}
    for row, v in zip(case.codes, case.value, strict=True):
        chains = [d.chain(code) for d, code in zip(case.dims, row, strict=True)]
        for c in itertools.product(*chains):
            tops.setdefault(truth.index[c], []).append(abs(float(v)))
    lines = []
    for i, c in enumerate(truth.cells):
        if truth.freq[i] == 0:
            continue
        t = sorted(tops[i], reverse=True) + [0.0, 0.0]
        codes = ";".join(f'"{x}"' for x in c)
        lines.append(f"{codes};{int(truth.value[i])};{int(truth.freq[i])};{t[0]:g};{t[1]:g}")
    (folder / "data.rda").write_text("\n".join(meta) + "\n")
    (folder / "data.tab").write_text("\n".join(lines) + "\n")
    return folder / "data.tab", folder / "data.rda"


# ============================================================================ the auditor
@dataclass
class Published:
    """What the code-value file says per cell: a value, x (suppressed), - (empty), [lo, hi]."""

    value: np.ndarray  # NaN where suppressed or empty
    lower: np.ndarray  # interval files: published interval (= value for point cells)
    upper: np.ndarray
    suppressed: np.ndarray


def read_published(path: Path, truth: Truth) -> Published:
    n = len(truth.cells)
    value = np.full(n, np.nan)
    lower = np.full(n, np.nan)
    upper = np.full(n, np.nan)
    sup = np.zeros(n, dtype=bool)
    k = len(truth.cells[0])
    with path.open(newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            key = tuple(x.strip() for x in row[:k])
            i = truth.index.get(key)
            fields = [x.strip() for x in row[k:]]
            if i is None:  # cells of the missing code: always empty
                if any(x not in ("-", "") for x in fields):
                    raise ValueError(f"{path}: unknown non-empty cell {key}")
                continue
            if fields[0] == "x":
                sup[i] = True
            elif fields[0] in ("-", ""):
                value[i] = lower[i] = upper[i] = 0.0
            else:
                value[i] = float(fields[0])
                lower[i] = value[i]
                upper[i] = float(fields[1]) if len(fields) > 1 else value[i]
    return Published(value, lower, upper, sup)


@dataclass
class Rules:
    """argusqt's primaries and protection levels, mapped onto this script's cells."""

    primary: np.ndarray
    lpl: np.ndarray
    upl: np.ndarray
    decimals: int


def attack(
    truth: Truth, lo: np.ndarray, hi: np.ndarray, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """min and max of each target over {M y = 0, lo ≤ y ≤ hi} (scipy linprog, HiGHS)."""
    m = truth.relations
    mins = np.full(len(truth.cells), np.nan)
    maxs = np.full(len(truth.cells), np.nan)
    bounds = np.c_[lo, hi]
    for t in targets:
        for sense in (1.0, -1.0):
            c = np.zeros(len(truth.cells))
            c[t] = sense
            res = linprog(c, A_eq=m, b_eq=np.zeros(m.shape[0]), bounds=bounds, method="highs")
            if res.status != 0:
                raise RuntimeError(f"attacker LP {res.status}: {res.message}")
            if sense > 0:
                mins[t] = res.fun
            else:
                maxs[t] = -res.fun
    return mins, maxs


def apriori(truth: Truth, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    nonempty = truth.freq > 0
    vmin = float(truth.value[nonempty].min()) if nonempty.any() else 0.0
    vmax = float(truth.value[nonempty].max()) if nonempty.any() else 0.0
    lo = np.full(len(truth.cells), min(0.0, 1.5 * vmin))
    hi = np.full(len(truth.cells), 1.5 * vmax if vmax > 0 else max(1.0, abs(lo[0])))
    p = rules.primary
    lo = np.where(p, np.minimum(lo, truth.value - rules.lpl), lo)
    hi = np.where(p, np.maximum(hi, truth.value + rules.upl), hi)
    return lo, hi


def unsafe_cells(
    truth: Truth, rules: Rules, lo: np.ndarray, hi: np.ndarray, variable: np.ndarray
) -> list[str]:
    """Primaries an outsider or an insider narrows inside their protection interval."""
    tol = 0.5 * 10.0 ** (-rules.decimals)
    v = truth.value
    need_lo = v - rules.lpl + tol
    need_hi = v + rules.upl - tol
    targets = np.flatnonzero(rules.primary & variable)
    bad = []
    mins, maxs = attack(truth, lo, hi, targets)
    for t in targets:
        if not (mins[t] <= need_lo[t] and maxs[t] >= need_hi[t]):
            bad.append(f"outsider: {truth.cells[t]} in [{mins[t]:g}, {maxs[t]:g}]")
    for known, exempt in zip(truth.known, truth.exempt, strict=True):
        if not variable[known].any():
            continue
        lo_i, hi_i = lo.copy(), hi.copy()
        lo_i[known] = hi_i[known] = v[known]
        ts = np.array([t for t in targets if t not in exempt], dtype=np.int64)
        if ts.size == 0:
            continue
        mins, maxs = attack(truth, lo_i, hi_i, ts)
        for t in ts:
            if not (mins[t] <= need_lo[t] and maxs[t] >= need_hi[t]):
                who = [truth.cells[k] for k in known]
                bad.append(f"insider {who}: {truth.cells[t]} in [{mins[t]:g}, {maxs[t]:g}]")
    return bad


def audit_export(
    method: str, truth: Truth, rules: Rules, pub: Published, base: int | None
) -> list[str]:
    """Why the published file discloses a primary (empty list: safe)."""
    v = truth.value
    tol = 0.5 * 10.0 ** (-rules.decimals)
    known = ~pub.suppressed & ~np.isnan(pub.value)
    empty = truth.freq == 0
    if method in ("OPT", "MOD", "HEUR"):
        wrong = known & ~empty & (np.abs(pub.value - v) > tol)
        if wrong.any():
            return [f"published value differs from the truth in {int(wrong.sum())} cells"]
        if (rules.primary & ~pub.suppressed).any():
            return ["a primary cell is published"]
        lo, hi = apriori(truth, rules)
        lo = np.where(pub.suppressed, lo, v)
        hi = np.where(pub.suppressed, hi, v)
        return unsafe_cells(truth, rules, lo, hi, pub.suppressed)
    if method == "IP":
        if np.any(pub.lower > v + tol) or np.any(pub.upper < v - tol):
            return ["a published interval does not contain the true value"]
        lo, hi = pub.lower.copy(), pub.upper.copy()
        a_lo, a_hi = apriori(truth, rules)
        # an end at the a-priori bound was known before anything was printed
        ends = [np.where(lo > a_lo, lo, np.nan), np.where(hi < a_hi, hi, np.nan)]
        est = [("midpoint", (lo + hi) / 2), ("lower end", ends[0]), ("upper end", ends[1])]
        out = near_estimates(truth, rules, est)
        lo, hi = np.maximum(lo, a_lo), np.minimum(hi, a_hi)
        return out + unsafe_cells(truth, rules, lo, hi, hi > lo)
    if method == "RND":
        out = []
        b = float(base or 1)
        pv = np.where(empty, 0.0, pub.value)
        if np.any(np.abs(pv / b - np.round(pv / b)) > 1e-9):
            out.append("a published value is not a multiple of the base")
        if np.any(np.abs(pv - v) >= b + tol):
            out.append("a published value is a base or more away from the truth")
        # what a rounded value tells (steps K = 0): the truth lies strictly within one base
        unit = 10.0 ** (-rules.decimals)
        a_lo, a_hi = apriori(truth, rules)
        lo = np.where(empty, v, np.maximum(pv - b + unit, a_lo))
        hi = np.where(empty, v, np.minimum(pv + b - unit, a_hi))
        p = rules.primary
        short = p & ((lo > v - rules.lpl + tol) | (hi < v + rules.upl - tol))
        out += [f"rounding interval: {truth.cells[t]}" for t in np.flatnonzero(short)]
        if out:
            return out
        lo, hi = np.minimum(lo, v), np.maximum(hi, v)
        return unsafe_cells(truth, rules, lo, hi, hi > lo)
    if method == "CTA":
        out = []
        pv = np.where(empty, 0.0, pub.value)
        if np.abs(truth.relations @ pv).max(initial=0.0) > tol:
            out.append("the adjusted table is not additive")
        p = rules.primary
        moved = (pv >= v + rules.upl - tol) | (pv <= v - rules.lpl + tol)
        if (p & ~moved).any():
            out.append(f"{int((p & ~moved).sum())} primaries moved less than their level")
        est = [("adjusted − UPL", pv - rules.upl), ("adjusted + LPL", pv + rules.lpl)]
        return out + near_estimates(truth, rules, est)
    raise ValueError(method)


def near_estimates(truth: Truth, rules: Rules, estimates) -> list[str]:
    """Primaries a natural point estimate comes within max(half a printed unit, a tenth of
    the mean protection level) of (argusqt/docs/methods.md §2.1; written here from that definition)."""
    v = truth.value
    tol = np.maximum(0.5 * 10.0 ** (-rules.decimals), 0.05 * (rules.lpl + rules.upl))
    out = []
    for name, est in estimates:
        near = rules.primary & (np.abs(est - v) <= tol)
        out += [f"{name}: {truth.cells[t]} ({est[t]:g} vs {v[t]:g})" for t in np.flatnonzero(near)]
    return out


# ============================================================================ one run
@dataclass
class Outcome:
    seed: int
    label: str
    method: str
    cells: int
    result: str  # "published", "refused", "error", "no primaries"
    unsafe: list[str]
    seconds: float
    note: str = ""


def run_case(case: Case, methods, max_time: float, workdir: Path) -> list[Outcome]:
    from argusqt.errors import ArgusError, PublicationError
    from argusqt.model.rulespec import FreqRule, PRule, SafetyRules
    from argusqt.model.table import TableSpec
    from argusqt.session import Session

    truth = tabulate_truth(case)
    folder = workdir / f"t{case.seed}"
    folder.mkdir(parents=True, exist_ok=True)
    if case.tabular:
        data, meta = write_tabular(case, truth, folder)
    else:
        data, meta = write_microdata(case, folder)
    p_rule = [PRule(15, 100, 1)]
    freq = FreqRule(3, 20) if case.freq_rule else None
    if case.holding is not None:
        rules = SafetyRules(p_holding=p_rule, freq_individual=freq)
    else:
        rules = SafetyRules(p_individual=p_rule, freq_individual=freq)
    spec = TableSpec([d.name for d in case.dims], "value", rules=rules)
    out = []
    for method in methods:
        t0 = time.perf_counter()
        s = Session()
        if case.tabular:
            s.open_table_data(data, meta)
        else:
            s.open_microdata(data, meta)
        s.specify_table(spec)
        s.compute_tables()
        table = s.table(1)
        ours = _rules_on_truth(table, truth)
        if not ours.primary.any():
            out.append(
                Outcome(case.seed, case.label, method, len(truth.cells), "no primaries", [], 0.0)
            )
            continue
        base = None
        params: dict = {"max_minutes": max_time / 60.0}  # MOD: per subtable
        if method == "RND":  # the proposed base: covers every primary (argusqt/docs/methods.md §9)
            base = s.table_facts(1).covering_rounding_base
            params["base"] = base
        path = folder / f"{method}.txt"
        try:
            s.protect(1, method, params)
            s.write_table(1, 3, "", path)
        except PublicationError as err:
            out.append(_done(case, truth, method, "refused", [], t0, str(err)))
            continue
        except ArgusError as err:
            out.append(_done(case, truth, method, "error", [], t0, str(err)))
            continue
        pub = read_published(path, truth)
        bad = audit_export(method, truth, ours, pub, base)
        out.append(_done(case, truth, method, "published", bad, t0))
    return out


def _done(case, truth, method, result, bad, t0, note="") -> Outcome:
    return Outcome(
        case.seed, case.label, method, len(truth.cells), result, bad, time.perf_counter() - t0, note
    )


def _rules_on_truth(table, truth: Truth) -> Rules:
    """argusqt's statuses and levels of the computed table, on this script's cells."""
    n = len(truth.cells)
    primary = np.zeros(n, dtype=bool)
    lpl = np.zeros(n)
    upl = np.zeros(n)
    status = np.asarray(table.status)
    for c in range(table.n_cells):
        key = tuple(x.strip() for x in table.cell_codes(c))
        i = truth.index.get(key)
        if i is None:
            continue
        if 3 <= status[c] <= 9:
            primary[i] = True
            lpl[i] = table.lpl[c]
            upl[i] = table.upl[c]
        if abs(float(table.value[c]) - truth.value[i]) > 1e-6:
            raise AssertionError(
                f"argusqt tabulated {key} as {table.value[c]}, here {truth.value[i]}"
            )
    return Rules(primary, lpl, upl, int(table.decimals))


# ============================================================================ campaign
def campaign(seeds, methods, max_time: float, workdir: Path, progress=print) -> list[Outcome]:
    results: list[Outcome] = []
    for seed in seeds:
        case = generate(seed)
        res = run_case(case, methods, max_time, workdir)
        results += res
        for r in res:
            if r.unsafe:
                progress(f"UNSAFE seed {r.seed} {r.label} {r.method}: {r.unsafe[:3]}")
    return results


#: why a method may rightly refuse a table: its levels cannot be met within the bounds
EXPECTED_ERRORS = (
    "cannot be protected",
    "no interval publication protects",
    "no suppression pattern can protect",
    "did not converge within its time limit",
    # CTA: levels that cannot all be met inside the bounds (parts whose levels exceed their
    # total's bounds, typical with negative contributions); the message names the cells
    "cannot all be met inside the attacker bounds",
    # RND: no additive rounding whose rounding intervals cover every primary, or one an
    # insider (its own cells) or the relations narrow (argusqt/docs/methods.md §9); the
    # message names them
    "rounding interval covers its protection interval",
    "the table rounded to base",
    # intervals, rounded or adjusted values the publication verdict refuses
    # (argusqt/docs/methods.md §2.1): the message names the cells and the estimate; nothing is written
    "let an attacker recompute or estimate primary cells",
)


def expected_error(note: str) -> bool:
    return any(e in note for e in EXPECTED_ERRORS)


def summary(results: list[Outcome]) -> str:
    lines = [
        f"{'method':<6}{'runs':>7}{'published':>11}{'refused':>9}{'errors':>8}{'no prim':>9}"
        f"{'UNSAFE':>8}{'mean s':>8}"
    ]
    for m in [*METHODS, "all"]:
        rs = [r for r in results if m in ("all", r.method)]
        if not rs:
            continue
        cnt = {
            k: sum(r.result == k for r in rs)
            for k in ("published", "refused", "error", "no primaries")
        }
        unsafe = sum(bool(r.unsafe) for r in rs)
        unexpected = [r for r in rs if r.result == "error" and not expected_error(r.note)]
        if unexpected:
            lines.append(f"  {m}: {len(unexpected)} unexpected errors, e.g. {unexpected[0].note}")
        mean = np.mean([r.seconds for r in rs if r.result != "no primaries"] or [0.0])
        lines.append(
            f"{m:<6}{len(rs):>7}{cnt['published']:>11}{cnt['refused']:>9}{cnt['error']:>8}"
            f"{cnt['no primaries']:>9}{unsafe:>8}{mean:>8.2f}"
        )
    return "\n".join(lines)


def read_results(path: Path) -> list[Outcome]:
    """The runs of a CSV written with --out."""
    with path.open(newline="") as f:
        return [
            Outcome(
                int(r["seed"]), r["table"], r["method"], int(r["cells"]), r["result"],
                [u for u in r["unsafe"].split(" | ") if u], float(r["seconds"]), r["note"],
            )
            for r in csv.DictReader(f)
        ]  # fmt: skip


def report(paths: list[Path]) -> str:
    """Summary of several CSVs: each (seed, method) once, tables with every method run only."""
    runs: dict[tuple[int, str], Outcome] = {}
    for p in paths:
        for r in read_results(p):
            runs.setdefault((r.seed, r.method), r)
    methods = {m for _, m in runs}
    done = {s for s, _ in runs if all((s, m) in runs for m in methods)}
    results = [r for (s, _), r in runs.items() if s in done]
    return f"tables: {len(done)} (every method run)\n" + summary(results)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--max-time", type=float, default=20.0, help="seconds per method run")
    ap.add_argument("--out", type=Path, default=None, help="CSV of every run")
    ap.add_argument(
        "--report",
        type=Path,
        nargs="+",
        default=None,
        help="only summarise the CSVs of earlier runs (e.g. shards of seeds run side by side)",
    )
    args = ap.parse_args()
    if args.report:
        print(report(args.report))
        return
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores; {load}", flush=True)
    t0 = time.perf_counter()
    results: list[Outcome] = []
    sink = args.out.open("w", newline="") if args.out else None
    writer = csv.writer(sink) if sink else None
    if writer:
        writer.writerow(["seed", "table", "method", "cells", "result", "unsafe", "seconds", "note"])
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.tables):
            seed = args.seed + k
            res = campaign([seed], args.methods, args.max_time, Path(tmp), progress=print)
            results += res
            if writer:
                for r in res:
                    writer.writerow(
                        [r.seed, r.label, r.method, r.cells, r.result, " | ".join(r.unsafe),
                         f"{r.seconds:.2f}", r.note]
                    )  # fmt: skip
                sink.flush()
            if (k + 1) % 50 == 0:
                unsafe = sum(bool(r.unsafe) for r in results)
                print(
                    f"{k + 1} tables, {len(results)} runs, {unsafe} unsafe, "
                    f"{time.perf_counter() - t0:.0f} s",
                    flush=True,
                )
    if sink:
        sink.close()
    labels = sorted(
        {
            r.label.split("+")[0]
            + ("+hold" if "hold" in r.label else "")
            + ("+tab" if "tab" in r.label else "")
            for r in results
        }
    )
    print(f"tables: {args.tables} ({', '.join(labels)}); {time.perf_counter() - t0:.0f} s")
    print(summary(results))
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"after: {load}")


if __name__ == "__main__":
    main()
