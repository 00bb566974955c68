"""SCIP's bound and incumbent as progress events, and the user's cancel as an interrupt, for
the adjusting methods' models (RND, CTA)."""

from __future__ import annotations

import math

from pyscipopt import SCIP_EVENTTYPE, Eventhdlr, Model

from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch


class ScipMonitor(Eventhdlr):
    """Forwards SCIP's bound/incumbent to a progress callback and interrupts on cancel."""

    def __init__(
        self,
        progress: ProgressCallback,
        cancel: CancelToken | None,
        watch: Stopwatch,
        label: str,
        offset: float = 0.0,
        every: float = 0.25,
    ) -> None:
        super().__init__()
        self.progress = progress
        self.cancel = cancel
        self.watch = watch
        self.label = label
        self.offset = offset
        self.every = every
        self.last = -math.inf
        self.interrupted = False

    _EVENTS = SCIP_EVENTTYPE.BESTSOLFOUND | SCIP_EVENTTYPE.NODESOLVED | SCIP_EVENTTYPE.LPSOLVED

    def eventinit(self) -> None:
        self.model.catchEvent(self._EVENTS, self)

    def eventexit(self) -> None:
        self.model.dropEvent(self._EVENTS, self)

    def eventexec(self, event) -> dict:
        if self.cancel is not None and self.cancel.cancelled and not self.interrupted:
            self.interrupted = True
            self.model.interruptSolve()
            return {}
        now = self.watch.elapsed
        best = event.getType() == SCIP_EVENTTYPE.BESTSOLFOUND
        if best or now - self.last >= self.every:
            self.last = now
            m = self.model
            inc = m.getPrimalbound() if m.getNSols() > 0 else None
            bound = m.getDualbound()
            self.progress(
                ProgressEvent(
                    message=self.label,
                    bound=None if abs(bound) >= 1e19 else bound + self.offset,
                    incumbent=None if inc is None else inc + self.offset,
                    gap=m.getGap() if inc is not None else None,
                    elapsed=now,
                )
            )
        return {}


def attach_monitor(model: Model, monitor: ScipMonitor, name: str) -> None:
    """Register the monitor as an event handler of the model."""
    model.includeEventhdlr(monitor, name, "argusqt progress and cancel")
