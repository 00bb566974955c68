"""An independent cell key method oracle for the tests: it reads the records, hierarchies and
ptables itself (csv, plain text) and sums keys with integers, sharing no code with argusqt's
method (argusqt/docs/methods.md §16.1–§16.2)."""

from __future__ import annotations

import csv
import math
from decimal import Decimal
from pathlib import Path


def hrc_leaves(path: Path, lead: str = "@") -> dict[str, set[str]]:
    """node code → the leaf codes under it (a leaf → itself), from an `.hrc` file."""
    stack: list[tuple[int, str]] = []
    children: dict[str, list[str]] = {}
    order: list[str] = []
    for raw in path.read_text().splitlines():
        if not raw.strip():
            continue
        depth = 0
        while raw.startswith(lead, depth * len(lead)):
            depth += 1
        code = raw[depth * len(lead) :].strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            children.setdefault(stack[-1][1], []).append(code)
        stack.append((depth, code))
        order.append(code)
    leaves: dict[str, set[str]] = {}

    def walk(c: str) -> set[str]:
        if c not in leaves:
            kids = children.get(c, [])
            leaves[c] = set().union(*(walk(k) for k in kids)) if kids else {c}
        return leaves[c]

    for c in order:
        walk(c)
    return leaves


def read_ptable_rows(path: Path) -> list[list[tuple[float, float]]]:
    """Rows of a frequency ptable as lists of (p_int_ub, v), row i at index i."""
    rows: list[list[tuple[float, float]]] = []
    with path.open() as f:
        reader = csv.reader(f, delimiter=";")
        next(reader)
        for rec in reader:
            if not rec:
                continue
            i = int(float(rec[0]))
            while len(rows) <= i:
                rows.append([])
            rows[i].append((float(rec[4]), float(rec[3])))
    return rows


def key_int(text: str, decimals: int) -> int:
    """A key as a whole number of 10^-decimals."""
    return int((Decimal(text.strip()) * (10**decimals)).to_integral_value())


def cell_key(keys: list[int], decimals: int) -> float:
    return (sum(keys) % 10**decimals) / 10**decimals


def perturbed_count(n: int, key: float, rows: list[list[tuple[float, float]]]) -> int:
    """n plus the v of the first transition of row min(n, last) whose p_int_ub exceeds key."""
    if n == 0:
        return 0
    row = rows[min(n, len(rows) - 1)]
    for ub, v in row:
        if key < ub:
            return n + int(v)
    return n


# ------------------------------------------------------------------------------ magnitudes
def read_cont_rows(path: Path) -> dict[int, list[tuple[float, float, float]]]:
    """Rows of a magnitude ptable (type all): i → [(j, p, p_int_ub)] in file order."""
    rows: dict[int, list[tuple[float, float, float]]] = {}
    with path.open() as f:
        reader = csv.reader(f, delimiter=";")
        next(reader)
        for rec in reader:
            if rec and rec[5].strip() == "all":
                rows.setdefault(int(float(rec[0])), []).append(
                    (float(rec[1]), float(rec[2]), float(rec[4]))
                )
    return rows


def _noise(row: list[tuple[float, float, float]], i: int, key: float) -> float:
    for j, _p, ub in row:
        if key < ub:
            return j - i
    return 0.0


def lookup_cont(rows: dict[int, list[tuple[float, float, float]]], z: float, key: float) -> float:
    """Linear interpolation between the rows around z; the last row from it up."""
    keys = sorted(rows)
    if z >= keys[-1]:
        return _noise(rows[keys[-1]], keys[-1], key)
    if z < keys[0]:
        return 0.0
    a1 = min(k for k in keys if k > z)
    a0 = max(k for k in keys if k <= z)
    lam = (z - a0) / (a1 - a0)
    d0 = _noise(rows[a0], a0, key)
    d1 = _noise(rows[a1], a1, key) if abs(a0 - z) > 1e-8 else 0.0
    return (1 - lam) * d0 + lam * d1


def shifted(key_units: int, decimals: int) -> int:
    text = f"{key_units:0{decimals}d}"
    return int(text[1:] + text[0])


def flex(z: float, z_s: float, s0: float, s1: float, xs: float, q: float) -> float:
    if z >= xs:
        return s0 * (1 + ((s1 * z - s0 * xs) / (s0 * xs)) * ((2 * xs) / (z + xs)) ** q)
    return s1 if z > z_s else 0.0


def perturbed_topk(
    x: float, tops: list[float], key_units: int, decimals: int, large, small, par: dict
) -> float:
    """One cell of `<CKM> T(k)` with `<SCALING> F(…)` and separation, written from
    argusqt/docs/methods.md §16.3 one step at a time (no arrays, no argusqt code)."""
    s0, s1, xs, q, eps = par["s0"], par["s1"], par["xs"], par["q"], par["eps"]
    last = small[max(small)]
    m1 = math.sqrt(sum((j - max(small)) ** 2 * p for j, p, _ in last))
    z_s = m1 / (s1 * math.sqrt(sum(e * e for e in eps)))
    u = shifted(key_units, decimals)
    x1 = tops[0]
    xd = x1 * flex(abs(x1), z_s, s0, s1, xs, q) if abs(x1) >= z_s else 1.0
    if abs(x) < abs(xd):
        xd = x
        x1 = x / s1
        if abs(x1) < z_s:
            xd = 1.0
    table = large if abs(x1) > z_s else small
    v = lookup_cont(table, abs(x / xd), u / 10**decimals) if xd != 0 else 0.0
    step = (
        math.copysign(1, x if x != 0 else 1)
        * abs(xd)
        * math.copysign(1, v if v != 0 else 1)
        * abs(v)
    )
    if v >= 0:
        x = x + step
    else:
        x = x + (min(step, -x) if x < 0 else max(step, -x))
    for j in range(2, len(tops) + 1):
        xj = tops[j - 1]
        if abs(xj) < z_s:
            continue
        xd = xj * eps[j - 1] * flex(abs(xj), z_s, s0, s1, xs, q)
        if abs(x) < abs(xd):
            xd = x
            xj = x / (eps[j - 1] * s1)
        if abs(xj) >= z_s:
            u = shifted(u, decimals)
            v = lookup_cont(large, abs(x / xd), u / 10**decimals) if xd != 0 else 0.0
            x = x + (1 if x >= 0 else -1) * abs(xd) * v
    return x
