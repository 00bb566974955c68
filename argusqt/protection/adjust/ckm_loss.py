"""Information loss and a risk figure of a perturbed table (argusqt/docs/methods.md §16.7):
what the noise costs the users of the table and how often it leaves a small cell exact.
"""

from __future__ import annotations

import numpy as np

from argusqt.dataclass import dataclass

#: size classes of the original value: [lower, upper) (counts and magnitudes alike)
CLASS_EDGES = (1.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0, float("inf"))


@dataclass(frozen=True)
class SizeClass:
    """Loss and risk of the non-empty cells whose original value lies in [lower, upper)."""

    lower: float
    upper: float
    cells: int
    changed: int  # cells whose published value differs from the original
    mean_abs: float  # mean |published − original|
    mean_rel: float  # mean |published − original| / |original|
    exact: int  # cells published at their true value (the risk figure)

    @property
    def label(self) -> str:
        if self.upper == float("inf"):
            return f"≥ {self.lower:g}"
        if self.upper - self.lower == 1:
            return f"{self.lower:g}"
        return f"{self.lower:g}–{self.upper:g}"

    @property
    def exact_share(self) -> float:
        return self.exact / self.cells if self.cells else 0.0


@dataclass(frozen=True)
class InfoLoss:
    """Loss and risk figures of one CKM table."""

    cells: int  # non-empty cells
    changed: int
    mean_abs: float
    mean_rel: float
    max_abs: float
    false_zeros: int  # non-zero cells published as 0
    classes: tuple[SizeClass, ...]

    @property
    def changed_share(self) -> float:
        return self.changed / self.cells if self.cells else 0.0

    def small_exact_share(self, below: float = 5.0) -> float:
        """Share of the small non-empty cells (original < below) published exactly."""
        small = [c for c in self.classes if c.upper <= below]
        n = sum(c.cells for c in small)
        return sum(c.exact for c in small) / n if n else 0.0

    def lines(self) -> list[str]:
        """The figures in words, for the log and the report."""
        out = [
            f"Perturbed cells (value changed): {self.changed:,} of {self.cells:,} "
            f"({100 * self.changed_share:.1f} %)",
            f"Mean absolute deviation: {self.mean_abs:.3g}; mean relative deviation: "
            f"{100 * self.mean_rel:.2f} %; largest deviation: {self.max_abs:.3g}",
            f"Small cells (1–4) published at their true value: "
            f"{100 * self.small_exact_share():.1f} %",
        ]
        if self.false_zeros:
            out.append(f"Non-empty cells published as 0: {self.false_zeros:,}")
        return out

    def to_dict(self) -> dict:
        """Plain numbers for the API and session files."""
        return {
            "cells": self.cells,
            "changed": self.changed,
            "changed_share": self.changed_share,
            "mean_abs": self.mean_abs,
            "mean_rel": self.mean_rel,
            "max_abs": self.max_abs,
            "false_zeros": self.false_zeros,
            "small_exact_share": self.small_exact_share(),
            "classes": [
                {
                    "class": c.label,
                    "cells": c.cells,
                    "changed": c.changed,
                    "mean_abs": c.mean_abs,
                    "mean_rel": c.mean_rel,
                    "exact": c.exact,
                    "exact_share": c.exact_share,
                }
                for c in self.classes
            ],
        }


def info_loss(original: np.ndarray, published: np.ndarray, nonempty: np.ndarray) -> InfoLoss:
    """Loss and risk over the non-empty cells, overall and per size class of |original|."""
    a = np.asarray(original, dtype=float)[nonempty]
    x = np.asarray(published, dtype=float)[nonempty]
    d = np.abs(x - a)
    tol = 1e-9 * np.maximum(1.0, np.abs(a))
    changed = d > tol
    rel = np.divide(d, np.abs(a), out=np.zeros_like(d), where=np.abs(a) > 1e-12)
    classes = []
    lo = 0.0
    size = np.abs(a)
    for hi in CLASS_EDGES:
        m = (size >= lo) & (size < hi) & (size > 0)
        n = int(m.sum())
        if n:
            classes.append(
                SizeClass(
                    lo if lo > 0 else 0.0,
                    hi,
                    n,
                    int(changed[m].sum()),
                    float(d[m].mean()),
                    float(rel[m].mean()),
                    int((~changed[m]).sum()),
                )
            )
        lo = hi
    return InfoLoss(
        cells=int(a.shape[0]),
        changed=int(changed.sum()),
        mean_abs=float(d.mean()) if d.size else 0.0,
        mean_rel=float(rel.mean()) if rel.size else 0.0,
        max_abs=float(d.max()) if d.size else 0.0,
        false_zeros=int(((np.abs(x) <= 1e-12) & (np.abs(a) > 1e-12)).sum()),
        classes=tuple(classes),
    )
