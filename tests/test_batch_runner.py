"""Batch runner: order rules (argusqt/docs/formats.md §8.2), errors naming the batch line,
logbook, GOINTERACTIVE, paths."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from confidential_helpers import body_lines

from argusqt.batch.runner import run_batch
from argusqt.io.logbook import format_entry, timestamp
from argusqt.progress import CancelToken

EX2_HEAD = """\
<OPENMICRODATA> "microdata_ex2.asc"
<OPENMETADATA> "metadata_ex2.rda"
<SPECIFYTABLE> "region""gender"|"num1"|""|""
<SAFETYRULE> FREQ(5,20)|P(20,5)|
<READMICRODATA>
"""
ENTRY = re.compile(
    r"^\d\d-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{4} \d\d:\d\d:\d\d : "
)


@pytest.fixture
def ex2(shared_data, tmp_path) -> Path:
    """A copy of batch_ex2 (data, metadata, hierarchies) without its batch file."""
    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    (folder / "batch_ex2.arb").unlink()
    return folder


def _run(folder: Path, text: str, **kw):
    arb = folder / "t.arb"
    arb.write_text(text)
    return run_batch(arb, **kw)


def _fails_at(outcome, line: int, *fragments: str) -> None:
    assert not outcome.ok and outcome.exit_code == 1
    err = outcome.error
    assert err is not None and err.line == line, str(err)
    assert err.file == str(outcome.path)
    for frag in fragments:
        assert frag in err.message, err.message


# ---------------------------------------------------------------- order (state machine)
@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("<READMICRODATA>\n", 1, "out of order"),
        ('<OPENMETADATA> "metadata_ex2.rda"\n', 1, "<OPENMICRODATA> or <OPENTABLEDATA>"),
        ("<SUPPRESS> OPT(1)\n", 1, "<READMICRODATA> or <READTABLE>"),
        ('// c\n<SPECIFYTABLE> "region"|"num1"\n', 2, "<OPENMETADATA>"),
        ("<SAFETYRULE> FREQ(5,20)\n", 1, "<SPECIFYTABLE> directly before"),
    ],
)
def test_order_errors_without_data(ex2, text, line, fragment):
    _fails_at(_run(ex2, text), line, fragment)


def test_safetyrule_required_for_microdata(ex2):
    text = EX2_HEAD.replace("<SAFETYRULE> FREQ(5,20)|P(20,5)|\n", "")
    _fails_at(_run(ex2, text), 4, "<READMICRODATA>", "out of order")
    two = EX2_HEAD.replace("<SAFETYRULE> FREQ(5,20)|P(20,5)|\n", '<SPECIFYTABLE> "region"|"num1"\n')
    _fails_at(_run(ex2, two), 4, "<SAFETYRULE> for the previous table")


def test_write_before_read_and_reopen_without_clear(ex2):
    text = EX2_HEAD.replace("<READMICRODATA>\n", '<WRITETABLE> (1,3,,"x.txt")\n')
    _fails_at(_run(ex2, text), 5, "<READMICRODATA> or <READTABLE>")
    again = EX2_HEAD + '<OPENMICRODATA> "microdata_ex2.asc"\n'
    _fails_at(_run(ex2, again), 6, "<CLEAR>")
    cleared = EX2_HEAD + "<CLEAR>\n" + EX2_HEAD + '<WRITETABLE> (1,3,AS+,"x.txt")\n'
    out = _run(ex2, cleared)
    assert out.ok, out.error
    assert len(out.session.tables) == 1 and (ex2 / "x.txt").is_file()


def test_unknown_table_number(ex2):
    out = _run(ex2, EX2_HEAD + '<WRITETABLE> (2, 3, AS+, "x.txt")\n')
    _fails_at(out, 6, "no table 2", "numbered 1 to 1")


def test_suppress_reports_line_never_skips(ex2):
    out = _run(ex2, EX2_HEAD + '<SUPPRESS> OPT(1,1)\n<WRITETABLE> (1, 3, AS+, "x.txt")\n')
    try:
        import argusqt.protection.run  # noqa: F401
    except ImportError:
        _fails_at(out, 6, "<SUPPRESS> OPT(1,1)", "OPT is not available yet")
        assert not (ex2 / "x.txt").exists()  # the run stopped at the SUPPRESS line
        return
    assert out.ok, out.error
    assert [int(s) for s in out.session.tables[0].status[[4, 5, 10, 11]]] == [11, 3, 11, 11]


def test_linked_table_zero_is_refused_clearly(ex2):
    out = _run(ex2, EX2_HEAD + "<SUPPRESS> NET(0)\n")
    _fails_at(out, 6, "NET cannot protect linked tables together")


# ---------------------------------------------------------------- errors name the cause
def test_missing_input_file_names_line(ex2):
    out = _run(ex2, '<OPENMICRODATA> "nothere.asc"\n')
    _fails_at(out, 1, "nothere.asc", "not found")


def test_data_error_names_data_file_and_line(ex2):
    data = ex2 / "microdata_ex2.asc"
    lines = data.read_text().splitlines()
    lines[2] = "A,female, 66,  9, abc,728.23"
    data.write_text("\n".join(lines) + "\n")
    out = _run(ex2, EX2_HEAD)
    assert not out.ok
    assert out.error.line in (2, 5)  # the data is read with the metadata (or by READMICRODATA)
    assert "microdata_ex2.asc" in out.error.message
    assert "line 3" in out.error.message


def test_specification_error_names_variable(ex2):
    out = _run(ex2, EX2_HEAD.replace('"region""gender"|"num1"', '"region""sex"|"num1"'))
    _fails_at(out, 3, "sex")


# ---------------------------------------------------------------- interactive, logbook, outputs
def test_gointeractive_headless_and_interactive(ex2):
    text = EX2_HEAD + '<GOINTERACTIVE>\n<WRITETABLE> (1, 3, AS+, "x.txt")\n'
    out = _run(ex2, text)
    assert out.ok and out.exit_code == 0 and not out.interactive
    assert out.commands_run == 6 and not (ex2 / "x.txt").exists()
    out = _run(ex2, text, interactive=True)
    assert out.ok and out.interactive and len(out.session.tables) == 1


def test_logbook_entries_and_echo(ex2, tmp_path):
    log = tmp_path / "book.txt"
    log.write_text("earlier entry\n")
    out = _run(ex2, "<SOLVER> CPLEX\n<SILENT>\n" + EX2_HEAD, logbook=log)
    assert out.ok, out.error
    lines = log.read_text().splitlines()
    assert lines[0] == "earlier entry"  # append-only
    assert all(ENTRY.match(line) or line.startswith("    ") for line in lines[1:])
    text = log.read_text()
    assert "Batch line 1: <SOLVER> CPLEX" in text and "own free solvers" in text
    assert "Batch line 7: <READMICRODATA>" in text
    assert "<SILENT> accepted and ignored" in text


def test_logbook_command_relative_to_batch_file_and_tempdir(ex2, tmp_path):
    out = _run(ex2, '<LOGBOOK> "sub/my.log"\n' + EX2_HEAD, tempdir=tmp_path / "tmp")
    assert out.ok
    assert (tmp_path / "tmp" / "Logbook.txt").is_file()  # default logbook in the temp folder
    text = (ex2 / "sub" / "my.log").read_text()
    assert "Batch line 6: <READMICRODATA>" in text
    assert "Batch line 1: <LOGBOOK>" in text  # the run start is replayed into the new logbook


def test_logbook_format():
    from datetime import datetime

    when = datetime(2023, 2, 3, 15, 28, 0)
    assert timestamp(when) == "03-Feb-2023 15:28:00"
    assert format_entry(when, "a\nb") == "03-Feb-2023 15:28:00 : a\n    b\n"


def test_outputs_relative_to_batch_file_and_windows_paths(ex2):
    text = (
        EX2_HEAD
        + '<WRITETABLE> (1, 3, AS+FL+, "out/t.txt")\n<WRITETABLE> (1, 2, AS+, "C:\\temp\\p.csv")\n'
    )
    (ex2 / "out").mkdir()
    out = _run(ex2, text)
    assert out.ok, out.error
    assert out.files_written == [  # each AS+ table with its CONFIDENTIAL sidecar, no report
        ex2 / "out" / "t.txt",
        ex2 / "out" / "t.txt.CONFIDENTIAL.txt",
        ex2 / "p.csv",
        ex2 / "p.csv.CONFIDENTIAL.txt",
    ]
    assert out.confidential == set(out.files_written)
    assert body_lines(ex2 / "out" / "t.txt")[6] == '"A","female",189.40,3'


def test_cancel_before_start(ex2):
    token = CancelToken()
    token.cancel()
    out = _run(ex2, EX2_HEAD, cancel=token)
    assert not out.ok and out.cancelled and out.error.line == 1


def test_progress_events(ex2):
    events = []
    out = _run(ex2, EX2_HEAD, progress=events.append)
    assert out.ok
    assert any("Line 5: <READMICRODATA>" in e.message for e in events)
    assert events[-1].fraction == 1.0


def test_tabular_table_set_before_one_readtable(shared_data, tmp_path):
    """Several OPENTABLEDATA/OPENMETADATA/SPECIFYTABLE groups precede one READTABLE
    (argusqt/docs/formats.md §8.2)."""
    folder = tmp_path / "ex1"
    shutil.copytree(shared_data / "batch_ex1", folder)
    group = (
        '<OPENTABLEDATA> "tabdata_ex1.tab"\n<OPENMETADATA> "metadata_ex1.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"freq"|""|""\n'
    )
    text = (
        group
        + "<SAFETYRULE> MAN(20)\n"
        + group
        + '<READTABLE>\n<WRITETABLE> (2, 3, AS+, "t2.txt")\n'
    )
    out = _run(folder, text)
    assert out.ok, out.error
    assert len(out.session.tables) == 2
    assert body_lines(folder / "t2.txt")[5] == '"A","female",137,9'
    # a second table file after READTABLE needs <CLEAR>
    _fails_at(_run(folder, group + "<READTABLE>\n" + group), 5, "<CLEAR>")


def test_versioninfo_and_ignored_commands(ex2):
    out = _run(ex2, '<VERSIONINFO> "v.txt"\n<COVER>\n<JJ>\n<SILENT>\n')
    assert out.ok and out.commands_run == 4
    from argusqt import __version__

    assert (ex2 / "v.txt").read_text() == f"argusqt {__version__}\n"
    assert sum("accepted and ignored" in e.message for e in out.session.log) == 3


def test_cancel_during_run_stops_before_the_next_command(ex2):
    token = CancelToken()

    def progress(event):
        if "Tables ready" in event.message:
            token.cancel()

    out = _run(
        ex2, EX2_HEAD + '<WRITETABLE> (1, 3, AS+, "x.txt")\n', progress=progress, cancel=token
    )
    assert out.cancelled and not out.ok and out.exit_code == 1
    assert out.error.line == 6 and "cancelled" in out.error.message
    assert len(out.session.tables) == 1 and not (ex2 / "x.txt").exists()
