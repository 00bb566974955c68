"""The cell key method (argusqt/docs/methods.md §16) through the doors users have: the batch
file of τ-Argus's Magnitude example, the Session the GUI uses, and tau_testW with keys the
test draws itself. Counts are checked against the test's own oracle (tests/ckm_oracle.py),
which shares no code with the method."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from ckm_oracle import cell_key, hrc_leaves, key_int, perturbed_count, read_ptable_rows
from shared_paths import tauargus_dir

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.runner import run_batch
from argusqt.errors import ArgusError
from argusqt.io.ptable import read_ptable
from argusqt.model.status import Status
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

MAGNITUDE_JOB = """\
<OPENMICRODATA> "microdata.csv"
<OPENMETADATA> "microdata.rda"
<SPECIFYTABLE> "Sex""Age"|"<freq>"||
<SAFETYRULE> FREQ(3,10)
<SPECIFYTABLE> "Sex""Age"|"Savings"||
<SAFETYRULE> P(15,1)
<SPECIFYTABLE> "Sex"|"<freq>"||
<SAFETYRULE> FREQ(3,10)
<SPECIFYTABLE> "Sex"|"Savings"||
<SAFETYRULE> P(15,1)
<READMICRODATA>
<SUPPRESS> CKM(1)
<SUPPRESS> CKM(2)
<SUPPRESS> CKM(3)
<SUPPRESS> CKM(4)
<WRITETABLE> (1, 2, , "freq.csv")
<WRITETABLE> (2, 2, , "savings.csv")
"""


def _magnitude(tmp_path: Path) -> Path:
    folder = tmp_path / "Magnitude"
    shutil.copytree(tauargus_dir() / "cellkey" / "Magnitude", folder)
    return folder


def _records(folder: Path) -> list[list[str]]:
    return [line.split(";") for line in (folder / "microdata.csv").read_text().splitlines()]


def _oracle_counts(table, recs, dims_leaves, key_col: int, decimals: int, rows) -> np.ndarray:
    """Every cell's perturbed count computed from the raw records by the oracle."""
    out = np.zeros(table.n_cells)
    for c in range(table.n_cells):
        codes = [x.strip() for x in table.cell_codes(c)]
        members = [
            r for r in recs if all(r[col] in leaves[code] for (col, leaves), code in
                                   zip(dims_leaves, codes, strict=True))
        ]  # fmt: skip
        keys = [key_int(r[key_col], decimals) for r in members]
        out[c] = perturbed_count(len(members), cell_key(keys, decimals), rows)
    return out


def test_magnitude_example_runs_unchanged_from_a_batch_file(tmp_path: Path) -> None:
    """The example's metadata, data and ptables as τ-Argus ships them: counts are the
    oracle's, magnitudes are perturbed, a second table sharing cells gives them the same
    values, and a second run gives the same files (rule 2)."""
    folder = _magnitude(tmp_path)
    (folder / "job.arb").write_text(MAGNITUDE_JOB)
    out = run_batch(folder / "job.arb")
    assert out.ok, out.error
    s = out.session
    recs = _records(folder)
    sex = hrc_leaves(folder / "dim_sex.hrc") | {"Total": {r[0] for r in recs}}
    age = hrc_leaves(folder / "dim_age.hrc") | {"Total": {r[1] for r in recs}}
    rows = read_ptable_rows(folder / "ptab_freq.txt")
    t1 = s.table(1)
    want = _oracle_counts(t1, recs, [(0, sex), (1, age)], 5, 8, rows)
    assert t1.published is not None
    assert np.array_equal(t1.published, want)
    assert (want != t1.value).sum() > 0  # some counts moved
    # the same cells in table 3 (Sex alone) as in table 1's Age total
    t3 = s.table(3)
    assert t3.published is not None
    for c in range(t3.n_cells):
        (code,) = t3.cell_codes(c)
        c1 = t1.cell_index((t1.dims[0].codes.index(code), 0))
        assert t3.published[c] == t1.published[c1]
    # magnitudes: perturbed, bounded, not the original; the same in table 4 (Sex alone)
    t2 = s.table(2)
    t4 = s.table(4)
    assert t4.published is not None and t2.published is not None
    for c in range(t4.n_cells):
        (code,) = t4.cell_codes(c)
        c2 = t2.cell_index((t2.dims[0].codes.index(code), 0))
        assert t4.published[c] == t2.published[c2]
    assert t2.published is not None
    nonempty = t2.status != Status.EMPTY
    moved = np.abs(t2.published - t2.value)[nonempty]
    assert (moved > 0).mean() > 0.5
    assert (moved <= 0.1 * np.abs(t2.value[nonempty]) + 1000).all()
    first = (folder / "freq.csv").read_bytes(), (folder / "savings.csv").read_bytes()
    again = run_batch(folder / "job.arb")
    assert again.ok, again.error
    assert ((folder / "freq.csv").read_bytes(), (folder / "savings.csv").read_bytes()) == first


