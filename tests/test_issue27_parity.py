"""Issue 27 item 6: the same protection from the GUI, a batch file and the Python API
(US#311: τ-Argus's rounding differed between its GUI and batch runs), and from MOD and OPT
on the frequency rule (US#307: τ-Argus's Modular left a sum of two frequency-unsafe cells
recomputable, Optimal did not)."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import numpy as np
import pandas as pd
import pytest
from conftest_gui import run_dialog
from protect_helpers import lp_protected
from shared_paths import copy_case

import argusqt
from argusqt.batch.runner import run_batch
from argusqt.errors import MethodError
from argusqt.model.status import is_primary, is_suppressed
from argusqt.protection.core.problem import CSPProblem

RULES = "FREQ(5,20)|P(20,5)"  # batch_ex2's rules
CASES = [
    ("OPT", {"max_minutes": 5}, "OPT(1,5)"),
    ("MOD", {"max_minutes": 5}, "MOD(1,5)"),
    ("RND", {"base": 50}, "RND(1,50)"),
]


def _faces(table) -> tuple[list[int], list[float] | None]:
    """What a run decides: the statuses and, for rounding, the published values."""
    pub = None if table.published is None else np.asarray(table.published).tolist()
    return np.asarray(table.status).tolist(), pub


@pytest.mark.gui
@pytest.mark.parametrize(("method", "params", "batch"), CASES)
def test_gui_batch_and_api_give_the_same_protection(qtbot, window, tmp_path, method, params, batch):
    from argusqt.gui.protectdialog import ProtectDialog
    from argusqt.gui.specify import SpecifyTablesDialog

    folder = copy_case("batch_ex2", tmp_path)
    data, meta = folder / "microdata_ex2.asc", folder / "metadata_ex2.rda"

    # the API
    api = argusqt.protect(
        data,
        metadata=meta,
        explanatory=["region", "gender"],
        response="num1",
        rules=RULES,
        method=method,
        params=params,
        progress=False,
    )
    api_face = _faces(api[0].table)

    # a batch file
    arb = folder / "job.arb"
    arb.write_text(
        f'<OPENMICRODATA> "{data.name}"\n<OPENMETADATA> "{meta.name}"\n'
        f'<SPECIFYTABLE> "region""gender"|"num1"||\n<SAFETYRULE> {RULES}\n'
        f"<READMICRODATA>\n<SUPPRESS> {batch}\n"
    )
    out = run_batch(arb)
    assert out.ok, out.error
    assert _faces(out.session.table(1)) == api_face

    # the GUI: the dialogs a user fills
    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.select_variables(["region", "gender"])
        d.response.setCurrentText("num1")
        d.individual.freq.check.setChecked(True)
        d.individual.freq.params[0].setValue(5)
        d.individual.freq.params[1].setValue(20)
        d.individual.p[0].check.setChecked(True)
        d.individual.p[0].params[0].setValue(20)
        d.individual.p[0].params[1].setValue(5)
        d.compute.click()

    def fill_protect(d: ProtectDialog) -> None:
        d.select(method)
        for name, value in params.items():
            d.set_value(method, name, value)
        d.run_button.click()

    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.open_microdata(str(data), str(meta))
    qtbot.waitUntil(lambda: bool(window.views) or bool(window.errors), timeout=60_000)
    assert not window.errors, window.errors
    run_dialog(qtbot, ProtectDialog, fill_protect)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors
    assert _faces(window.tables[0]) == api_face
    if method != "RND":
        assert (
            is_suppressed(np.asarray(window.tables[0].status)).sum()
            > is_primary(np.asarray(window.tables[0].status)).sum()
        )


def _us307(method: str):
    """US#307: counts A 15, B 5, C 3 (total 23), minimum frequency 11: B and C unsafe."""
    frame = pd.DataFrame({"V1": ["A", "B", "C"], "n": [15, 5, 3], "f": [15, 5, 3]})
    return argusqt.protect(
        table=frame,
        explanatory=["V1"],
        response="n",
        freq="f",
        rules="FREQ(11,10)",
        method=method,
        progress=False,
    )[0].table


def test_mod_and_opt_protect_us307_alike():
    """Both suppress A: published, A and the total give B + C = 8, a sum of fewer than 11
    respondents; with A suppressed the attacker gets B + C only as an interval."""
    faces = {}
    for method in ("OPT", "MOD"):
        t = _us307(method)
        codes = [t.cell_codes(c)[0].strip() for c in range(t.n_cells)]
        status = dict(zip(codes, np.asarray(t.status).tolist(), strict=True))
        assert status["B"] == 5 and status["C"] == 5
        assert status["A"] == 11, f"{method} publishes A: B + C = 8 is recomputable"
        assert status["Total"] == 1
        problem = CSPProblem.from_table(t)
        assert lp_protected(problem, is_suppressed(np.asarray(t.status)))
        faces[method] = status
    assert faces["OPT"] == faces["MOD"]


def test_us307_gh_heur_and_net_say_what_the_gate_says():
    """The other suppression methods on US#307 (docs/design.md, D-50). HEUR has the
    minimum-frequency option (MF) as OPT and MOD: it suppresses A. GH has no MF (τ-Argus's
    hypercube neither; its singletons are its own): it publishes A, so B + C = 8 is known.
    That is not a false verdict: no cell is recomputable inside its protection interval
    (the test's own attacker), the rule on sums of suppressed cells leaves frequency tables
    out (argusqt/docs/rules.md §3.11), and GH's verdict is the gate's. NET refuses a 1-D table."""
    heur = _us307("HEUR")
    codes = [heur.cell_codes(c)[0].strip() for c in range(heur.n_cells)]
    assert dict(zip(codes, np.asarray(heur.status).tolist(), strict=True))["A"] == 11
    frame = pd.DataFrame({"V1": ["A", "B", "C"], "n": [15, 5, 3], "f": [15, 5, 3]})
    p = argusqt.protect(
        table=frame,
        explanatory=["V1"],
        response="n",
        freq="f",
        rules="FREQ(11,10)",
        method="GH",
        progress=False,
    )[0]
    t = p.table
    status = dict(zip(codes, np.asarray(t.status).tolist(), strict=True))
    assert status["B"] == 5 and status["C"] == 5 and status["A"] == 1  # no MF in GH
    assert lp_protected(CSPProblem.from_table(t), is_suppressed(np.asarray(t.status)))
    gate = p.audit()
    assert p.result.verdict is not None
    assert gate.ok and p.result.verdict.ok
    assert p.session.protection_state(1) == "cleared"
    with pytest.raises(MethodError, match="2-dimensional"):
        _us307("NET")
