"""The insider audit's outcomes remembered per problem: the same pattern of the same problem
is audited once (docs/design.md, D-57).

OPT's start pattern and its optimum are audited by the publication audit and again by the
branch-and-cut's insider check (and the other way round), the same audit on the same
inputs: on a 78-cell table 40 % of the insider audit's CPU. The key is a digest of every
input the audit reads — the problem's arrays (values, bounds, levels, statuses, costs,
relations, frequencies, respondents, attacker moves), the pattern, the published intervals
and moves given — so a problem changed in place, another pattern or other arguments miss.
Only completed audits are kept (a cancelled one raises); a hit is a copy, so a caller may
change what it gets.
"""

from __future__ import annotations

import copy
import hashlib
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from argusqt.protection.audit.floor_passed import PassedPairs
    from argusqt.protection.audit.insider import InsiderOutcome
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.core.respondents import Respondents

#: patterns remembered per problem (the oldest goes first)
PER_PROBLEM = 32

_memo: weakref.WeakKeyDictionary[CSPProblem, dict[bytes, InsiderOutcome]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


#: the problem whose audits are remembered by pattern alone, the caller's moves left out of
#: the key (by_pattern); None elsewhere
_BY_PATTERN: ContextVar[CSPProblem | None] = ContextVar("argusqt_insider_by_pattern", default=None)
#: within by_pattern: the pairs found passing (passed_pairs)
_PASSED: ContextVar[PassedPairs | None] = ContextVar("argusqt_insider_passed", default=None)


@contextmanager
def by_pattern(problem: CSPProblem) -> Iterator[None]:
    """Within the block, an insider audit of `problem` on a pattern audited before with other
    attacker moves gets that outcome (D-107): the moves a caller hands in are checked, never
    trusted, and only spare LPs (D-49, D-58), so the disclosures are the pattern's own — the
    argument D-101's verdict memo rests on; the outcome's moves and LP count are the first
    audit's. The pairs its publication audits found passing are kept too (`passed_pairs`)."""
    # lazy: only MOD's polish enters the block (D-16)
    from argusqt.protection.audit.floor_passed import PassedPairs

    token = _BY_PATTERN.set(problem)
    kept = _PASSED.set(PassedPairs(problem))
    try:
        yield
    finally:
        _PASSED.reset(kept)
        _BY_PATTERN.reset(token)


def passed_pairs(problem: CSPProblem) -> PassedPairs | None:
    """Within by_pattern(problem): the (primary, side) pairs its publication audits found no
    respondent alone in a cell to narrow, on patterns the outsider passed (D-117); else None."""
    if _BY_PATTERN.get() is not problem:
        return None
    return _PASSED.get()


def moves_in_key(problem: CSPProblem) -> bool:
    """Whether the caller's moves belong in `problem`'s audit key (not within by_pattern)."""
    return _BY_PATTERN.get() is not problem


def remembered(
    problem: CSPProblem,
    key: bytes,
    audit: Callable[[], InsiderOutcome],
) -> InsiderOutcome:
    """`audit()`'s outcome, run only when `key` is not remembered for `problem`."""
    with _lock:
        hit = _memo.get(problem, {}).get(key)
    if hit is not None:
        # its LP count stays (a budget charging counts runs the same on a hit as on a miss,
        # same input, same output); no time was spent on it here
        out = copy.deepcopy(hit)
        out.elapsed = 0.0
        return out
    out = audit()  # Cancelled propagates: nothing is kept
    with _lock:
        seen = _memo.setdefault(problem, {})
        if len(seen) >= PER_PROBLEM:
            seen.pop(next(iter(seen)))
        seen[key] = copy.deepcopy(out)
    return out


def audit_key(
    problem: CSPProblem,
    suppressed: np.ndarray,
    respondents: Respondents | None,
    lower: np.ndarray | None,
    upper: np.ndarray | None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None,
    pattern_only: bool = False,
) -> bytes:
    """Digest of everything the insider audit of `suppressed` reads; `pattern_only`: the
    caller's moves left out (within by_pattern: such an entry serves only those audits)."""
    h = hashlib.blake2b(digest_size=20)
    _arrays(
        h,
        [
            np.asarray(suppressed, dtype=bool),
            problem.values,
            problem.lower,
            problem.upper,
            problem.cost,
            problem.status,
            problem.lpl,
            problem.upl,
            problem.rhs,
            problem.spl,
            problem.freq,
            lower,
            upper,
        ],
    )
    _sparse(h, problem.relations)
    h.update(repr((problem.decimals, problem.is_frequency, _ids(problem.dims))).encode())
    for given in (problem.moves, None if pattern_only else moves):
        h.update(b"moves" if given is not None else b"none")
        for cells, shifts in given or []:
            _arrays(h, [cells, shifts])
    if pattern_only:
        h.update(b"|by-pattern")
    h.update(b"respondents" if respondents is not None else b"derived")
    if respondents is not None:
        _sparse(h, respondents.known)
        _sparse(h, respondents.exempt)
        _arrays(h, [respondents.ids])
        h.update(repr((respondents.unit, respondents.note)).encode())
    return h.digest()


def _arrays(h: Any, arrays: Iterable[Any]) -> None:
    for a in arrays:
        if a is None:
            h.update(b"|none")
            continue
        arr = np.ascontiguousarray(a)
        h.update(f"|{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.tobytes())


def _sparse(h: Any, m: Any) -> None:
    csr = m.tocsr()
    h.update(f"|sparse{csr.shape}".encode())
    _arrays(h, [csr.indptr, csr.indices, csr.data])


def _ids(dims: list[Any] | None) -> tuple[int, ...] | None:
    """The codelists by identity (the audit's neighbourhoods read them; they are not changed
    in place)."""
    return None if dims is None else tuple(id(d) for d in dims)
