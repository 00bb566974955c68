"""One verdict for every publication form (argusqt/docs/methods.md §2, §14): suppressed cells,
intervals (IP), rounded values (RND) and adjusted values (CTA).

The attacker knows what is printed, the relations, the a-priori bounds, the method and its
public parameters (an insider also its own cells). A primary is disclosed when its feasibility
interval falls inside its protection interval, or when a natural point estimate (an interval's
midpoint or endpoint, `adjusted ∓ level`, the adjusted value) lies within `point_tolerance` of
its true value. `face_verdict` is the one entry point; the gate, `run_method` and the API use it.
"""

from __future__ import annotations

import hashlib

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.model.status import Status, is_suppressed
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.protection.audit.publication import (
    Disclosure,
    PublicationVerdict,
    Reason,
    cell_label,
    publication_audit,
)
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult, ProtectionResult

#: a point estimate closer to the true value than this fraction of the primary's mean
#: protection level (LPL + UPL) / 2 discloses it (argusqt/docs/methods.md §2.1; seed 004
#: counts only exact midpoints, this margin also refuses near misses the printed decimals blur)
ESTIMATE_FRACTION = 0.1

#: the LP attackers over a CKM table's relations take about cells × primaries work (every
#: cell has an interval); above this count the run would not end in a bounded time, so the
#: primaries left are refused as not audited (argusqt/docs/methods.md §16.6)
CKM_RELATIONS_LIMIT = 1_000_000


@dataclass(frozen=True)
class Face:
    """What a protected table prints, as the verdict needs it; `kind` as Table.protection.face."""

    kind: str  # "suppress", "interval", "round", "cta" or "ckm"
    suppressed: np.ndarray | None = None  # suppress: the pattern
    lower: np.ndarray | None = None  # interval: published bounds
    upper: np.ndarray | None = None
    published: np.ndarray | None = None  # round / cta: the printed values
    base: float | None = None  # round: the public rounding base and steps K; ckm: max noise
    steps: int = 0


def confidential_seed(problem: CSPProblem) -> int:
    """A seed from the confidential values and levels for a method's random choices: the same
    input gives the same output, and nobody without the true values can compute it."""
    h = hashlib.sha256()
    for arr in (problem.values, problem.lpl, problem.upl):
        h.update(np.ascontiguousarray(arr, dtype=float).tobytes())
    return int.from_bytes(h.digest()[:8], "big") >> 1


def point_tolerance(problem: CSPProblem) -> np.ndarray:
    """Per cell: how close a point estimate may come to the true value before it discloses it.

    At least half a printed unit (nobody reads closer than the print), and at least
    ESTIMATE_FRACTION of the primary's mean protection level.
    """
    level = 0.5 * (np.abs(np.asarray(problem.lpl, float)) + np.abs(np.asarray(problem.upl, float)))
    return np.maximum(problem.tolerance, ESTIMATE_FRACTION * level)


def rounding_interval(
    published: np.ndarray, base: float, steps: int, decimals: int
) -> tuple[np.ndarray, np.ndarray]:
    """What a rounded value tells an attacker who knows b and K (argusqt/docs/methods.md §9): the
    true value
    lies strictly within (K+1)·b of it, i.e. within (K+1)·b − one printed unit."""
    unit = 10.0 ** (-max(int(decimals), 0))
    span = (int(steps) + 1) * float(base) - unit
    x = np.asarray(published, dtype=float)
    return x - span, x + span


def estimate_disclosures(
    problem: CSPProblem, estimates: list[tuple[Reason, np.ndarray]], cells: np.ndarray
) -> list[Disclosure]:
    """Primaries among `cells` whose point estimate lies within point_tolerance of the value."""
    a = np.asarray(problem.values, dtype=float)
    tol = point_tolerance(problem)
    out: list[Disclosure] = []
    seen: set[int] = set()
    for reason, est in estimates:
        est = np.asarray(est, dtype=float)
        for c in cells[np.abs(est[cells] - a[cells]) <= tol[cells]].tolist():
            if c not in seen:
                seen.add(c)
                out.append(Disclosure(int(c), reason, float(est[c]), float(est[c])))
    return out


def _with_estimates(verdict: PublicationVerdict, extra: list[Disclosure]) -> PublicationVerdict:
    known = {d.cell for d in verdict.disclosures}
    verdict.disclosures += [d for d in extra if d.cell not in known]
    return verdict


