"""The publication verdict of a CKM table (argusqt/docs/methods.md §16.6): the checks of the
perturbation, and the attacker who knows the ptable.

Every non-empty cell must come from record keys and be published as a finite number, empty
cells as 0, and a count within the ptable's maximum deviation of its true value. A primary is
disclosed when the originals its published value can come from (`lower`, `upper`: the
attacker's interval) do not cover its protection interval; the point estimates are added by
protection.audit.disclosure. A failing cell is named, so the gate refuses the table.
"""

from __future__ import annotations

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.model.status import Status
from argusqt.protection.audit.publication import Disclosure, PublicationVerdict, cell_label
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult


def _nothing_suppressed(problem: CSPProblem) -> AuditResult:
    n = problem.n_cells
    nan = np.full(n, np.nan)
    return AuditResult(
        lower=nan, upper=nan.copy(), required_lower=nan.copy(), required_upper=nan.copy(),
        audited=np.zeros(n, dtype=bool), passed=np.ones(n, dtype=bool),
        exact=np.zeros(n, dtype=bool), tolerance=problem.tolerance,
    )  # fmt: skip


@dataclass
class CKMVerdict(PublicationVerdict):
    """The checks of a perturbed table, in the words of CKM (no suppression was audited)."""

    cells: int = 0

    def summary(self, names=None) -> str:
        label = names or self.label
        if self.ok:
            return (
                f"CKM verdict passed: {self.cells:,} cells published with the noise of their "
                "cell keys; ptable valid, record keys present, no primary recomputed within "
                "its protection interval by an attacker who knows the ptable (from its own "
                "value or with the relations, outside attacker and insiders)."
            )
        bad = self.failing_cells
        parts = [f"{label(int(c))} ({', '.join(self.reasons(int(c)))})" for c in bad[:10]]
        big = any(d.reason == "relations not audited" for d in self.disclosures)
        size = (
            " The table is too large for the attacker over its relations (cells × primaries "
            "above the limit of argusqt/docs/methods.md §16.6): it cannot be certified."
            if big
            else ""
        )
        return (
            f"CKM VERDICT FAILED: {bad.size} cell{'s' if bad.size != 1 else ''} disclosed or "
            f"not published as the cell key method gives them: {', '.join(parts)}"
            f"{'…' if bad.size > 10 else ''}. An attacker who knows the ptable recomputes a "
            "primary from its published value (argusqt/docs/methods.md §16.6): use a ptable "
            "that moves small counts (no stay), a larger D, or suppression." + size
        )


def ckm_verdict(
    problem: CSPProblem,
    published: np.ndarray,
    max_deviation: float | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
) -> CKMVerdict:
    """Keys present, finite values, empty cells 0, counts within the maximum deviation, and
    every primary's attacker interval [lower, upper] covering its protection interval."""
    a = np.asarray(problem.values, dtype=float)
    x = np.asarray(published, dtype=float)
    status = np.asarray(problem.status)
    empty = status == Status.EMPTY
    bad = ~np.isfinite(x) | (empty & (x != 0))
    if problem.cellkey is None:
        bad |= ~empty  # no record keys: nothing was perturbed from a cell key
    if max_deviation is not None and np.isfinite(max_deviation):
        bad |= np.abs(x - a) > max_deviation + problem.tolerance
    disclosures = [
        Disclosure(int(c), "ckm check", float(x[c]), float(x[c])) for c in np.flatnonzero(bad)
    ]
    prim = np.flatnonzero(np.asarray(problem.primary) & ~bad)
    # without the attacker's interval nothing is known of the noise: the value itself
    lo = x if lower is None else np.asarray(lower, dtype=float)
    hi = x if upper is None else np.asarray(upper, dtype=float)
    tol = problem.tolerance
    short = prim[
        (lo[prim] > a[prim] - problem.lpl[prim] + tol)
        | (hi[prim] < a[prim] + problem.upl[prim] - tol)
        | ~np.isfinite(lo[prim])
        | ~np.isfinite(hi[prim])
    ]
    disclosures += [Disclosure(int(c), "ckm interval", float(lo[c]), float(hi[c])) for c in short]
    return CKMVerdict(
        outsider=_nothing_suppressed(problem),
        disclosures=disclosures,
        label=lambda c: cell_label(problem, c),
        cells=int((~empty).sum()),
    )