def test_magnitude_example_through_the_session(tmp_path: Path) -> None:
    """The Session the GUI's Protect dialog calls gives the batch file's values."""
    folder = _magnitude(tmp_path)
    (folder / "job.arb").write_text(MAGNITUDE_JOB)
    batch = run_batch(folder / "job.arb").session
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"Savings"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)"))
    s.compute_tables()
    result = s.protect(1, "CKM")
    assert result.verdict is not None and result.verdict.ok
    assert s.protection_state(1) == "cleared"
    assert np.array_equal(s.table(1).published, batch.table(2).published)
    loss = result.figures["loss"]
    assert loss["cells"] == int((s.table(1).status != Status.EMPTY).sum())
    assert 0 < loss["changed_share"] <= 1


def _tau_testw_with_keys(tmp_path: Path, seed: int = 2026) -> tuple[Path, list[int]]:
    """tau_testW with a record key column the test draws (15 decimals), τ-Argus's CKM rda."""
    folder = tmp_path / "ckm"
    shutil.copytree(tauargus_dir() / "cellkey" / "Frequency", folder)
    lines = (tauargus_dir() / "tau_testW" / "tau_testW.asc").read_bytes().decode().splitlines()
    rng = np.random.default_rng(seed)
    keys = [int(k) for k in rng.integers(0, 10**15, size=len(lines))]
    text = "".join(
        f"{line.rstrip():<99}0.{k:015d}\r\n" for line, k in zip(lines, keys, strict=True)
    )
    (folder / "tau_testW_CKM.asc").write_text(text)
    return folder, keys


def test_counts_on_tau_testw_with_generated_keys_are_the_oracles(tmp_path: Path) -> None:
    """Every cell of Size × Region (hierarchy region2.hrc): original + v of the ptable row
    where the cell key falls, computed by the oracle from the raw file."""
    folder, keys = _tau_testw_with_keys(tmp_path)
    s = Session()
    s.open_microdata(folder / "tau_testW_CKM.asc", folder / "Tau_TestW_CKM.rda")
    s.specify_table(parse_specify_table('"Size""Region"|"<freq>"||'))
    s.set_safety_rules(parse_safety_rule("FREQ(3,10)"))
    s.compute_tables()
    s.protect(1, "CKM")
    t = s.table(1)
    assert t.published is not None
    raw = (folder / "tau_testW_CKM.asc").read_text().splitlines()
    size = [line[8:10].strip() for line in raw]
    region = [line[11:13].strip() for line in raw]
    rleaves = hrc_leaves(folder / "region2.hrc") | {"Total": set(region)}
    rows = read_ptable_rows(folder / "tau_testW_ptable.txt")
    by_cell: dict[tuple[str, str], list[int]] = {}
    for sz, rg, k in zip(size, region, keys, strict=True):
        by_cell.setdefault((sz, rg), []).append(k)
    for c in range(t.n_cells):
        cs, cr = (x.strip() for x in t.cell_codes(c))
        ks = [
            k
            for (sz, rg), kk in by_cell.items()
            if (cs == "Total" or sz == cs) and rg in rleaves.get(cr, {cr})
            for k in kk
        ]
        want = perturbed_count(len(ks), cell_key(ks, 15), rows)
        assert t.published[c] == want, (t.cell_codes(c), len(ks))


