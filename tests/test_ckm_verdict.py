"""The promise for the cell key method (argusqt/docs/methods.md §16.6): an attacker who knows
the ptable (Kerckhoffs) and the published values must not recompute a primary inside its
protection interval. The test's attacker reads the ptable rows itself (no argusqt code):
counts from the originals that can give each published value, magnitudes from the
published value ± the largest move the ptable and the scaling allow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import lp_reach_ok
from test_ip_publication import _refused_everywhere

import argusqt
from argusqt.batch.arb import parse_specify_table
from argusqt.batch.runner import run_batch
from argusqt.errors import PublicationError
from argusqt.export.gate import table_verdict
from argusqt.model.cellkey import MagnitudeCKM
from argusqt.protection.adjust.ckm_ptable import generate_ptable
from argusqt.protection.core.problem import CSPProblem
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.sessionfile import load_session, save_session

Rows = list[tuple[int, list[tuple[float, float]]]]  # i → [(j, p)]

#: a count of 1 always published as 1 (p(1 → 1) = 1)
STAY: Rows = [
    (0, [(0, 1.0)]),
    (1, [(1, 1.0)]),
    (2, [(1, 0.5), (3, 0.5)]),
    (3, [(2, 0.5), (4, 0.5)]),
]
#: small counts always move: 1 → 3 | 4, 2 → 4; from 3 up ±2 or ±3
MOVE: Rows = [
    (0, [(0, 1.0)]),
    (1, [(3, 0.5), (4, 0.5)]),
    (2, [(4, 1.0)]),
    (3, [(0, 0.25), (1, 0.25), (5, 0.25), (6, 0.25)]),
]


def _frame(rows: Rows, cont: bool = False) -> pd.DataFrame:
    out = []
    for i, trans in rows:
        run = 0.0
        for j, p in trans:
            run += p
            out.append((i, j, p, j - i, run) + (("all",) if cont else ()))
    cols = ["i", "j", "p", "v", "p_int_ub"] + (["type"] if cont else [])
    return pd.DataFrame(out, columns=cols)


def _records(counts: dict[tuple[str, str], int]) -> pd.DataFrame:
    recs = [k for k, n in counts.items() for _ in range(n)]
    return pd.DataFrame(recs, columns=["region", "size"])


def _count_attacker(rows: Rows, j: int) -> tuple[int, int]:
    """Smallest and largest original count that the ptable lets give the published j."""
    top = rows[-1][0]
    cand = [i for i, trans in rows[:-1] for jj, p in trans if jj == j and p > 0]
    cand += [j - (jj - top) for jj, p in rows[-1][1] if p > 0 and j - (jj - top) >= top]
    return min(cand), max(cand)


def _disclosed(x, y, lo, hi, lpl, upl, floor: float = 0.0) -> bool:
    """The primary's interval fails its protection interval, or an estimate (the published
    value, the midpoint, an endpoint not at the a-priori bound) lands within tolerance."""
    tol = max(0.5, 0.1 * 0.5 * (lpl + upl))
    if lo > x - lpl + 1e-9 or hi < x + upl - 1e-9:
        return True
    ends = [e for e in (lo, hi) if e > floor]
    return any(abs(e - x) <= tol for e in [y, 0.5 * (lo + hi), *ends])


def _protect_counts(counts, rows: Rows, seed: int = 9):
    return argusqt.protect(
        _records(counts),
        explanatory=["region", "size"],
        rules="FREQ(3,10)",
        method="CKM",
        record_key_seed=seed,
        ptable=_frame(rows),
        progress=False,
    )


def _judged(t, lo: np.ndarray, hi: np.ndarray, floor: float = 0.0) -> set[int]:
    """The primaries the test's attacker discloses from every cell's interval: alone
    (_disclosed), or with the relations (protect_helpers' linprog attacker)."""
    problem = CSPProblem.from_table(t)
    a = np.asarray(t.value, dtype=float)
    lp_lo = np.minimum(np.maximum(lo, problem.lower), a)
    lp_hi = np.maximum(np.minimum(hi, problem.upper), a)
    out = set()
    for c in np.flatnonzero((t.status >= 3) & (t.status <= 9)).tolist():
        lpl = min(t.lpl[c], a[c] - floor) if floor > 0 else t.lpl[c]  # ends at a count's 1 (D-94)
        if _disclosed(a[c], t.published[c], lo[c], hi[c], lpl, t.upl[c], floor):
            out.add(c)
        elif not lp_reach_ok(problem, lp_lo, lp_hi, [c]):
            out.add(c)
    return out


def _expected_counts(res, rows: Rows, floor: float = 0.0) -> set[int]:
    t = res.table
    hull = np.array([_count_attacker(rows, int(y)) for y in t.published], dtype=float)
    return _judged(t, hull[:, 0], hull[:, 1], floor)


STAY_COUNTS = {("A", "s"): 1, ("A", "t"): 20, ("B", "s"): 10, ("B", "t"): 12,
               ("C", "s"): 6, ("C", "t"): 8}  # fmt: skip
MOVE_COUNTS = {("A", "s"): 2, ("A", "t"): 20, ("B", "s"): 10, ("B", "t"): 12,
               ("C", "s"): 2, ("C", "t"): 8}  # fmt: skip


def test_a_count_of_one_published_as_one_is_refused_everywhere(tmp_path: Path) -> None:
    res = _protect_counts(STAY_COUNTS, STAY)[0]
    t = res.table
    one = next(c for c in range(t.n_cells) if [x.strip() for x in t.cell_codes(c)] == ["A", "s"])
    assert t.value[one] == 1 and t.published[one] == 1  # the noise is computed regardless
    verdict = res.audit()
    assert set(verdict.failing_cells.tolist()) == _expected_counts(res, STAY) == {one}
    assert "published value" in verdict.reasons(one)
    assert res.session.protection_state(1) == "refused"
    _refused_everywhere(res, tmp_path, "published value", in_message=True)
    # the confidential CKM-format output stays writable
    written = res.session.write_table(1, 7, "", tmp_path / "ckm.csv")
    assert written and all(p.is_file() for p in written)


def test_small_counts_that_always_move_and_cover_the_levels_are_published(
    tmp_path: Path,
) -> None:
    res = _protect_counts(MOVE_COUNTS, MOVE)[0]
    t = res.table
    prim = np.flatnonzero((t.status >= 3) & (t.status <= 9))
    assert prim.size == 2 and set(t.published[prim]) == {4.0}
    assert _expected_counts(res, MOVE) == set()
    verdict = res.audit()
    assert verdict.ok, verdict.summary()
    assert res.session.protection_state(1) == "cleared"
    frame = res.publish()
    assert len(frame) > 0
    assert res.to_excel(tmp_path / "ok.xlsx").is_file()


def test_a_table_too_large_for_the_relations_attacker_is_refused(monkeypatch) -> None:
    """Above cells × primaries = CKM_RELATIONS_LIMIT the LP attackers are not run: the
    table that passes below the limit cannot be certified, so it is refused, saying why."""
    import argusqt.protection.audit.disclosure as disclosure

    res = _protect_counts(MOVE_COUNTS, MOVE)[0]
    assert res.audit().ok
    t = res.table
    prim = np.flatnonzero((t.status >= 3) & (t.status <= 9))
    monkeypatch.setattr(disclosure, "CKM_RELATIONS_LIMIT", t.n_cells * prim.size - 1)
    verdict = res.audit()
    assert set(verdict.failing_cells.tolist()) == set(prim.tolist())
    assert all(verdict.reasons(int(c)) == ["relations not audited"] for c in prim)
    assert "cannot be certified" in verdict.summary()
    again = _protect_counts(MOVE_COUNTS, MOVE)[0]  # a run under the limit's verdict
    assert np.array_equal(again.table.published, t.published)
    assert again.session.protection_state(1) == "refused"
    with pytest.raises(PublicationError, match="cannot be certified"):
        again.publish()


def test_the_same_ptable_covers_a_count_of_one_down_to_its_floor(tmp_path: Path) -> None:
    """MOVE moves 1 to 3 or 4: the attacker knows the cell is not empty (no original 0 gives
    3 or 4; '-' marks the empty ones anyway), so its lower level ends at 1 and only [1, 2] is
    asked (D-94): published 4, it may be 2. Before D-94 the impossible [0, 2] refused it."""
    counts = dict(MOVE_COUNTS) | {("A", "s"): 1}
    res = _protect_counts(counts, MOVE)[0]
    assert _expected_counts(res, MOVE) != set()  # the old requirement [0, 2]
    assert _expected_counts(res, MOVE, floor=1.0) == set()
    assert res.audit().ok


#: from 3 up only ±3: a total and its other part, each moved by 3, pin the small cell
MOVE3: Rows = [*MOVE[:3], (3, [(0, 0.5), (6, 0.5)])]


def test_the_relations_disclose_what_the_cell_alone_hides() -> None:
    """A × s = 2 published 4 may come from 1, 2, 6 or 7; but A × Total and A × t, each
    moved by ±3, pin it (A × s = A × Total − A × t): the outsider's LP over the relations."""
    counts = dict(MOVE_COUNTS) | {("C", "s"): 9}
    res = _protect_counts(counts, MOVE3, seed=1)[0]
    t = res.table
    a_s = next(c for c in range(t.n_cells) if [x.strip() for x in t.cell_codes(c)] == ["A", "s"])
    hull = _count_attacker(MOVE3, int(t.published[a_s]))
    assert not _disclosed(t.value[a_s], t.published[a_s], *hull, t.lpl[a_s], t.upl[a_s])
    expected = _expected_counts(res, MOVE3)
    assert expected == {a_s}
    verdict = res.audit()
    assert set(verdict.failing_cells.tolist()) == expected
    assert "outsider" in verdict.reasons(a_s)
    assert res.session.protection_state(1) == "refused"


def test_weighted_counts_get_the_largest_noise_times_the_mean_weight() -> None:
    """(n + v)·W/n: the attacker's interval is the published value ± max|v|·W/n."""
    df = _records(MOVE_COUNTS)
    df["w"] = np.where(df.region == "A", 2.0, 3.0)
    res = argusqt.protect(df, explanatory=["region", "size"], rules="FREQ(3,10)",
                          method="CKM", record_key_seed=9, ptable=_frame(MOVE), weight="w",
                          progress=False)[0]  # fmt: skip
    t = res.table
    big = max(abs(j - i) for i, trans in MOVE for j, p in trans if p > 0)
    b = big * np.asarray(t.value, dtype=float) / np.maximum(np.asarray(t.freq, dtype=float), 1)
    y = np.asarray(t.published, dtype=float)
    expected = _judged(t, y - b, y + b)
    assert set(res.audit().failing_cells.tolist()) == expected == set()
    # a weight of 1/4 on A: the same noise is a quarter as wide, and A × s is refused
    df["w"] = np.where(df.region == "A", 0.25, 3.0)
    res = argusqt.protect(df, explanatory=["region", "size"], rules="FREQ(3,10)",
                          method="CKM", record_key_seed=9, ptable=_frame(MOVE), weight="w",
                          progress=False)[0]  # fmt: skip
    t = res.table
    b = big * np.asarray(t.value, dtype=float) / np.maximum(np.asarray(t.freq, dtype=float), 1)
    y = np.asarray(t.published, dtype=float)
    expected = _judged(t, y - b, y + b)
    assert expected
    assert set(res.audit().failing_cells.tolist()) == expected


def test_batch_refuses_the_table_and_writes_the_confidential_output(tmp_path: Path) -> None:
    out = _protect_counts(STAY_COUNTS, STAY)
    job = tmp_path / "b.arb"
    out.write_batch_file(job)
    confidential = tmp_path / "ckm_conf.csv"
    job.write_text(
        job.read_text()
        + f'<WRITETABLE> (1, 7, , "{confidential.name}")\n'
        + '<WRITETABLE> (1, 2, , "public.csv")\n'
    )
    ran = run_batch(job)
    assert not ran.ok
    assert "region=A × size=s" in str(ran.error)
    assert ran.session.protection_state(1) == "refused"
    assert confidential.is_file() or any(tmp_path.glob("ckm_conf*"))
    assert not (tmp_path / "public.csv").exists()


# ------------------------------------------------------------------------------ magnitudes
SIGMA = 0.3


def _magnitude(rows: Rows):
    """Two firms in cell A×s (100 and 10: P(15,1) makes it primary) and larger cells."""
    recs = [("A", "s", 100.0), ("A", "s", 10.0)]
    recs += [(r, s, float(v)) for r, s in (("A", "t"), ("B", "s"), ("B", "t"))
             for v in (50, 60, 70, 80, 90)]  # fmt: skip
    df = pd.DataFrame(recs, columns=["region", "size", "turnover"])
    return argusqt.protect(
        df,
        explanatory=["region", "size"],
        response="turnover",
        rules="P(15,1)",
        method="CKM",
        record_key_seed=4,
        ptable=_frame(rows, cont=True),
        ckm=MagnitudeCKM(type="V", scaling="N", sigma1=SIGMA),
        progress=False,
    )[0]


def _expected_magnitudes(res, rows: Rows) -> set[int]:
    """<CKM> V with N(σ1) scaling moves x by σ1·|x|·v: the attacker's interval is the
    published value ± σ1·|x|·max|v| (plus half a printed unit)."""
    big = max(abs(j - i) for i, trans in rows for j, p in trans if p > 0)
    t = res.table
    y = np.asarray(t.published, dtype=float)
    b = SIGMA * np.abs(np.asarray(t.value, dtype=float)) * big + 0.5
    return _judged(t, y - b, y + b, floor=-np.inf)


def test_magnitudes_moved_by_exactly_d_are_refused(tmp_path: Path) -> None:
    rows: Rows = [(0, [(0, 1.0)]), (1, [(0, 0.5), (2, 0.5)])]  # always ±1
    res = _magnitude(rows)
    t = res.table
    prim = np.flatnonzero((t.status >= 3) & (t.status <= 9))
    assert prim.size >= 1
    assert np.all(np.abs(t.published[prim] - t.value[prim]) == pytest.approx(SIGMA * t.value[prim]))
    expected = _expected_magnitudes(res, rows)
    assert expected == set(prim.tolist())
    assert set(res.audit().failing_cells.tolist()) == expected
    _refused_everywhere(res, tmp_path, "endpoint")


def test_magnitudes_with_room_on_both_sides_are_published() -> None:
    rows: Rows = [(0, [(0, 1.0)]),
                  (2, [(0, 0.02), (1, 0.48), (3, 0.48), (4, 0.02)])]  # fmt: skip
    res = _magnitude(rows)
    expected = _expected_magnitudes(res, rows)
    assert expected == set()  # the keys of seed 4 draw ±1: x lies inside, off the estimates
    verdict = res.audit()
    assert verdict.ok, verdict.summary()
    assert res.session.protection_state(1) == "cleared"
    assert len(res.publish()) > 0


# ------------------------------------------------------------------------------ the Session
def _session_files(tmp_path: Path) -> Path:
    """The small count data as files (the API writes them with its batch file)."""
    _protect_counts(STAY_COUNTS, STAY).write_batch_file(tmp_path / "b.arb")
    return tmp_path


def _session(folder: Path) -> Session:
    s = Session()
    s.open_microdata(folder / "b_data.asc", folder / "b_data.rda")
    s.specify_table(parse_specify_table('"region""size"|<freq>|""|""'))
    s.set_safety_rules(parse_safety_rule("FREQ(3,10)"))
    s.compute_tables()
    return s


def test_the_session_the_gui_calls_refuses_and_keeps_type7(tmp_path: Path) -> None:
    folder = _session_files(tmp_path)
    s = _session(folder)
    s.set_ckm_ptables(1, folder / "b_ptable1.txt")
    result = s.protect(1, "CKM")
    assert result.verdict is not None and not result.verdict.ok
    assert s.protection_state(1) == "refused"
    assert any("NOT PUBLISHABLE" in e.message and "(A, s)" in e.message for e in s.log)
    with pytest.raises(PublicationError) as err:
        s.write_table(1, 2, "", tmp_path / "public.csv")
    assert [tuple(x.strip() for x in c) for c in err.value.cells] == [("A", "s")]
    assert "published value" in str(err.value)
    assert not (tmp_path / "public.csv").exists()
    assert all(p.is_file() for p in s.write_table(1, 7, "AO+", tmp_path / "ckm.csv"))


def test_a_generated_ptable_is_judged_again_after_the_session_file(tmp_path: Path) -> None:
    """The gate rebuilds a generated ptable from the run's public D, V, js, pstay: the
    reloaded table gets the verdict the run gave (pstay 0.8 keeps the 1 of A × s inside
    [1, 2], its protection interval ending at the count's floor 1, D-94)."""
    folder = _session_files(tmp_path)
    s = _session(folder)
    gen = {"ptable_d": 3, "ptable_v": 2.0, "ptable_js": 0, "ptable_pstay": 0.8}
    result = s.protect(1, "CKM", gen)
    rows: Rows = [
        (r.i, [(float(j), float(p)) for j, p in zip(r.j, r.p, strict=True)])
        for r in generate_ptable(3, 2.0, 0, 0.8).table("all")
    ]
    t = s.table(1)
    hull = np.array([_count_attacker(rows, int(y)) for y in t.published], dtype=float)
    expected = _judged(t, hull[:, 0], hull[:, 1], 1.0)
    assert expected  # the 1 of A × s
    assert set(result.verdict.failing_cells.tolist()) == expected
    assert s.protection_state(1) == "refused"
    save_session(s, tmp_path / "s.aqs")
    again = load_session(tmp_path / "s.aqs")
    verdict = table_verdict(again.table(1))
    assert set(verdict.failing_cells.tolist()) == expected


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3)), min_size=1, max_size=4),
        min_size=2,
        max_size=5,
    ),
    st.lists(st.integers(0, 15), min_size=1, max_size=20),
)
def test_count_hull_is_the_plain_set_of_originals(raw, published) -> None:
    """count_hull against the test's own reading of random ptables (p = 0 transitions
    included: they never happen, so they give no original)."""
    from argusqt.model.ptable import PRow, PTable
    from argusqt.protection.adjust.ckm import count_hull

    rows: Rows = []
    prows = []
    for i, trans in enumerate(raw):
        js = sorted({j for j, _ in trans} | {i})  # every row reaches something with p > 0
        weights = {j: w for j, w in trans}
        ps = np.array([weights.get(j, 1) for j in js], dtype=float)
        if ps.sum() == 0:
            ps[0] = 1.0
        ps = ps / ps.sum()
        rows.append((i, list(zip(map(float, js), ps.tolist(), strict=True))))
        j = np.array(js, dtype=float)
        prows.append(PRow(i, j, ps, j - i, np.cumsum(ps)))
    lo, hi = count_hull(PTable("freq", {"all": prows}), np.array(published, dtype=float))
    for k, j in enumerate(published):
        top = rows[-1][0]
        cand = [i for i, trans in rows[:-1] for jj, p in trans if jj == j and p > 0]
        cand += [j - (jj - top) for jj, p in rows[-1][1] if p > 0 and j - (jj - top) >= top]
        want = (min(cand), max(cand)) if cand else (j, j)
        assert (lo[k], hi[k]) == want
