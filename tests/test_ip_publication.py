"""Acceptance of issue 21 for interval protection: tau_testW Size × Region | Var2, P(15,1),
method IP through the API and a batch file publishes intervals no attacker (written here, with
scipy, from the printed file) narrows or estimates; a run with the levels as given
(symmetric) is refused by every publishing call, naming the cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pytest
from protect_helpers import lp_reach_ok, protect_testw
from shared_paths import copy_case

import argusqt
from argusqt.errors import PublicationError
from argusqt.protection.core.problem import CSPProblem


@pytest.fixture
def testw(tmp_path) -> Path:
    return copy_case("tau_testW", tmp_path)


def _ip(testw: Path, **params):
    return protect_testw(testw, "IP", **params)


def printed_intervals_safe(problem: CSPProblem, lower, upper, decimals: int) -> None:
    """The independent attacker over what is printed: every primary's LP range covers its
    protection interval, and no midpoint or endpoint is within half a printed unit (nor a
    tenth of the mean level) of the true value."""
    a = problem.values
    prim = np.flatnonzero(problem.primary)
    assert prim.size == 9
    half = 0.5 * 10.0**-decimals
    for p in prim:
        mid = 0.5 * (lower[p] + upper[p])
        level = 0.5 * (problem.lpl[p] + problem.upl[p])
        for estimate in (mid, lower[p], upper[p]):
            assert abs(estimate - a[p]) > max(half, 0.1 * level), (p, estimate, a[p])
    lo = np.maximum(lower, problem.lower)
    hi = np.minimum(upper, problem.upper)
    assert np.all(lo <= a + 1e-9) and np.all(a <= hi + 1e-9)
    assert lp_reach_ok(problem, lo, hi, prim, tol=half)


def test_api_ip_publishes_asymmetric_intervals_the_attacker_cannot_use(testw, tmp_path):
    res = _ip(testw)
    verdict = res.audit()
    assert verdict.ok, verdict.summary()
    table = res.table
    problem = CSPProblem.from_table(table)
    frame = res.publish()
    assert len(frame) == table.n_cells
    lower = frame["lower"].to_numpy(dtype=float, na_value=np.nan)
    upper = frame["upper"].to_numpy(dtype=float, na_value=np.nan)
    filled = ~np.isnan(lower)
    lower = np.where(filled, lower, problem.values)  # empty cells print "-": zero
    upper = np.where(filled, upper, problem.values)
    printed_intervals_safe(problem, lower, upper, table.decimals)
    # the old symmetric optimum had 113 of 119 interval cells centred on the value
    wide = upper > lower
    centred = wide & (np.abs(0.5 * (lower + upper) - problem.values) <= 0.005)
    assert centred[problem.primary].sum() == 0
    assert res.to_excel(tmp_path / "ip.xlsx").exists()
    assert res.to_parquet(tmp_path / "ip.parquet").exists()
    # the confidential seed is in no publishable output
    seed = str(res.session.protection_seed)
    assert res.session.protection_seed is not None
    book = openpyxl.load_workbook(tmp_path / "ip.xlsx")
    text = " ".join(
        str(c.value) for ws in book.worksheets for row in ws.iter_rows() for c in row if c.value
    )
    assert seed not in text


def test_ip_is_reproducible_from_the_session(testw):
    first, second = _ip(testw), _ip(testw)
    assert first.session.protection_seed == second.session.protection_seed
    np.testing.assert_array_equal(first.table.interval_lower, second.table.interval_lower)
    np.testing.assert_array_equal(first.table.interval_upper, second.table.interval_upper)


def test_session_file_keeps_the_seed(testw, tmp_path):
    from argusqt.sessionfile import load_session

    res = _ip(testw)
    path = res.save_session(tmp_path / "s.argusqt")
    assert str(res.session.protection_seed) in path.read_text(encoding="utf-8")
    assert load_session(path).protection_seed == res.session.protection_seed


def test_levels_as_given_are_refused_by_every_publishing_call(testw, tmp_path):
    res = _ip(testw, levels_as_given=True)
    assert res.session.protection_state(1) == "refused"
    _refused_everywhere(res, tmp_path, "midpoint", in_message=True)


def test_batch_ip_passes_the_gate_and_writes_safe_intervals(testw):
    import csv

    from argusqt.batch.runner import run_batch

    job = testw / "ip.arb"
    job.write_text(
        '<OPENMICRODATA> "tau_testW.asc"\n'
        '<OPENMETADATA> "tau_testW.rda"\n'
        '<SPECIFYTABLE> "Size""Region"|"Var2"||\n'
        "<SAFETYRULE> P(15,1)\n"
        "<READMICRODATA>\n"
        "<SUPPRESS> IP(1)\n"
        '<WRITETABLE> (1, 2, , "ip.csv")\n'
    )
    out = run_batch(job)
    assert out.ok, out.error
    table = out.session.table(1)
    problem = CSPProblem.from_table(table)
    lower, upper = problem.values.copy(), problem.values.copy()
    with open(testw / "ip.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][-2:] == ["Var2_Lower", "Var2_Upper"]
    index = {tuple(x.strip() for x in table.cell_codes(c)): c for c in range(table.n_cells)}
    for row in rows[1:]:
        c = index[tuple(x.strip() for x in row[:2])]
        if row[2] != "-":
            lower[c], upper[c] = float(row[2]), float(row[3])
    printed_intervals_safe(problem, lower, upper, table.decimals)

    sym = testw / "sym.arb"
    sym.write_text(job.read_text().replace("IP(1)", "IP(1, 10, 1)").replace("ip.csv", "sym.csv"))
    out = run_batch(sym)
    assert not out.ok
    assert "midpoint" in str(out.error) and "sym.arb, line 7" in str(out.error)
    assert not (testw / "sym.csv").exists()


def _refused_everywhere(res, tmp_path, reason: str, in_message: bool = False) -> None:
    """`audit().ok is False` ⇒ every publishing call raises PublicationError naming exactly
    the failing cells (and, `in_message`, the reason in its words), and nothing is written."""
    verdict = res.audit()
    assert verdict.ok is False
    named = {res.table.cell_codes(int(c)) for c in verdict.failing_cells}
    assert len(named) >= 1
    assert reason in {r for c in verdict.failing_cells for r in verdict.reasons(int(c))}
    calls = {
        "publish": lambda: res.publish(),
        "to_excel": lambda: res.to_excel(tmp_path / "bad.xlsx"),
        "to_parquet": lambda: res.to_parquet(tmp_path / "bad.parquet"),
        "write csv": lambda: res.write(tmp_path / "bad.csv", "csv"),
        "write pivot": lambda: res.write(tmp_path / "bad_pivot.csv", "pivot"),
        "write codevalue": lambda: res.write(tmp_path / "bad.txt", "codevalue"),
    }
    for name, call in calls.items():
        with pytest.raises(PublicationError) as err:
            call()
        assert set(err.value.cells) == named, name
        if in_message:
            assert reason in str(err.value), name
    assert not any(tmp_path.glob("bad*"))


def _freq_table(testw: Path, method: str, params=None):
    return argusqt.protect(
        testw / "tau_testW.asc",
        metadata=testw / "tau_testW.rda",
        explanatory=["Size", "Region"],
        rules="FREQ(3,30)",
        method=method,
        params=params,
        progress=False,
    )


def test_hand_made_cta_face_is_refused_by_every_publishing_call(testw, tmp_path):
    res = _freq_table(testw, "CTA")
    t = res.table
    p = int(np.flatnonzero((t.status >= 3) & (t.status <= 9))[0])
    published = np.asarray(t.published, dtype=float).copy()
    published[p] = t.value[p] + t.upl[p]  # moved by exactly its level: `x − UPL` is the value
    t.published = published
    _refused_everywhere(res, tmp_path, "level estimate")
    assert t.cell_codes(p) in {t.cell_codes(int(c)) for c in res.audit().failing_cells}


def test_hand_made_rounding_face_is_refused_by_every_publishing_call(testw, tmp_path):
    import dataclasses

    res = _freq_table(testw, "RND", {"base": 10})
    t = res.table
    # the same values claimed rounded to base 1: each rounding interval is the printed value
    t.protection = dataclasses.replace(t.protection, public=(("base", 1.0), ("steps", 0.0)))
    _refused_everywhere(res, tmp_path, "rounding interval")


def test_the_seed_digests_the_whole_data_file(testw, tmp_path):
    """The seed depends on every record and column of the data file, not only on the table's
    few unknown values (which an attacker could try one by one against the intervals): a
    change in a column the table does not use gives another seed, the same table, and still
    intervals the printed-figure attacker cannot use."""
    first = _ip(testw)
    other = tmp_path / "other"
    other.mkdir()
    for f in testw.iterdir():
        (other / f.name).write_bytes(f.read_bytes())
    data = other / "tau_testW.asc"
    raw = data.read_bytes()
    assert raw[:2] == b"84"  # Year, not in the table Size × Region | Var2
    data.write_bytes(b"85" + raw[2:])
    second = _ip(other)
    np.testing.assert_array_equal(first.table.value, second.table.value)
    np.testing.assert_array_equal(first.table.status, second.table.status)
    assert first.session.protection_seed != second.session.protection_seed
    assert second.audit().ok
    problem = CSPProblem.from_table(second.table)
    printed_intervals_safe(
        problem, second.table.interval_lower, second.table.interval_upper, second.table.decimals
    )