def test_the_generator_reproduces_the_example_ptables() -> None:
    """D, V, js, pstay of τ-Argus's three frequency ptables give their rows, noises and
    probabilities (to 1e-4) with p adding up to 1 and variance V per row."""
    from argusqt.protection.adjust.ckm_ptable import generate_ptable

    cases = [
        ("Magnitude/ptab_freq.txt", 5, 3.0, 2, 0.5),
        ("Frequency/tau_testW_ptable.txt", 7, 4.0, 2, None),
        ("Frequency/20160511_szenario_5a.txt", 5, 2.001, 2, None),
    ]
    for name, d, v, js, pstay in cases:
        made = generate_ptable(d, v, js, pstay)
        given = read_ptable(tauargus_dir() / "cellkey" / name)
        assert [r.i for r in made.table()] == [r.i for r in given.table()]
        assert made.max_deviation == given.max_deviation == d
        for a, b in zip(made.table(), given.table(), strict=True):
            assert list(a.j) == list(b.j)
            assert abs(a.p.sum() - 1) < 1e-7
            assert np.abs(a.p - b.p).max() < 1e-4, (name, a.i)
            if a.i > js:
                assert abs(float(a.p @ a.v**2) - v) < 1e-5


def test_ckm_without_keys_or_ckm_option_is_refused_clearly(tmp_path: Path) -> None:
    folder = _magnitude(tmp_path)
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"HighIncome"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)"))
    s.compute_tables()
    with pytest.raises(ArgusError, match="needs <CKM> M, D, V or T"):
        s.protect(1, "CKM")
    assert s.table(1).published is None
    rda = (folder / "microdata.rda").read_text().splitlines()
    ckm_words = ("<RECORDKEY>", "<PFILE", "<CKM>", "<INCLUDEZEROS>", "<SEPARATION>", "<PARITY>",
                 "<SCALING>")  # fmt: skip
    kept = [line for line in rda if not any(w in line for w in ckm_words)]
    (folder / "nokey.rda").write_text("\n".join(kept) + "\n")
    s2 = Session()
    s2.open_microdata(folder / "microdata.csv", folder / "nokey.rda")
    s2.specify_table(parse_specify_table('"Sex""Age"|"<freq>"||'))
    s2.compute_tables()
    with pytest.raises(ArgusError, match="CKM needs record keys"):
        s2.protect(1, "CKM")


def test_a_generated_ptable_is_used_and_logged(tmp_path: Path) -> None:
    folder = _magnitude(tmp_path)
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"<freq>"||'))
    s.compute_tables()
    s.protect(1, "CKM", {"ptable_d": 5, "ptable_v": 3.0, "ptable_js": 2, "ptable_pstay": 0.5})
    t = s.table(1)
    recs = _records(folder)
    sex = hrc_leaves(folder / "dim_sex.hrc") | {"Total": {r[0] for r in recs}}
    age = hrc_leaves(folder / "dim_age.hrc") | {"Total": {r[1] for r in recs}}
    from argusqt.io.ptable import ptable_text
    from argusqt.protection.adjust.ckm_ptable import generate_ptable

    (tmp_path / "gen.txt").write_text(ptable_text(generate_ptable(5, 3.0, 2, 0.5)))
    rows = read_ptable_rows(tmp_path / "gen.txt")
    want = _oracle_counts(t, recs, [(0, sex), (1, age)], 5, 8, rows)
    assert np.array_equal(t.published, want)
    assert any("keep D, V and the ptable confidential" in e.message for e in s.log)


