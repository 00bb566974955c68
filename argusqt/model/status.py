"""The 14 τ-Argus cell statuses (argusqt/docs/rules.md §7.1) and the masks methods need."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: numpy.typing is not imported at run time (D-92)
    from numpy.typing import ArrayLike


class Status(IntEnum):
    SAFE = 1
    SAFE_MANUAL = 2
    UNSAFE_RULE = 3  # dominance / p%
    UNSAFE_REQUEST = 4
    UNSAFE_FREQ = 5
    UNSAFE_ZERO = 6
    UNSAFE_SINGLETON = 7  # obsolete, accepted on input
    UNSAFE_SINGLETON_MANUAL = 8  # obsolete, accepted on input
    UNSAFE_MANUAL = 9
    PROTECTED = 10
    SECONDARY = 11
    SECONDARY_MANUAL = 12
    EMPTY_NONSTRUCTURAL = 13
    EMPTY = 14


STATUS_LABELS: dict[int, str] = {
    1: "Safe",
    2: "Safe (manual)",
    3: "Unsafe (dominance/p%)",
    4: "Unsafe (request)",
    5: "Unsafe (frequency)",
    6: "Unsafe (zero cell)",
    7: "Unsafe (singleton)",
    8: "Unsafe (singleton, manual)",
    9: "Unsafe (manual)",
    10: "Protected",
    11: "Secondary",
    12: "Secondary (from manual)",
    13: "Empty (non-structural)",
    14: "Empty",
}

#: JJ letter per status (argusqt/docs/formats.md §10.1).
JJ_LETTER = {1: "s", 2: "s", 13: "s", 10: "z", 14: "z", 11: "m", 12: "m"} | {
    s: "u" for s in range(3, 10)
}
#: Intermediate-file letter per status.
INTERMEDIATE_LETTER = {1: "S", 2: "S", 13: "S", 10: "P", 14: "E", 11: "M", 12: "M"} | {
    s: "U" for s in range(3, 10)
}


def is_primary(status: ArrayLike) -> np.ndarray:
    """Unsafe cells (3–9): they must be suppressed and protected."""
    s = np.asarray(status)
    return (s >= 3) & (s <= 9)


def is_secondary(status: ArrayLike) -> np.ndarray:
    s = np.asarray(status)
    return (s == 11) | (s == 12)


def is_suppressed(status: ArrayLike) -> np.ndarray:
    """Cells not published (primary or secondary)."""
    return is_primary(status) | is_secondary(status)


def is_candidate(status: ArrayLike) -> np.ndarray:
    """Cells a secondary method may suppress (1, 2, 13)."""
    s = np.asarray(status)
    return (s == 1) | (s == 2) | (s == 13)


def is_empty(status: ArrayLike) -> np.ndarray:
    return np.asarray(status) == 14


def secondary_status_for(status: np.ndarray) -> np.ndarray:
    """Status a candidate takes when suppressed: 1→11, 2→12, 13→11 (argusqt/docs/rules.md §7.3)."""
    s = np.asarray(status)
    return np.where(s == 2, 12, 11).astype(s.dtype)
