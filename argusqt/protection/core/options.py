"""Typed solver options: what a descriptor's `solver_options` makes from a method's typed
parameters and what its solver reads, as frozen fields instead of string keys.

The registry → solver contract (issue 24): a solver reads `XOptions.of(params)` and never a
key of a dict. Callers that still speak in mappings (tests, linked tables, run_method's own
keys) are read by field name; keys a solver has no field for belong to other steps of the
run and are left to them, as they were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

from argusqt.dataclass import dataclass

#: the final audit's intervals: exact, pass/fail, or exact up to EXACT_AUDIT_LIMIT cells
AuditIntervals = bool | Literal["auto"]


@dataclass(frozen=True, kw_only=True)
class SolverOptions:
    """Base of the per-solver option dataclasses: the run's safety cap and the final audit."""

    #: seconds: the user's time limit, a safety cap only (None: none)
    max_time: float | None = None
    audit_intervals: AuditIntervals = "auto"
    #: other names a mapping may give a field by (alias → field), read when the field's own
    #: name is not given
    ALIASES: ClassVar[Mapping[str, str]] = {}
    #: fields for which a given None is a value of its own, not "the default"
    KEEP_NONE: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def of(cls, params: SolverOptions | Mapping[str, Any] | None) -> Self:
        """These options from an instance (its fields taken by name) or a mapping; a key
        given as None takes the field's default, as `params.get(key) or default` did."""
        if isinstance(params, cls):
            return params
        values = params.as_dict() if isinstance(params, SolverOptions) else dict(params or {})
        for alias, name in cls.ALIASES.items():
            if values.get(name) is None and values.get(alias) is not None:
                values[name] = values[alias]
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(
            **{
                k: v
                for k, v in values.items()
                if k in names and (v is not None or k in cls.KEEP_NONE)
            }
        )

    def with_seed(self, seed: int) -> Self:
        """These options with the confidential seed of a method that draws one (CTA, IP),
        unless one is given; unchanged for a method without a seed."""
        if getattr(self, "seed", 0) is not None:
            return self
        return dataclasses.replace(self, seed=seed)  # type: ignore[call-arg]

    def as_dict(self) -> dict[str, Any]:
        """The options as a mapping (run_method's glue: singleton keys, virtual cells)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def seconds(value: object) -> float | None:
    """A number of seconds as solvers read it (None or "" for none); budget.seconds_param reads
    the first of several names with it."""
    if value is None or value == "":
        return None
    return float(value)  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class SuppressOptions(SolverOptions):
    """Options every suppression solver is given: the singleton options its model handles
    (descriptor `singletons="method"`; run_method sets them) and the clean-up switch."""

    singleton_singleton: bool = False
    singleton_multiple: bool = False
    min_freq: int = 0
    #: publish again secondaries the pattern does not need
    cleanup: bool = True


def options_dict(params: SolverOptions | Mapping[str, Any] | None) -> dict[str, Any]:
    """A fresh mapping of solver options from typed options or a mapping (run_method's and
    linked tables' glue: singleton keys, subtable filters)."""
    return params.as_dict() if isinstance(params, SolverOptions) else dict(params or {})


__all__ = ["AuditIntervals", "SolverOptions", "SuppressOptions", "options_dict", "seconds"]
