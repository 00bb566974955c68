"""The insider check of MOD's whole-table branch-and-cut (_polish), with a memory: each audit
starts from the attacker moves the earlier ones found, and those moves start the publication
audit of the pattern kept (docs/design.md, D-58).

The candidates SCIP checks one after the other differ in a few cells, so most (respondent,
primary, direction) pairs keep a move of an earlier audit: the insider audit checks each
such move (`Cover.seed`, D-49: checked, never trusted) before a path LP. The verdict is the
audit's own; only the LPs it needs change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.errors import Cancelled
from argusqt.protection.audit.insider import InsiderOutcome, insider_audit, respondents_of
from argusqt.protection.core.problem import CSPProblem

if TYPE_CHECKING:
    from argusqt.protection.suppress.scip_plugins import InsiderFind

#: patterns whose outcome is remembered (SCIP checks one solution in several callbacks)
MEMO = 64
#: attacker moves carried to the next audit at most (the newest first)
MAX_MOVES = 4_000

Move = tuple[np.ndarray, np.ndarray]


class PolishInsiders:
    """An InsiderCheck (scip_plugins) for the polish: the publication audit's insider
    attacker, seeded with earlier audits' moves (checked, never trusted); `moves` what the
    audits found, which the publication audit of the pattern kept starts from."""

    def __init__(self, problem: CSPProblem, moves: list[Move] | None = None) -> None:
        self.problem = problem
        self.n = problem.n_cells
        self.respondents = respondents_of(problem)
        self.outcomes: dict[bytes, InsiderOutcome] = {}
        #: the first audit's seeds: the witness moves of the modular pattern (_finish)
        self.moves: list[Move] = list(moves or [])[:MAX_MOVES]
        self.audits = 0

    @property
    def active(self) -> bool:
        """False when the problem has no respondents (nothing to check)."""
        return self.respondents is not None and self.respondents.count > 0

    def _key(self, mask: np.ndarray) -> bytes:
        return np.packbits(np.asarray(mask[: self.n], dtype=bool)).tobytes()

    def __call__(self, mask: np.ndarray, stop: Any) -> list[InsiderFind] | None:
        key = self._key(mask)
        out = self.outcomes.get(key)
        if out is None:
            try:
                out = insider_audit(
                    self.problem,
                    np.asarray(mask[: self.n], dtype=bool),
                    respondents=self.respondents,
                    cancel=stop,
                    moves=self.moves or None,
                )
            except Cancelled:
                return None
            self.audits += 1
            if len(self.outcomes) >= MEMO:
                self.outcomes.pop(next(iter(self.outcomes)))
            self.outcomes[key] = out
            self.moves = (list(out.moves) + self.moves)[:MAX_MOVES]
        return [(d.cell, np.asarray(d.known, dtype=np.int64)) for d in out.disclosures]