def interval_verdict(
    problem: CSPProblem,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> PublicationVerdict:
    """Published intervals: the LP attacker (outsider, insiders) over them plus each primary's
    midpoint and endpoints as estimates; a primary printed as a point is disclosed."""
    lo = np.maximum(np.asarray(lower, dtype=float), problem.lower)
    hi = np.minimum(np.asarray(upper, dtype=float), problem.upper)
    verdict = publication_audit(problem, hi > lo, lower=lo, upper=hi, cancel=cancel,
                                progress=progress)  # fmt: skip
    prim = np.flatnonzero(problem.primary)
    lb, ub = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    # an endpoint at the a-priori bound tells nothing the attacker did not know (a zero cell
    # of a non-negative table is at its bound 0 whatever is printed): not an estimate
    low_end = np.where(lb > problem.lower, lb, np.nan)
    high_end = np.where(ub < problem.upper, ub, np.nan)
    extra = estimate_disclosures(
        problem, [("midpoint", 0.5 * (lb + ub)), ("endpoint", low_end), ("endpoint", high_end)],
        prim,
    )  # fmt: skip
    return _with_estimates(verdict, extra)


def rounded_verdict(
    problem: CSPProblem,
    published: np.ndarray,
    base: float,
    steps: int = 0,
    *,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> PublicationVerdict:
    """Rounded values: each primary's rounding interval must cover its protection interval
    ("rounding interval"), then the LP attacker over all rounding intervals and the relations."""
    a = np.asarray(problem.values, dtype=float)
    x = np.asarray(published, dtype=float)
    lo, hi = rounding_interval(x, base, steps, problem.decimals)
    fixed = np.asarray(problem.status) == Status.EMPTY  # not rounded: printed as "-"
    lo = np.where(fixed, a, np.maximum(lo, problem.lower))
    hi = np.where(fixed, a, np.minimum(hi, problem.upper))
    lo, hi = np.minimum(lo, a), np.maximum(hi, a)  # a method error, never a narrower attacker
    prim = np.flatnonzero(problem.primary)
    tol = problem.tolerance
    short = prim[
        (lo[prim] > a[prim] - problem.lpl[prim] + tol)
        | (hi[prim] < a[prim] + problem.upl[prim] - tol)
    ]
    verdict = publication_audit(problem, hi > lo, lower=lo, upper=hi, cancel=cancel,
                                progress=progress)  # fmt: skip
    first = [Disclosure(int(c), "rounding interval", float(lo[c]), float(hi[c])) for c in short]
    verdict.disclosures = first + [d for d in verdict.disclosures if d.cell not in set(short)]
    return verdict


def _no_outsider(problem: CSPProblem) -> AuditResult:
    """An audit of nothing: the LP attacker has no printed figure to solve from (CTA)."""
    n = problem.n_cells
    nan = np.full(n, np.nan)
    return AuditResult(
        lower=nan, upper=nan.copy(), required_lower=nan.copy(), required_upper=nan.copy(),
        audited=np.zeros(n, dtype=bool), passed=np.ones(n, dtype=bool),
        exact=np.zeros(n, dtype=bool), tolerance=problem.tolerance,
    )  # fmt: skip


def adjusted_verdict(problem: CSPProblem, published: np.ndarray) -> PublicationVerdict:
    """Adjusted values (CTA): an attacker who knows the levels tries `adjusted − UPL` (moved up)
    and `adjusted + LPL` (moved down); a primary left inside its protection interval is
    disclosed by its adjusted value itself. The printed table adds up like the true one, so it
    fixes no true value: no LP attacker (argusqt/docs/methods.md §10)."""
    a = np.asarray(problem.values, dtype=float)
    x = np.asarray(published, dtype=float)
    prim = np.flatnonzero(problem.primary)
    tol = problem.tolerance
    inside = prim[
        (x[prim] > a[prim] - problem.lpl[prim] + tol)
        & (x[prim] < a[prim] + problem.upl[prim] - tol)
    ]
    first = [Disclosure(int(c), "adjusted value", float(x[c]), float(x[c])) for c in inside]
    rest = np.setdiff1d(prim, inside)
    extra = estimate_disclosures(
        problem, [("level estimate", x - problem.upl), ("level estimate", x + problem.lpl)], rest
    )
    return PublicationVerdict(
        outsider=_no_outsider(problem),
        disclosures=first + extra,
        label=lambda c: cell_label(problem, c),
    )


def ckm_face_verdict(
    problem: CSPProblem,
    face: Face,
    *,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> PublicationVerdict:
    """Perturbed values (CKM, argusqt/docs/methods.md §16.6): the checks and the attacker's
    interval of originals (face.lower/upper), then each primary's published value, the
    interval's midpoint and endpoints as estimates (an endpoint at an a-priori bound is none)."""
    from argusqt.protection.audit.ckm_checks import ckm_verdict

    x = np.asarray(face.published, dtype=float)
    verdict = ckm_verdict(problem, x, face.base, face.lower, face.upper)
    lo = x if face.lower is None else np.asarray(face.lower, dtype=float)
    hi = x if face.upper is None else np.asarray(face.upper, dtype=float)
    prim = np.flatnonzero(problem.primary)
    low_end = np.where(lo > problem.lower, lo, np.nan)
    high_end = np.where(hi < problem.upper, hi, np.nan)
    extra = estimate_disclosures(
        problem,
        [("published value", x), ("midpoint", 0.5 * (lo + hi)), ("endpoint", low_end),
         ("endpoint", high_end)],
        prim,
    )  # fmt: skip
    verdict.disclosures += extra  # every reason of a cell: the refusal says them all
    # the relations: true totals add up, each true value inside its interval (outsider and
    # insiders, as for rounded values; the hull only widens a method error, never narrows)
    left = np.setdiff1d(prim, verdict.failing_cells)
    if left.size == 0:
        return verdict
    if problem.n_cells * left.size > CKM_RELATIONS_LIMIT:  # no bounded proof: refused
        verdict.disclosures += [
            Disclosure(int(c), "relations not audited", float(lo[c]), float(hi[c])) for c in left
        ]
        return verdict
    a = np.asarray(problem.values, dtype=float)
    lp_lo = np.minimum(np.maximum(lo, problem.lower), a)
    lp_hi = np.maximum(np.minimum(hi, problem.upper), a)
    lp = publication_audit(problem, lp_hi > lp_lo, lower=lp_lo, upper=lp_hi, cancel=cancel,
                           progress=progress)  # fmt: skip
    verdict.outsider, verdict.insider = lp.outsider, lp.insider
    verdict.disclosures += lp.disclosures
    return verdict


def face_verdict(
    problem: CSPProblem,
    face: Face,
    *,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> PublicationVerdict:
    """The publication verdict of record for any face (the gate, run_method, the API)."""
    if face.kind == "interval":
        if face.lower is None or face.upper is None:
            raise ValueError("an interval face needs lower and upper")
        return interval_verdict(problem, face.lower, face.upper, cancel=cancel, progress=progress)
    if face.kind == "round":
        if face.published is None or face.base is None:
            raise ValueError("a rounded face needs the published values and the base")
        return rounded_verdict(problem, face.published, face.base, face.steps, cancel=cancel,
                               progress=progress)  # fmt: skip
    if face.kind == "ckm":
        if face.published is None:
            raise ValueError("a CKM face needs the published values")
        return ckm_face_verdict(problem, face, cancel=cancel, progress=progress)
    if face.kind == "cta":
        if face.published is None:
            raise ValueError("an adjusted face needs the published values")
        return adjusted_verdict(problem, face.published)
    if face.suppressed is None:
        raise ValueError("a suppression face needs the pattern")
    return publication_audit(problem, face.suppressed, cancel=cancel, progress=progress)


def result_face(kind: str, result: ProtectionResult) -> Face:
    """The face a method's result would print (kind: its descriptor's face)."""

    if result.interval_lower is not None and result.interval_upper is not None:
        return Face("interval", lower=result.interval_lower, upper=result.interval_upper)
    if kind == "ckm" and result.published is not None:  # base: the counts' maximum deviation
        dev = result.figures.get("max_deviation")
        return Face("ckm", published=result.published, base=None if dev is None else float(dev))
    if kind in ("round", "cta") and result.published is not None:
        base = result.figures.get("base")
        return Face(kind, published=result.published,
                    base=None if base is None else float(base),
                    steps=int(result.figures.get("steps", 0) or 0))  # fmt: skip
    return Face("suppress", suppressed=is_suppressed(result.status))
