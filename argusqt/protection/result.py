"""What every protection method returns, so the session, batch runner and GUI treat them alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from argusqt.model.status import is_secondary


@dataclass
class AuditResult:
    """Attacker intervals of the audited cells (argusqt/docs/methods.md §12); NaN where not
    audited."""

    lower: np.ndarray  # realised lower bound per cell
    upper: np.ndarray  # realised upper bound per cell
    required_lower: np.ndarray  # a − LPL (primaries), NaN otherwise
    required_upper: np.ndarray  # a + UPL (primaries), NaN otherwise
    audited: np.ndarray  # bool mask of cells audited
    passed: np.ndarray  # bool per cell (True for cells not audited)
    exact: np.ndarray  # bool: exact disclosure (upper − lower ≤ tolerance)
    tolerance: float = 0.0
    elapsed: float = 0.0
    n_lps: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.passed.all())

    @property
    def failures(self) -> np.ndarray:
        return np.flatnonzero(~self.passed)

    def summary(self) -> str:
        n = int(self.audited.sum())
        if self.ok:
            return f"Audit passed: {n} suppressed cells checked, every protection interval covered."
        return (
            f"AUDIT FAILED: {len(self.failures)} of {n} checked cells are not protected "
            f"(cells {', '.join(map(str, self.failures[:10]))}{'…' if len(self.failures) > 10 else ''})."
        )


@dataclass
class ProtectionResult:
    """Outcome of a method on a CSPProblem; `status` has secondaries set (11/12)."""

    method: str
    status: np.ndarray
    cost: float = 0.0  # Σ cost of secondary suppressions (or weighted deviation for CTA)
    lower_bound: float | None = None
    gap: float | None = None  # relative, 0.0 = proven optimal
    optimal: bool = False
    cancelled: bool = False
    timed_out: bool = False
    elapsed: float = 0.0
    published: np.ndarray | None = None  # rounded / adjusted values (RND, CTA)
    interval_lower: np.ndarray | None = None  # interval protection: published intervals
    interval_upper: np.ndarray | None = None
    audit: AuditResult | None = None
    #: protect.publication.PublicationVerdict of the final pattern (outsider and insider)
    verdict: Any = None
    log: list[str] = field(default_factory=list)
    figures: dict = field(default_factory=dict)

    @property
    def n_secondary(self) -> int:
        s = np.asarray(self.status)
        return int(is_secondary(s).sum())
