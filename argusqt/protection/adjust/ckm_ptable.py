"""A frequency ptable from its parameters D, V, js and pstay, as the R package `ptable`
builds it (`create_cnt_ptable`, argusqt/docs/methods.md §16.5).

Each row is the distribution of most entropy with mean 0 and variance V on the allowed
noises; the solver (SLSQP) runs a bounded number of iterations, so the same parameters give
the same ptable everywhere. D, V and the ptable are confidential: never publish them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from argusqt.errors import ParameterError
from argusqt.model.ptable import PRow, PTable

#: smallest probability of an allowed transition (the package's 10^-8)
EPSILON = 1e-8
#: decimals of p_int_ub in the file (the package rounds to 8)
DECIMALS = 8
#: SLSQP iterations per attempt, and attempts lowering pstay's bound by 0.05 (the package: 20)
MAX_ITER = 500
ATTEMPTS = 20


def generate_ptable(
    D: int, V: float, js: int = 0, pstay: float | None = None, mono: bool = True
) -> PTable:
    """The frequency ptable of rows i = 0 … D + js + 1 (the last serving larger counts).

    D: the largest noise; V: the variance of every row; js: perturbed values 1 … js are not
    allowed; pstay: the lowest probability of no noise (None: as entropy gives); mono: the
    probabilities fall with |v| on each side. ParameterError when the rows cannot meet V.
    """
    if int(D) != D or D < 1:
        raise ParameterError(f"D must be a whole number ≥ 1, got {D}", method="CKM")
    if not V > 0:
        raise ParameterError(f"V must be a number > 0, got {V}", method="CKM")
    if int(js) != js or js < 0:
        raise ParameterError(f"js must be a whole number ≥ 0, got {js}", method="CKM")
    if pstay is not None and not 0 < pstay < 1:
        raise ParameterError(f"pstay must be in (0, 1), got {pstay}", method="CKM")
    D, js = int(D), int(js)
    rows = [PRow(0, np.zeros(1), np.ones(1), np.zeros(1), np.ones(1))]
    for i in range(1, D + js + 2):
        j = np.array([x for x in range(max(i - D, 0), i + D + 1) if not 1 <= x <= js], dtype=float)
        v = j - i
        p = _row(i, v, float(V), pstay, mono, blocked=1 <= i <= js, D=D, js=js)
        ub = np.round(np.cumsum(p), DECIMALS)
        ub[-1] = 1.0
        p = np.diff(np.r_[0.0, ub])
        rows.append(PRow(i, j, p, v, ub))
    return PTable(kind="freq", rows={"all": rows}, source=f"generated D={D} V={V} js={js}")


def _row(
    i: int,
    v: np.ndarray,
    V: float,
    pstay: float | None,
    mono: bool,
    *,
    blocked: bool,
    D: int,
    js: int,
) -> np.ndarray:
    """Most-entropy probabilities on the noises v with mean 0 and variance V."""
    from scipy.optimize import minimize as scipy_minimize

    minimize: Any = scipy_minimize  # SLSQP with dict constraints (its stubs want one form)

    n = v.shape[0]
    lb = np.full(n, EPSILON)
    stay = np.flatnonzero(v == 0)
    if pstay is not None and stay.size:
        lb[stay] = pstay

    def neg_entropy(p: np.ndarray) -> float:
        q = np.clip(p, 1e-300, None)
        return float(np.sum(q * np.log(q)))

    def grad(p: np.ndarray) -> np.ndarray:
        return np.log(np.clip(p, 1e-300, None)) + 1.0

    cons: list[dict] = [
        {"type": "eq", "fun": lambda p: np.sum(p) - 1.0, "jac": lambda p: np.ones(n)},
        {"type": "eq", "fun": lambda p: p @ v, "jac": lambda p: v.copy()},
    ]
    variance = {"type": "eq", "fun": lambda p: p @ (v * v) - V, "jac": lambda p: v * v}
    if mono:
        pairs = [(a, a + 1) for a in range(n - 1) if v[a] >= 0] + [
            (a + 1, a) for a in range(n - 1) if v[a + 1] <= 0
        ]
        for hi, lo in pairs:  # p at the smaller |v| at least p at the larger
            e = np.zeros(n)
            e[hi], e[lo] = 1.0, -1.0
            cons.append({"type": "ineq", "fun": lambda p, e=e: p @ e, "jac": lambda p, e=e: e})
    for _attempt in range(ATTEMPTS):
        bounds = list(zip(lb, np.ones(n), strict=True))
        x0 = np.clip(np.full(n, 1.0 / n), lb, 1.0)
        res = minimize(
            neg_entropy,
            x0,
            jac=grad,
            bounds=bounds,
            constraints=[*cons, variance],
            method="SLSQP",
            options={"maxiter": MAX_ITER, "ftol": 1e-12},
        )
        p = np.clip(res.x, 0.0, 1.0)
        ok = res.success and abs(p.sum() - 1) < 1e-7 and abs(p @ v) < 1e-6
        if ok and abs(p @ (v * v) - V) < 1e-6:
            return p / p.sum()
        if blocked or i < D:
            # a blocked row, or one whose noises cannot reach −D: the package keeps its best
            # row whatever the variance; here the most entropy with variance at most V
            capped = {"type": "ineq", "fun": lambda p: V - p @ (v * v), "jac": lambda p: -v * v}
            res = minimize(
                neg_entropy,
                x0,
                jac=grad,
                bounds=bounds,
                constraints=[*cons, capped],
                method="SLSQP",
                options={"maxiter": MAX_ITER, "ftol": 1e-12},
            )
            p = np.clip(res.x, 0.0, 1.0)
            if res.success and abs(p.sum() - 1) < 1e-7 and abs(p @ v) < 1e-6:
                return p / p.sum()
        if stay.size == 0 or lb[stay[0]] <= EPSILON:
            break
        lb[stay] = np.maximum(lb[stay] - 0.05, EPSILON)  # as the package: a smaller pstay
    raise ParameterError(
        f"no ptable row i = {i} has mean 0 and variance V = {V} with D = {D}, js = {js}"
        + (f" and pstay = {pstay}" if pstay is not None else "")
        + "; try another V (a smaller one for small D) or D",
        method="CKM",
    )
