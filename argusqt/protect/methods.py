"""One entry point for every protection method: `run_method(problem, "OPT", params, …)`.

Methods are looked up by name and imported lazily (a method whose module is not there
yet reports so). Suppression methods always end with a full audit: a pattern that fails
it raises AuditError and is never returned as protected.
"""

from __future__ import annotations

import importlib

import numpy as np

from argusqt.errors import AuditError, Cancelled, MethodError
from argusqt.model.status import is_candidate, is_primary, is_suppressed, secondary_status_for
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protect.audit import EXACT_AUDIT_LIMIT, pattern_digest
from argusqt.protect.insider_repair import make_publishable
from argusqt.protect.problem import CSPProblem
from argusqt.protect.publication import CANCEL_GRACE
from argusqt.protect.result import ProtectionResult
from argusqt.protect.singleton import add_singleton_cells, drop_virtual

#: name → (module, function); every function is (problem, params, progress, cancel).
REGISTRY: dict[str, tuple[str, str]] = {
    "HEUR": ("argusqt.protect.heuristic", "solve_heuristic"),
    "OPT": ("argusqt.protect.optimal", "solve_optimal"),
    "MOD": ("argusqt.protect.modular", "solve_modular"),
    "RND": ("argusqt.protect.rounding", "solve_rounding"),
    "CTA": ("argusqt.protect.cta", "solve_cta"),
    "IP": ("argusqt.protect.interval", "solve_interval"),
}
SUPPRESSION = {"HEUR", "OPT", "MOD"}
UNSUPPORTED = {"GH": "the hypercube method (GH)", "NET": "the network method (NET)"}


