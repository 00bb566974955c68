"""Adding a method is one module plus one descriptor: a toy method, registered the way a
method module registers itself, is at once in the batch reader and writer, the Session, the
session files and the Protect dialog, without a line changed anywhere else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import conftest_gui  # noqa: F401
import numpy as np
import pytest

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.render import batch_lines, write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.errors import ParameterError
from argusqt.protection.core import registry
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param
from argusqt.protection.suppress.heuristic import solve_heuristic
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.sessionfile import load_session, save_session


# ---------------------------------------------------------------------- the "module"
@dataclass(frozen=True, kw_only=True)
class ToyParams(MethodParams):
    """`TOY(t, maxMinutes)`."""

    METHOD: ClassVar[str] = "TOY"
    max_minutes: float = minutes_param(3, position=1, batch="maxMinutes", help="The run's time.")


def solve_toy(problem, params=None, progress=None, cancel=None):
    """Stands in for a new solver (the heuristic's pattern)."""
    kwargs: dict[str, Any] = {"cancel": cancel}
    if progress is not None:
        kwargs["progress"] = progress
    return solve_heuristic(problem, params, **kwargs)


def _toy_options(p: ToyParams, facts: TableFacts) -> dict[str, Any]:
    return {"max_time": 60.0 * p.max_minutes}


TOY = registry.MethodDescriptor(
    name="TOY",
    kind="suppress",
    label="Toy method",
    help="A new method, for the test.",
    params=ToyParams,
    solve=solve_toy,
    solver_options=_toy_options,
    tau_argus=False,
    order=99,
)


@pytest.fixture
def toy(monkeypatch):
    registry.methods()  # the real ones first
    monkeypatch.setitem(registry._REGISTRY, "TOY", TOY)  # what register(TOY) does at import
    return TOY


def _session(sample) -> Session:
    s = Session()
    s.open_microdata(sample / "enterprise.asc", sample / "enterprise.rda")
    s.specify_table(parse_specify_table('"activity""region"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(3,20)"))
    s.compute_tables()
    return s


def test_a_registered_method_reaches_every_door(toy, sample, tmp_path, qtbot):
    s = _session(sample)
    # Session (the API and the GUI call it)
    res = s.protect(1, "TOY", {"max_minutes": 2})
    assert res.verdict is not None and res.verdict.ok
    with pytest.raises(ParameterError, match="TOY: unknown parameter 'maxtime'"):
        s.protect(1, "TOY", {"maxtime": 2})
    # batch writer and reader
    assert "<SUPPRESS> TOY(1, 2)" in batch_lines(s)
    arb = sample / "toy.arb"
    write_batch_file(s, arb)
    out = run_batch(arb)
    assert out.ok, out.error
    np.testing.assert_array_equal(out.session.table(1).status, s.table(1).status)
    # session files
    loaded = load_session(save_session(s, tmp_path / "toy.aqs"))
    assert loaded.table(1).protection is not None
    assert loaded.table(1).protection.method == "TOY"
    assert batch_lines(loaded) == batch_lines(s)
    # the Protect dialog, built from the descriptors
    from argusqt.gui.protectdialog import ProtectDialog

    dlg = ProtectDialog("t", s.protection_methods(), s.table_facts(1))
    qtbot.addWidget(dlg)
    dlg.select("TOY")
    assert dlg.widget("TOY", "max_minutes").value() == 3
    dlg.set_value("TOY", "max_minutes", 5)
    assert dlg.params() == ToyParams(max_minutes=5)