FREQ_JOB = """\
<OPENMICRODATA> "microdata.csv"
<OPENMETADATA> "microdata.rda"
<SPECIFYTABLE> "Sex""Age"|"<freq>"||
<SAFETYRULE> FREQ(3,10)
<READMICRODATA>
<SUPPRESS> CKM(1) "other.txt"
<WRITETABLE> (1, 7, AO+AD+AC+, "ckm.txt")
<WRITETABLE> (1, 1, , "freq.xlsx")
"""


def test_batch_ptable_type7_excel_and_round_trips(tmp_path: Path) -> None:
    """`CKM(1) "file"` uses that ptable; type 7 is written CONFIDENTIAL with original,
    difference and cell key; the Excel workbook prints the perturbed counts; the batch file
    and the session file written afterwards give the same published values."""
    import openpyxl

    from argusqt.batch.render import write_batch_file
    from argusqt.sessionfile import load_session, save_session

    folder = _magnitude(tmp_path)
    other = (
        "i;j;p;v;p_int_ub\n0;0;1;0;1\n1;0;0.5;-1;0.5\n1;2;0.5;1;1\n"
        "2;1;0.25;-1;0.25\n2;2;0.5;0;0.75\n2;3;0.25;1;1\n"
    )
    (folder / "other.txt").write_text(other)
    (folder / "job.arb").write_text(FREQ_JOB)
    out = run_batch(folder / "job.arb")
    assert out.ok, out.error
    t = out.session.table(1)
    recs = _records(folder)
    sex = hrc_leaves(folder / "dim_sex.hrc") | {"Total": {r[0] for r in recs}}
    age = hrc_leaves(folder / "dim_age.hrc") | {"Total": {r[1] for r in recs}}
    want = _oracle_counts(t, recs, [(0, sex), (1, age)], 5, 8,
                          read_ptable_rows(folder / "other.txt"))  # fmt: skip
    assert np.array_equal(t.published, want)
    assert np.abs(t.published - t.value).max() == 1
    # type 7: codes; perturbed; original; difference; cell key — CONFIDENTIAL
    lines = (folder / "ckm.txt").read_text().splitlines()
    assert len(lines) == t.n_cells
    assert folder / "ckm.txt" in out.confidential
    assert "CONFIDENTIAL" in (folder / "ckm.txt.CONFIDENTIAL.txt").read_text()
    for c, line in enumerate(lines):
        f = line.split(";")
        assert float(f[2]) == t.published[c] and float(f[3]) == t.value[c]
        assert float(f[4]) == t.published[c] - t.value[c] and len(f[5]) == 10  # 0.+8 decimals
    # the publishable workbook prints the perturbed counts, never the originals
    ws = openpyxl.load_workbook(folder / "freq.xlsx").worksheets[0]
    printed = {c.value for row in ws.iter_rows() for c in row if isinstance(c.value, int | float)}
    nonempty = t.status != Status.EMPTY
    assert set(t.published[nonempty]) <= printed
    # round trips: batch file and session file
    written = write_batch_file(out.session, tmp_path / "again.arb")
    text = (tmp_path / "again.arb").read_text()
    assert '<SUPPRESS> CKM(1) "' in text and "other.txt" in text, text
    assert written
    again = run_batch(tmp_path / "again.arb")
    assert again.ok, again.error
    assert np.array_equal(again.session.table(1).published, t.published)
    save_session(out.session, tmp_path / "s.aqs")
    loaded = load_session(tmp_path / "s.aqs")
    assert np.array_equal(loaded.table(1).published, t.published)
    # a reloaded session gets the gate's verdict at once (docs/design.md, D-51)
    assert loaded.protection_state(1) == "cleared"
    loaded.write_table(1, 2, "", tmp_path / "pivot.csv")
    assert loaded.protection_state(1) == "cleared"


