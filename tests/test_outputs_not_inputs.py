"""An output named like an input (data, metadata, hierarchy, batch file, logbook) is refused
before anything is written, through the batch, the session (GUI dialogs, API)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from session_helpers import ex2_session

from argusqt.batch.render import write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.errors import SpecificationError
from argusqt.sessionfile import load_session, save_session

HEAD = (
    '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
    '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n<SAFETYRULE> FREQ(5,20)|P(20,5)\n'
    "<READMICRODATA>\n<SUPPRESS> MOD(1)\n"
)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize(
    "line, name",
    [
        ('<WRITETABLE> (1,1,FL+,"microdata_ex2.asc")', "microdata_ex2.asc"),
        ('<WRITETABLE> (1,3,AS+,"metadata_ex2.rda")', "metadata_ex2.rda"),
        ('<WRITETABLE> (1,2,,"hier_region_ex2.hrc")', "hier_region_ex2.hrc"),
        ('<WRITETABLE> (1,1,,"x.arb")', "x.arb"),
        ('<WRITETABLE> (1,5,,"metadata_ex2.tab")', "metadata_ex2.rda"),  # its side .rda
        ('<VERSIONINFO> "microdata_ex2.asc"', "microdata_ex2.asc"),
    ],
)
def test_batch_output_over_an_input_is_refused_before_anything_runs(ex2, line, name):
    arb = ex2 / "x.arb"
    arb.write_text(HEAD + line + "\n")
    before = _digests(ex2)
    out = run_batch(arb)
    assert not out.ok
    assert out.error is not None and out.error.line == 7
    assert name in str(out.error) and "input" in str(out.error)
    assert _digests(ex2) == before  # nothing written, nothing changed
    assert out.commands_run == 0  # refused before the first command ran


def test_logbook_command_naming_the_data_is_refused(ex2):
    arb = ex2 / "x.arb"
    arb.write_text('<LOGBOOK> "microdata_ex2.asc"\n' + HEAD)
    before = _digests(ex2)
    out = run_batch(arb)
    assert not out.ok and out.error is not None and out.error.line == 1
    assert "microdata" in str(out.error)
    assert _digests(ex2) == before


def test_logbook_argument_naming_an_input_is_refused(ex2):
    arb = ex2 / "x.arb"
    arb.write_text(HEAD)
    before = _digests(ex2)
    for name in ("microdata_ex2.asc", "x.arb"):
        out = run_batch(arb, logbook=ex2 / name)
        assert not out.ok and "logbook" in str(out.error)
        assert _digests(ex2) == before


def test_batch_file_itself_through_another_name(ex2):
    """A hard link (another name of the same file) is the same file."""
    arb = ex2 / "x.arb"
    arb.write_text(HEAD + '<WRITETABLE> (1,1,,"link.arb")\n')
    (ex2 / "link.arb").hardlink_to(arb)
    before = _digests(ex2)
    out = run_batch(arb)
    assert not out.ok and "batch file" in str(out.error)
    assert _digests(ex2) == before


def test_session_writes_refuse_inputs(ex2):
    """The doors the GUI dialogs and the API use: table, report, workbook, a-priori, logbook."""
    s = ex2_session(ex2)
    s.protect(1, "MOD", {})
    before = _digests(ex2)
    calls = [
        lambda: s.write_table(1, 1, "", ex2 / "microdata_ex2.asc"),
        lambda: s.write_table(1, 3, "AS+", ex2 / "metadata_ex2.rda"),
        lambda: s.write_table(1, 1, "", ex2 / "hier_gender_ex2.hrc"),
        lambda: save_session(s, ex2 / "metadata_ex2.rda"),
        lambda: write_batch_file(s, ex2 / "hier_region_ex2.hrc"),
        lambda: s.write_report(1, ex2 / "metadata_ex2.rda", tau_name=True),
        lambda: s.write_apriori(1, ex2 / "hier_region_ex2.hrc"),
        lambda: s.save_text(ex2 / "microdata_ex2.asc", "x"),
        lambda: s.set_logbook(ex2 / "microdata_ex2.asc"),
    ]
    for call in calls:
        with pytest.raises(SpecificationError, match="input"):
            call()
    assert _digests(ex2) == before
    assert s.logbook is None


def test_other_outputs_still_written(ex2):
    arb = ex2 / "x.arb"
    arb.write_text(HEAD + '<WRITETABLE> (1,1,,"t.csv")\n')
    out = run_batch(arb)
    assert out.ok, out.error
    assert (ex2 / "t.csv").is_file()


def test_loaded_session_file_is_an_input(ex2):
    s = ex2_session(ex2)
    saved = save_session(s, ex2 / "work.aqs")
    s2 = load_session(saved)
    with pytest.raises(SpecificationError, match="session file"):
        s2.write_table(1, 3, "AS+", saved)
    assert save_session(s2, saved) == saved  # File | Save over the session it came from
    with pytest.raises(SpecificationError, match="microdata"):
        save_session(s2, ex2 / "microdata_ex2.asc")


def test_api_parquet_over_the_input_parquet_is_refused(tmp_path):
    """Microdata read from a Parquet file: the table's Parquet output may not replace it."""
    import pandas as pd

    import argusqt

    src = tmp_path / "records.parquet"
    pd.DataFrame(
        {"region": list("AABBCC") * 5, "turnover": [float(k) for k in range(30)]}
    ).to_parquet(src, index=False)
    before = src.read_bytes()
    result = argusqt.protect(src, explanatory=["region"], response="turnover", progress=False)
    with pytest.raises(SpecificationError, match="microdata"):
        result.to_parquet(src)
    assert src.read_bytes() == before


def test_known_inputs_judge_as_same_file(tmp_path):
    """The inputs resolved once (KnownInputs, D-89) refuse exactly what same_file refuses:
    the name itself, a symbolic and a hard link, another spelling; nothing else."""
    from argusqt.io.outputs import KnownInputs, check_outputs, same_file

    data = tmp_path / "data.asc"
    data.write_text("1\n")
    (tmp_path / "sym.asc").symlink_to(data)
    (tmp_path / "hard.asc").hardlink_to(data)
    (tmp_path / "sub").mkdir()
    names = [
        data,
        tmp_path / "sym.asc",
        tmp_path / "hard.asc",
        tmp_path / "sub" / ".." / "data.asc",
        tmp_path / "other.asc",
        tmp_path / "missing" / "data.asc",
    ]
    inputs = [("microdata", data), ("metadata", tmp_path / "absent.rda")]
    known = KnownInputs(inputs)
    for out in names:
        expected = any(same_file(out, p) for _, p in inputs)
        for given in (inputs, known):
            if expected:
                with pytest.raises(SpecificationError, match="microdata"):
                    check_outputs([out], given, "x")
            else:
                check_outputs([out], given, "x")
    assert [same_file(n, data) for n in names] == [True, True, True, True, False, False]
