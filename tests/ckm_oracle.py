"""An independent cell key method oracle for the tests: it reads the records, hierarchies and
ptables itself (csv, plain text) and sums keys with integers, sharing no code with argusqt's
method (argusqt/docs/methods.md §16.1–§16.2)."""

from __future__ import annotations

import csv
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