def test_ckm_batch_tail_parses_tau_argus_forms() -> None:
    from argusqt.batch.arb import parse_suppress

    a = parse_suppress('CKM(1) "cont.txt" | "sep.txt" | 2.7')
    assert (a.table, a.ptables, a.params.mu_c) == (1, ("cont.txt", "sep.txt"), 2.7)
    b = parse_suppress("CKM(2) ||2.7")
    assert (b.ptables, b.params.mu_c) == ((None, None), 2.7)
    c = parse_suppress('CKM(1) "f.txt"')
    assert c.ptables == ("f.txt", None) and c.params.mu_c == 0
    assert parse_suppress("CKM(3)").ptables is None
    with pytest.raises(ValueError, match="double quotes"):
        parse_suppress("CKM(1) f.txt")
    with pytest.raises(ValueError, match="μc must be a number"):
        parse_suppress('CKM(1) "a" | | x')


def test_api_with_a_data_frame_seeded_keys_and_a_ptable_frame(tmp_path: Path) -> None:
    """`argusqt.protect(df, method="CKM", record_key_seed=…, ptable=DataFrame)`: the counts
    are the oracle's with the keys the API drew (the same seed gives the same keys)."""
    import pandas as pd

    import argusqt
    from argusqt.model.cellkey import generated_record_keys

    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {"region": rng.choice(["N", "S", "E"], 400), "size": rng.choice(["a", "b"], 400)}
    )
    frame = pd.read_csv(tauargus_dir() / "cellkey" / "Magnitude" / "ptab_freq.txt", sep=";")
    out = argusqt.protect(
        df, explanatory=["region", "size"], method="CKM", record_key_seed=9, ptable=frame
    )
    t = out[0].table
    keys = generated_record_keys(len(df), 9)
    units = [round(k * 10**15) for k in keys]
    rows = read_ptable_rows(tauargus_dir() / "cellkey" / "Magnitude" / "ptab_freq.txt")
    for c in range(t.n_cells):
        r, s = (x.strip() for x in t.cell_codes(c))
        m = ((df.region == r) | (r == "Total")) & ((df["size"] == s) | (s == "Total"))
        ks = [u for u, inside in zip(units, m, strict=True) if inside]
        assert t.published[c] == perturbed_count(len(ks), cell_key(ks, 15), rows)
    assert any("keep them with the data" in line for line in out.log)
    published = out[0].publish()
    assert len(published) > 0
    # the keys and the in-memory ptable go with the session file and the batch file
    out.save_session(tmp_path / "s.aqs")
    assert np.array_equal(argusqt.open_session(tmp_path / "s.aqs")[0].table.published, t.published)
    out.write_batch_file(tmp_path / "b.arb")
    assert (tmp_path / "b_ptable1.txt").is_file()
    again = run_batch(tmp_path / "b.arb")
    assert again.ok, again.error
    assert np.array_equal(again.session.table(1).published, t.published)


def test_report_gives_the_loss_and_risk_by_size_class(tmp_path: Path) -> None:
    folder = _magnitude(tmp_path)
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"<freq>"||'))
    s.compute_tables()
    result = s.protect(1, "CKM")
    html = s.report_html(1)
    assert "Information loss and risk (cell key method)" in html
    t = s.table(1)
    nonempty = t.status != Status.EMPTY
    changed = int((t.published != t.value)[nonempty].sum())
    assert f"Cells changed: {changed} of {int(nonempty.sum())}" in html
    classes = result.figures["loss"]["classes"]
    assert sum(c["cells"] for c in classes) == int(nonempty.sum())
    edges = [0, 1, 3, 5, 10, 20, 50, 100, 1000, float("inf")]  # the documented classes
    v = t.value[nonempty]
    want = {}
    for lo, hi in zip(edges[1:-1], edges[2:], strict=True):
        n = int(((v >= lo) & (v < hi)).sum())
        if n:
            label = f"≥ {lo:g}" if hi == float("inf") else f"{lo:g}–{hi:g}"
            want[label] = n
    assert {c["class"]: c["cells"] for c in classes} == want


