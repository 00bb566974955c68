"""One entry point for every protection method: `run_method(problem, "OPT", params, …)`.

Methods are looked up by name and imported lazily (a method whose module is not there
yet reports so). Suppression methods always end with a full audit: a pattern that fails
it raises AuditError and is never returned as protected.
"""

from __future__ import annotations

import importlib

import numpy as np

from argusqt.errors import AuditError, MethodError
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protect.audit import EXACT_AUDIT_LIMIT, audit, pattern_digest
from argusqt.protect.problem import CSPProblem
from argusqt.protect.publication import publication_audit
from argusqt.protect.result import ProtectionResult
from argusqt.protect.singleton import add_singleton_cells, drop_virtual
from argusqt.rules.status import is_candidate, is_primary, is_suppressed, secondary_status_for

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


def singleton_request(params: dict) -> tuple[list[str], int]:
    """Singleton options asked for in params: "singleton" ("SS,SM,MF" or list) or SS/SM/MF flags."""
    opts = params.get("singleton") or params.get("singleton_options") or []
    if isinstance(opts, str):
        opts = [o for o in opts.replace("+", ",").split(",") if o.strip()]
    opts = [str(o).strip().upper() for o in opts]
    for key in ("SS", "SM", "MF"):
        if params.get(key) or params.get(key.lower()):
            opts.append(key)
    return sorted(set(opts)), int(params.get("minfreq", 0) or 0)


def run_method(
    problem: CSPProblem,
    method: str,
    params: dict | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Run a method by name; suppression methods get singleton cells and a final audit.

    params (suppression methods): "singleton" / SS, SM, MF flags and "minfreq" for the
    virtual cells of methods.md §5; "audit_intervals": True (exact intervals), False
    (pass/fail) or "auto" (exact up to EXACT_AUDIT_LIMIT suppressed cells). A method's own
    pass/fail audit of the very same pattern (same digest) is reused instead of repeated.
    """
    params = dict(params or {})
    name = method.strip().upper()
    func = method_function(name)
    if name not in SUPPRESSION:
        return func(problem, params, progress, cancel)
    opts, minfreq = singleton_request(params)
    work, n_virtual = problem, 0
    if opts:
        work, n_virtual = add_singleton_cells(problem, None, opts, minfreq)
    result: ProtectionResult = func(work, params, progress, cancel)
    if n_virtual:
        result = drop_virtual(result, problem.n_cells)
        result.log.append(f"{n_virtual} virtual singleton cells added ({', '.join(opts)})")
    _normalise_statuses(problem, result)
    sup = is_suppressed(result.status)
    mode = params.get("audit_intervals", "auto")
    exact = bool(mode) if mode != "auto" else int(sup.sum()) <= EXACT_AUDIT_LIMIT
    own = result.audit
    own_exact = bool(result.figures.get("audit_exact"))
    if (
        (own_exact or not exact)
        and n_virtual == 0
        and own is not None
        and result.figures.get("audit_digest") == pattern_digest(problem, sup)
    ):
        # the method already ran this audit on exactly this problem and pattern
        verdict = own
        kind = "exact" if own_exact else "pass/fail"
        result.log.append(f"audit: the method's own {kind} audit of this pattern is used")
    else:
        progress(ProgressEvent(message="Auditing the pattern"))
        verdict = audit(problem, sup, intervals=exact, cancel=None)
    result.audit = verdict
    publication = publication_audit(problem, sup, outsider=verdict)
    result.verdict = publication
    if not publication.ok:
        raise AuditError(f"{name}: {publication.summary()}")
    result.log.append(publication.summary())
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
