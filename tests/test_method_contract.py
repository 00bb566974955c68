"""The contract every registered protection method honours (in the spirit of scikit-learn's
check_estimator): a complete descriptor, parameters that round-trip through `.arb` text and
refuse bad values with a clear message, progress reports, cancel, and a result the audit
(which shares no code with the method) accepts. A new method gets all of this for free."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import random_1h2d

from argusqt.batch.arb import parse_arb_lines, parse_suppress
from argusqt.errors import BatchError, Cancelled, ParameterError
from argusqt.model.status import is_primary, is_suppressed
from argusqt.progress import CancelToken, ProgressEvent
from argusqt.protection.audit.outsider import audit
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core import registry
from argusqt.protection.core.params import FieldSpec, MethodParams
from argusqt.protection.run import run_method

METHODS = registry.methods()
IDS = [d.name for d in METHODS]


def _problem():
    """A small hierarchical 2-D table with primaries (seeded: the same for every method)."""
    return random_1h2d(np.random.default_rng(7), [2, 2], 3, primary_share=0.15)


def _options(desc: registry.MethodDescriptor, problem, **values) -> dict:
    facts = registry.problem_facts(problem, min_frequency=3)
    return desc.options_for(desc.params.suggested(facts, values), facts)


# ---------------------------------------------------------------------- the descriptor
@pytest.mark.parametrize("desc", METHODS, ids=IDS)
def test_descriptor_is_complete(desc):
    assert desc.name == desc.name.upper() and desc.params.METHOD == desc.name
    assert desc.label and desc.help and desc.kind in ("suppress", "adjust", "interval")
    assert desc.face in ("suppress", "round", "cta", "interval")
    assert (desc.face == "suppress") == (desc.kind == "suppress")
    assert callable(desc.solve) and callable(desc.solver_options)
    assert desc.solve.__module__ in registry.METHOD_MODULES  # one module holds the method
    specs = desc.params.fields()  # positions 1..n without gaps (checked there)
    for f in specs:
        assert f.info.label and f.info.batch and f.type in (bool, int, float)
        assert not f.required or f.info.suggest is not None, "the dialog needs a start value"
    assert registry.get(desc.name.lower()) is desc


def test_every_method_module_registers_one_method():
    modules = [importlib.import_module(m) for m in registry.METHOD_MODULES]
    assert sorted(m.DESCRIPTOR.name for m in modules) == sorted(IDS)
    with pytest.raises(ParameterError, match="unknown protection method 'XYZ'"):
        registry.get("XYZ")


# ---------------------------------------------------------------------- parameters
def _value(f: FieldSpec):
    """A hypothesis strategy of the allowed values of one parameter."""
    i = f.info
    if f.type is bool:
        return st.booleans()
    if i.choices:
        return st.sampled_from(sorted(i.choices))
    low = i.minimum if i.minimum is not None else -1e6
    high = i.maximum if i.maximum is not None else 1e6
    if f.type is int:
        return st.integers(int(low) + (1 if i.exclusive_minimum else 0), int(high))
    return st.floats(low, high, exclude_min=i.exclusive_minimum, allow_nan=False)


def _params(desc) -> st.SearchStrategy[MethodParams]:
    specs = desc.params.fields()
    return st.fixed_dictionaries({f.name: _value(f) for f in specs}).map(desc.params.from_mapping)


@pytest.mark.parametrize("desc", METHODS, ids=IDS)
def test_params_round_trip_through_arb_text(desc):
    @settings(max_examples=60, deadline=None)
    @given(_params(desc))
    def check(p):
        assert desc.params.from_batch(p.to_batch()) == p
        line = f"{desc.name}({', '.join(['3', *p.to_batch()])})"
        parsed = parse_suppress(line)
        assert (parsed.method, parsed.table, parsed.params) == (desc.name, 3, p)
        assert desc.params.from_mapping(p.to_mapping()) == p  # session files

    check()


@pytest.mark.parametrize("desc", METHODS, ids=IDS)
def test_defaults_write_tau_argus_text(desc):
    """Extensions are written only when they differ from their default."""
    specs = desc.params.fields()
    facts = registry.problem_facts(_problem())
    p = desc.params.suggested(facts)
    written = p.to_batch()
    assert len(written) == sum(1 for f in specs if not f.info.extension)


@pytest.mark.parametrize("desc", METHODS, ids=IDS)
def test_unknown_and_out_of_range_parameters_are_named(desc, tmp_path):
    facts = registry.problem_facts(_problem())
    with pytest.raises(ParameterError) as err:
        desc.params.suggested(facts, {"bogus": 1})
    assert "unknown parameter 'bogus'" in err.value.message and desc.name in err.value.message
    bad_values = {bool: 2, int: 2.5, float: "ten"}
    for f in desc.params.fields():
        bad: list[object] = [bad_values[f.type]]
        if f.info.minimum is not None and f.type is not bool:
            bad.append(f.info.minimum - 1)
        if f.info.choices:
            bad.append(max(f.info.choices) + 1)
        for value in bad:
            # the API (Session.protect takes the same mapping)
            with pytest.raises(ParameterError) as err:
                desc.params.suggested(facts, {f.name: value})
            assert err.value.parameter == f.name and f.name in err.value.message
            assert err.value.allowed and err.value.allowed in err.value.message
            # a batch file: file, line, position, batch name and the values allowed
            tokens = [""] * (f.info.position - 1) + [str(value)]
            if f.required:
                tokens = [str(value)]
            elif any(g.required for g in desc.params.fields()):
                tokens[0] = "1000"
            line = f"<SUPPRESS> {desc.name}({', '.join(['1', *tokens])})"
            with pytest.raises(BatchError) as berr:
                parse_arb_lines(["// job", line], tmp_path / "job.arb")
            text = str(berr.value)
            assert text.startswith(f"{tmp_path / 'job.arb'}, line 2: <SUPPRESS>: ")
            assert f"parameter {f.info.position} ({f.info.batch}" in text
            assert f.allowed() in text


@pytest.mark.parametrize("desc", METHODS, ids=IDS)
def test_linked_support_is_one_message(desc):
    if desc.linked is None:
        with pytest.raises(ValueError, match="cannot protect linked tables together"):
            parse_suppress(f"{desc.name}(0)")
        assert desc.name not in registry.linked_names()
    else:
        assert parse_suppress(f"{desc.name}(0)").table == 0


# ---------------------------------------------------------------------- running
def _verdict_ok(desc, problem, result) -> bool:
    """The audit of the published face, by the kind of method (not the method's own code)."""
    status = np.asarray(result.status)
    prim = is_primary(problem.status)
    assert np.array_equal(status[prim], np.asarray(problem.status)[prim])  # primaries kept
    if desc.kind == "suppress":
        return publication_audit(problem, is_suppressed(status)).ok
    if desc.kind == "interval":
        lo, hi = np.asarray(result.interval_lower), np.asarray(result.interval_upper)
        return audit(problem, hi > lo, lower=lo, upper=hi).ok
    published = np.asarray(result.published, dtype=float)
    values = np.asarray(problem.values, dtype=float)
    tol = 1e-6 * max(1.0, float(np.abs(values).max()))
    additive = np.abs(problem.relations @ published).max() <= tol
    if desc.face == "round":  # controlled rounding: additive multiples of the base
        base = float(result.figures["base"])
        return bool(additive and np.allclose(published / base, np.round(published / base)))
    # adjusted values (CTA): additive, every primary moved past one of its protection levels
    down = published <= values - np.asarray(problem.lpl) + tol
    up = published >= values + np.asarray(problem.upl) - tol
    return bool(additive and (down | up)[prim].all())


@pytest.mark.parametrize("desc", METHODS, ids=IDS)
def test_result_passes_the_audit_and_progress_is_reported(desc):
    problem = _problem()
    events: list[ProgressEvent] = []
    result = run_method(problem, desc.name, _options(desc, problem), events.append)
    own = [e for e in events if not e.message.startswith("Auditing the pattern")]  # run_method's
    assert own, f"{desc.name} reported no progress of its own"
    assert result.status.shape == (problem.n_cells,)
    assert _verdict_ok(desc, problem, result)


@pytest.mark.parametrize("desc", METHODS, ids=IDS)
@pytest.mark.parametrize("when", ["before", "first event"])
def test_cancel_is_honoured(desc, when):
    """Cancelled: a result the audit accepts (marked cancelled) or Cancelled, never else."""
    problem = _problem()
    token = CancelToken()
    if when == "before":
        token.cancel()

    def progress(event: ProgressEvent) -> None:
        token.cancel()

    try:
        result = run_method(problem, desc.name, _options(desc, problem), progress, token)
    except Cancelled:
        return
    assert _verdict_ok(desc, problem, result)


def test_the_docs_parameter_table_is_the_registry():
    """argusqt/docs/formats.md §8.5 holds `python -m argusqt.protection.core.registry`'s table."""
    from argusqt.docs import DOCS_DIR

    text = (DOCS_DIR / "formats.md").read_text(encoding="utf-8")
    start = text.index("<!-- generated by `python -m argusqt.protection.core.registry`")
    start = text.index("\n", start) + 1
    end = text.index("<!-- end of generated table -->")
    assert text[start:end] == registry.parameter_table(), "regenerate the table (see the comment)"