def test_ckm_is_refused_with_holdings(tmp_path: Path) -> None:
    """τ-Argus refuses the cell key method on a table with holding-level rules; so does argusqt."""
    folder = _magnitude(tmp_path)
    rda = (
        (folder / "microdata.rda")
        .read_text()
        .replace("Weigt 3\n  <WEIGHT>", "Weigt 3\n  <HOLDING>")
    )
    (folder / "hold.rda").write_text(rda)
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "hold.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"<freq>"||'))
    s.set_safety_rules(parse_safety_rule("FREQ(3,10)|FREQ(3,10)"))
    s.compute_tables()
    assert s.table(1).spec.use_holdings
    with pytest.raises(ArgusError, match="not available when holdings are used"):
        s.protect(1, "CKM")
    assert s.table(1).published is None


def test_savings_magnitudes_follow_the_step_by_step_oracle(tmp_path: Path) -> None:
    """Every Savings cell of the Magnitude example (T(3), flex scaling, separation, the
    example's ptables) against the oracle's scalar steps from the raw records."""
    from ckm_oracle import perturbed_topk, read_cont_rows

    folder = _magnitude(tmp_path)
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    s.specify_table(parse_specify_table('"Sex""Age"|"Savings"||'))
    s.compute_tables()
    s.protect(1, "CKM")
    t = s.table(1)
    recs = _records(folder)
    sex = hrc_leaves(folder / "dim_sex.hrc") | {"Total": {r[0] for r in recs}}
    age = hrc_leaves(folder / "dim_age.hrc") | {"Total": {r[1] for r in recs}}
    large = read_cont_rows(folder / "ptab_savings_all.txt")
    small = read_cont_rows(folder / "ptab_savings_smallcells.txt")
    par = {"s0": 0.03, "s1": 0.30, "xs": 1000.0, "q": 3.0, "eps": [1.0, 0.5, 0.2]}
    for c in range(t.n_cells):
        cs, ca = (x.strip() for x in t.cell_codes(c))
        members = [r for r in recs if r[0] in sex[cs] and r[1] in age[ca]]
        x = sum(float(r[3]) for r in members)
        nonzero = [r for r in members if abs(float(r[3])) > 1e-8]  # <INCLUDEZEROS> N
        key = sum(key_int(r[5], 8) for r in nonzero) % 10**8
        tops = sorted((float(r[3]) for r in members), reverse=True)[: min(3, len(members))]
        want = perturbed_topk(x, tops, key, 8, large, small, par) if members else 0.0
        assert t.published[c] == round(want), t.cell_codes(c)  # Savings has 0 decimals
    assert (t.published != t.value).mean() > 0.5


def test_a_large_keyed_fixed_file_stays_in_memory_so_ckm_has_its_keys(
    tmp_path: Path, monkeypatch
) -> None:
    """Fixed-format files above STREAM_BYTES are streamed, but a file with a record key is
    read whole: the cell keys sum every record's key, which the streamed parts do not keep
    (with streaming forced on every file, CKM still perturbs as it does in memory)."""
    from argusqt.io import fixedstream
    from argusqt.io.fixedstream import StreamedMicroData

    folder, _ = _tau_testw_with_keys(tmp_path)

    def protected() -> tuple[Session, np.ndarray]:
        s = Session()
        s.open_microdata(folder / "tau_testW_CKM.asc", folder / "Tau_TestW_CKM.rda")
        s.specify_table(parse_specify_table('"Size""Region"|"<freq>"||'))
        s.set_safety_rules(parse_safety_rule("FREQ(3,10)"))
        s.compute_tables()
        s.protect(1, "CKM")
        published = s.table(1).published
        assert published is not None
        return s, np.asarray(published)

    _, in_memory = protected()
    monkeypatch.setattr(fixedstream, "STREAM_BYTES", 0)  # every fixed file "large"
    s, forced = protected()
    assert not isinstance(s.microdata, StreamedMicroData)
    np.testing.assert_array_equal(forced, in_memory)