def method_function(method: str):
    """The callable of a method name, or MethodError saying why it cannot run."""
    name = method.strip().upper()
    if name in UNSUPPORTED:
        raise MethodError(f"{UNSUPPORTED[name]} is not available in argusqt; use OPT, MOD or HEUR")
    if name not in REGISTRY:
        known = ", ".join(sorted(REGISTRY))
        raise MethodError(f"unknown protection method {method!r}; expected one of {known}")
    module_name, func_name = REGISTRY[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name == module_name:
            raise MethodError(f"method {name} is not available yet") from err
        raise
    func = getattr(module, func_name, None)
    if func is None:
        raise MethodError(f"method {name} is not available yet")
    return func


#: singleton options every suppression method uses unless params switch them off
SINGLETON_DEFAULTS = {"SS": True, "SM": True, "MF": True}


def singleton_request(params: dict) -> tuple[list[str], int]:
    """Singleton options (SS, SM, MF) and the minimum frequency, defaults on (docs/design.md).

    Accepted forms: "singleton" ("SS,SM", a list, or "" for none), SS/SM/MF flags, the
    long names singleton_singleton / singleton_multiple (0/1) and min_freq_option (0/1);
    "min_freq" (or "minfreq") is the minimum frequency MF compares with (MF needs one ≥ 2).
    """
    on = dict(SINGLETON_DEFAULTS)
    listed = params.get("singleton", params.get("singleton_options"))
    if listed is not None:
        if isinstance(listed, str):
            listed = [o for o in listed.replace("+", ",").replace("|", ",").split(",")]
        names = {str(o).strip().upper() for o in listed if str(o).strip()}
        on = {k: k in names for k in on}
    for key in on:
        for name in (key, key.lower()):
            if name in params:
                on[key] = bool(params[name])
    for key, name in (
        ("SS", "singleton_singleton"),
        ("SM", "singleton_multiple"),
        ("MF", "min_freq_option"),
    ):
        if name in params:
            on[key] = bool(params[name])
    minfreq = int(params.get("min_freq", 0) or params.get("minfreq", 0) or 0)
    if minfreq < 2:
        on["MF"] = False
    return sorted(k for k, v in on.items() if v), minfreq if on["MF"] else 0


def _method_params(name: str, params: dict, opts: list[str], minfreq: int) -> dict:
    """Params with the singleton options in the long form OPT and MOD read themselves."""
    out = {
        k: v
        for k, v in params.items()
        if k not in ("singleton", "singleton_options", "SS", "SM", "MF", "ss", "sm", "mf")
    }
    if name in ("OPT", "MOD"):
        out["singleton_singleton"] = "SS" in opts
        out["singleton_multiple"] = "SM" in opts
        out["min_freq"] = minfreq
    return out


def run_method(
    problem: CSPProblem,
    method: str,
    params: dict | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Run a method by name; suppression methods end with a publishable pattern or an error.

    Suppression methods get the singleton options (on unless switched off, see
    singleton_request): OPT and MOD add the virtual cells in their own models, HEUR gets
    them here. The pattern then goes through the publication verdict (outsider and insider
    attacker); cells a respondent could recompute are repaired (more suppressions) rather
    than published. params "audit_intervals": True (exact intervals), False (pass/fail) or
    "auto" (exact up to EXACT_AUDIT_LIMIT suppressed cells). A method's own pass/fail audit
    of the very same pattern (same digest) is reused instead of repeated.
    """
    params = dict(params or {})
    name = method.strip().upper()
    func = method_function(name)
    if name not in SUPPRESSION:
        return func(problem, params, progress, cancel)
    opts, minfreq = singleton_request(params)
    work, n_virtual = problem, 0
    if name == "HEUR" and opts and problem.freq is not None:
        work, n_virtual = add_singleton_cells(problem, None, opts, minfreq)
    try:
        result: ProtectionResult = func(
            work, _method_params(name, params, opts, minfreq), progress, cancel
        )
    except Cancelled as err:
        why = str(err)
        if "unprotected" not in why:
            why += "; the table was left unprotected"
        raise Cancelled(f"{name} cancelled: {why}") from None

    if n_virtual:
        result = drop_virtual(result, problem.n_cells)
        result.log.append(f"{n_virtual} virtual singleton cells added ({', '.join(opts)})")
    elif opts and problem.freq is not None:
        result.log.append(f"singleton options {', '.join(opts)}")
    _normalise_statuses(problem, result)
    sup = is_suppressed(result.status)
    mode = params.get("audit_intervals", "auto")
    exact = bool(mode) if mode != "auto" else int(sup.sum()) <= EXACT_AUDIT_LIMIT
    own = result.audit
    own_exact = bool(result.figures.get("audit_exact"))
    outsider = None
    if (
        (own_exact or not exact)
        and n_virtual == 0
        and own is not None
        and result.figures.get("audit_digest") == pattern_digest(problem, sup)
    ):
        # the method already ran this audit on exactly this problem and pattern
        outsider = own
        kind = "exact" if own_exact else "pass/fail"
        result.log.append(f"audit: the method's own {kind} audit of this pattern is used")
    progress(ProgressEvent(message="Auditing the pattern (outsider and insiders)"))
    # a cancel (before or during the audit) leaves CANCEL_GRACE seconds to finish it
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    try:
        fixed, verdict, added = make_publishable(
            problem, sup, outsider=outsider, intervals=exact, cancel=grace
        )
    except AuditError as err:
        raise AuditError(f"{name}: {err}") from None
    except Cancelled:
        raise Cancelled(
            f"{name} cancelled: its best pattern could not be audited in time, so it is "
            "not used; the table was left unprotected"
        ) from None
    if added:
        status = np.asarray(result.status).copy()
        new = fixed & ~sup
        status[new] = secondary_status_for(status[new])
        result.status = status
        _normalise_statuses(problem, result)
        result.optimal = False
        if result.lower_bound is not None and result.cost > 0:
            result.gap = max(0.0, result.cost - result.lower_bound) / result.cost
        result.log.append(
            f"{added} cells suppressed in addition so that no respondent alone in a "
            "suppressed cell recomputes another primary"
        )
    result.audit = verdict.outsider
    result.verdict = verdict
    result.log.append(verdict.summary())
    return result


def _normalise_statuses(problem: CSPProblem, result: ProtectionResult) -> None:
    """Secondaries as 11/12 per input status (1→11, 2→12, 13→11), primaries unchanged, cost."""
    orig = np.asarray(problem.status)
    status = np.asarray(result.status).astype(orig.dtype, copy=True)
    prim = is_primary(orig)
    if not np.all(is_suppressed(status)[prim]):
        raise AuditError(f"{result.method}: a primary cell was published by the method")
    status[prim] = orig[prim]
    new = is_suppressed(status) & is_candidate(orig)
    status[new] = secondary_status_for(orig[new])
    result.status = status
    sec = new | (is_suppressed(status) & ~prim & ~is_candidate(orig))
    result.cost = float(np.sum(np.asarray(problem.cost, dtype=float)[sec & ~prim]))
