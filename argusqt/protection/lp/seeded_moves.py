"""Attacker moves a caller found before, as a separator's remembered moves (Certificates,
docs/design.md D-46): MOD's witnesses of its pattern prove most primaries of the polish's
start without an attacker LP (D-67). Each move is checked, never trusted."""

from __future__ import annotations

import numpy as np

from argusqt.protection.lp.components import moves_matrix, relation_residuals
from argusqt.protection.lp.separation import Separator

#: a move keeps a relation when |M δ| ≤ TOL · max|δ| (the insider cover's seed test, D-49)
TOL = 1e-7

Move = tuple[np.ndarray, np.ndarray]


def _well_formed(moves: list[Move], n: int) -> list[Move]:
    """The moves with cells of the problem, each once, and finite, nonzero shifts."""
    out = []
    for cells, d in moves:
        cells = np.asarray(cells, dtype=np.int64)
        d = np.asarray(d, dtype=float)
        if cells.size == 0 or cells.size != d.size or not np.isfinite(d).all():
            continue
        if cells.min() < 0 or cells.max() >= n or np.unique(cells).size != cells.size:
            continue
        if np.abs(d).max() > 0:
            out.append((cells, d))
    return out


def seed_certificates(sep: Separator, moves: list[Move]) -> int:
    """Remember each move (cells, shifts) that keeps every relation of `sep`'s problem for
    the primaries it moves; returns how many were kept. Certificates.reach scales a move to
    the point it is tried at (a published cell stops it), so a kept move spares an LP only
    where it is an attacker move there. All moves are checked in one product."""
    n = sep.values.shape[0]
    cand = _well_formed(moves, n) if sep.reuse else []
    if not cand:
        return 0
    by_move = moves_matrix(cand, n)
    scale = abs(by_move).max(axis=0).toarray().ravel()
    residual = relation_residuals(sep.rel, by_move)
    targets = np.zeros(n, dtype=bool)
    targets[sep.targets] = True
    ok = np.flatnonzero(residual <= TOL * scale)
    for k in ok.tolist():
        cells, d = cand[k]
        for j in np.flatnonzero(targets[cells]).tolist():
            sep.certs.keep(int(cells[j]), 1 if d[j] > 0 else -1, cells, d)
    return int(ok.size)
