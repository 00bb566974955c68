"""The registry → solver contract is typed (issue 24): every descriptor hands its solver a
frozen options dataclass, and a solver reads mappings (tests, linked tables, run_method's
glue) by field name with the old `params.get` meanings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from protect_helpers import random_1h2d

from argusqt.protection.core import registry
from argusqt.protection.core.options import SolverOptions, SuppressOptions, options_dict
from argusqt.protection.suppress.heuristic import HeurOptions
from argusqt.protection.suppress.optimal import OptOptions


@pytest.fixture(scope="module")
def facts():
    return registry.problem_facts(random_1h2d(np.random.default_rng(5), [3, 2], 4))


@pytest.mark.parametrize("name", sorted(registry.MODULE_OF))
def test_every_descriptor_gives_its_solver_frozen_typed_options(name, facts):
    desc = registry.get(name)
    opts = desc.options_for(desc.params.suggested(facts), facts)
    assert isinstance(opts, SolverOptions)
    assert dataclasses.is_dataclass(opts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.max_time = 1.0  # type: ignore[misc]
    if desc.kind == "suppress":
        assert isinstance(opts, SuppressOptions)
    # a mapping of the same options reads back as the same options
    assert type(opts).of(opts.as_dict()) == opts
    assert type(opts).of(opts) is opts


def test_a_mapping_is_read_by_field_name_with_the_old_defaults():
    opts = OptOptions.of({"gap": 0.05, "max_time": 30, "not_an_option": 1, "sepa_depth": None})
    assert opts.gap == 0.05 and opts.max_time == 30
    assert opts.sepa_depth is None and opts.publish is False and opts.guided is True
    assert OptOptions.of(None) == OptOptions()
    # a key given as None takes the field's default (as `params.get(k) or default` did)
    assert OptOptions.of({"scip_heuristics": None}).scip_heuristics == "fast"


def test_aliases_and_none_as_a_value():
    # the old name of HEUR's time limit, read only when max_time is not given
    assert HeurOptions.of({"time_limit": 12}).max_time == 12
    assert HeurOptions.of({"time_limit": 12, "max_time": 3}).max_time == 3
    # cleanup_lps None means "no LP limit", not the default "auto"
    assert HeurOptions.of({"cleanup_lps": None}).cleanup_lps is None
    assert HeurOptions.of({}).cleanup_lps == "auto"
    # HEUR as a method protects singletons unless told not to (run_method's rule)
    assert HeurOptions().singleton_singleton and HeurOptions().singleton_multiple


def test_the_confidential_seed_only_for_methods_that_draw_one(facts):
    cta = registry.get("CTA")
    rnd = registry.get("RND")
    c = cta.options_for(cta.params.suggested(facts), facts)
    r = rnd.options_for(rnd.params.suggested(facts), facts)
    assert c.with_seed(7).seed == 7  # type: ignore[attr-defined]
    assert c.with_seed(7).with_seed(8).seed == 7  # type: ignore[attr-defined]
    assert r.with_seed(7) is r


def test_options_dict_is_a_fresh_mapping():
    opts = OptOptions(gap=0.1)
    d = options_dict(opts)
    d["gap"] = 0.5
    assert opts.gap == 0.1 and options_dict({"a": 1}) == {"a": 1} and options_dict(None) == {}
