"""Bad input (issue 14): every case of the campaign is refused with file and line, or
accepted with a warning in the session log and logbook — never silently, never as an
"internal error".

Copies of the real τ-Argus files are damaged in tmp_path and run through the batch runner
(the same path as `argusqt batch`). Where τ-Argus itself accepts an input, argusqt accepts
it too and logs a warning; each test's docstring says which.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from confidential_helpers import body_lines
from shared_paths import copy_case

from argusqt.batch.runner import run_batch
from argusqt.session import is_warning

TESTW_JOB = """\
<OPENMICRODATA> "tau_testW.asc"
<OPENMETADATA> "tau_testW.rda"
<SPECIFYTABLE> "Size""Region"|"Var2"||
<SAFETYRULE> NK(2,75)|NK(0,0)
<READMICRODATA>
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
"""

EX2_JOB = """\
<OPENMICRODATA> "microdata_ex2.asc"
<OPENMETADATA> "metadata_ex2.rda"
<SPECIFYTABLE> "region""gender"|"num1"|""|""
<SAFETYRULE> FREQ(5,20)|P(20,5)|
<READMICRODATA>
<SUPPRESS> OPT(1,1)
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
"""

PP_JOB = """\
<OPENTABLEDATA> "pp.tab"
<OPENMETADATA> "pp.rda"
<SPECIFYTABLE> "Size""Region"|"Var2"|"Var2_Shadow"|"Var2"
<READTABLE> 1T
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
"""

ENT_JOB = """\
<OPENMICRODATA> "example_enterprise.asc"
<OPENMETADATA> "example_enterprise.rda"
<SPECIFYTABLE> "region""product"|"turnover"||"turnover"
<SAFETYRULE> P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MAN(10)|MIS(1)
<READMICRODATA>
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
"""


def _case(tmp_path: Path, name: str, job: str) -> Path:
    folder = copy_case(name, tmp_path)
    for p in folder.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    (folder / "job.arb").write_text(job)
    return folder


def _run(folder: Path):
    return run_batch(folder / "job.arb", logbook=folder / "log.txt")


def _edit_line(path: Path, k: int, fn) -> None:
    """Apply fn to line k (1-based) of a file, keeping its line ends."""
    data = path.read_bytes()
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    lines = data.split(eol)
    lines[k - 1] = fn(lines[k - 1])
    path.write_bytes(eol.join(lines))


def _warnings(outcome) -> list[str]:
    return [e.message for e in outcome.session.log if is_warning(e.message)]


def _logbook_warnings(folder: Path) -> list[str]:
    return [ln for ln in (folder / "log.txt").read_text().splitlines() if " : warning" in ln]


def _total(folder: Path) -> float:
    first = body_lines(folder / "out.txt")[1]  # after the header (AS+: marked by its sidecar)
    return float(first.split(",")[2])


def _fails(outcome, file: str, line: int | None, *fragments: str) -> str:
    """The run stopped; the message names `file` with `line` (and the fragments)."""
    assert not outcome.ok, "accepted silently"
    msg = str(outcome.error)
    assert "internal error" not in msg, msg
    assert file in msg, msg
    if line is not None:
        assert re.search(re.escape(file) + rf", line {line}\b", msg), msg
    for f in fragments:
        assert f in msg, msg
    return msg


# ---------------------------------------------------------------- silently accepted before
def test_fixed_line_cut_inside_a_number_is_a_warning(tmp_path):
    """τ-Argus reads a short fixed-width line as if padded with blanks (accepted): argusqt
    does the same and logs how many lines were short and which fields they cut."""
    ref = _case(tmp_path / "ref", "tau_testW", TESTW_JOB)
    assert _run(ref).ok
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    _edit_line(folder / "tau_testW.asc", 3, lambda s: s[:30])
    out = _run(folder)
    assert out.ok, out.error
    (short,) = [w for w in _warnings(out) if "end before column" in w]
    assert "1 record(s)" in short and "first: line 3, 30 characters" in short
    assert "Var2 (1 cut)" in short
    assert _total(folder) == pytest.approx(_total(ref) - 96.0)  # the line's 96.00 lost "6.00"
    assert any("end before column" in w for w in _logbook_warnings(folder))


def test_numeric_field_beyond_every_record_is_a_warning(tmp_path):
    """τ-Argus reads a field beyond the line end as blank (accepted): the reader's warning
    now reaches the session log and the logbook (it was dropped by open_microdata)."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    rda = folder / "tau_testW.rda"
    rda.write_text(rda.read_text().replace("Var2 28", "Var2 200"))
    out = _run(folder)
    assert out.ok, out.error
    assert any("Var2 starts at column 200" in w for w in _warnings(out))
    assert any("Var2 starts at column 200" in w for w in _logbook_warnings(folder))


def test_empty_microdata_file_is_a_warning(tmp_path):
    """An empty extract gives an empty table (accepted, as τ-Argus reads it): the
    "no records" warning reaches the log."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    (folder / "tau_testW.asc").write_bytes(b"")
    out = _run(folder)
    assert out.ok, out.error
    assert any("tau_testW.asc has no records" in w for w in _warnings(out))


def test_holding_split_in_two_runs_is_a_warning(tmp_path):
    """τ-Argus takes each run of a holding code as a holding (accepted,
    argusqt/docs/formats.md §2.3): the contiguity warning reaches the log with the line where the
    holding comes back."""
    folder = _case(tmp_path, "enterprise", ENT_JOB)
    asc = folder / "example_enterprise.asc"
    data = asc.read_bytes().split(b"\r\n")
    moved = data.pop(2)  # line 3: its holding also has line 4
    data.insert(-1, moved)
    asc.write_bytes(b"\r\n".join(data))
    out = _run(folder)
    assert out.ok, out.error
    (w,) = [w for w in _warnings(out) if "comes back" in w]
    assert "holding '101010061'" in w and f"line {len(data) - 1}" in w


def test_value_equal_to_missing_is_a_warning(tmp_path):
    """A numeric field equal to its declared missing value is kept as a number by
    τ-Argus (accepted): the warning now reaches the log."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    _edit_line(folder / "tau_testW.asc", 5, lambda s: s[:27] + b"9999999999" + s[37:])
    out = _run(folder)
    assert out.ok, out.error
    assert any("equal its declared missing value 9999999999" in w for w in _warnings(out))


@pytest.mark.parametrize(
    ("line", "field", "value", "fragment"),
    [
        (9, 3, b"-3", "expected a frequency ≥ 0 in FreqVar"),
        (9, 5, b"-5,00", "expected a cost ≥ 0 in Var2_Cost"),
        (1, 2, b"inf", "expected a finite number in field 3 (Var2), got 'inf'"),
        (9, 2, b"1e400", "expected a finite number in field 3 (Var2), got '1e400'"),
        (9, 2, b"-inf", "expected a finite number in field 3 (Var2), got '-inf'"),
    ],
)
def test_tab_bad_numbers_are_refused(tmp_path, line, field, value, fragment):
    """Refused (the spec makes a negative cost an error; a negative frequency, infinities and
    numbers beyond the float range are no counts or amounts), even on a total line that
    READTABLE 1T recomputes: file, line and column are named."""
    folder = _case(tmp_path, "tableinput", PP_JOB)

    def put(s: bytes) -> bytes:
        parts = s.split(b";")
        parts[field] = value
        return b";".join(parts)

    _edit_line(folder / "pp.tab", line, put)
    msg = _fails(_run(folder), "pp.tab", line, fragment)
    assert re.search(rf"pp.tab, line {line}, column \d+:", msg), msg


def test_empty_tab_file_is_refused(tmp_path):
    """Refused: a table file without lines has no cell to protect."""
    folder = _case(tmp_path, "tableinput", PP_JOB)
    (folder / "pp.tab").write_bytes(b"")
    _fails(_run(folder), "pp.tab", None, "has no lines")


def test_ckm_option_is_a_warning(tmp_path):
    """τ-Argus ≥ 4.2 accepts <CKM> (cell-key method): argusqt keeps it in the metadata but
    does not use it, and says so with the line."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    rda = folder / "tau_testW.rda"
    rda.write_text(rda.read_text().replace("Var3 38", '  <CKM> "T"\nVar3 38'))
    out = _run(folder)
    assert out.ok, out.error
    (w,) = [w for w in _warnings(out) if "<CKM>" in w]
    assert "tau_testW.rda, line 26" in w and "does not use it" in w


@pytest.mark.parametrize("text", ["", "// only a comment\n\n"])
def test_empty_batch_file_is_refused(tmp_path, text):
    """Refused: a batch file without commands does nothing, which must not look like success."""
    (tmp_path / "job.arb").write_text(text)
    out = run_batch(tmp_path / "job.arb")
    _fails(out, "job.arb", None, "no commands")


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (
            "OPT(1,-1)",
            "OPT parameter 1 (maxComputingTime, maximum time): expected a number > 0 and ≤ 525600 (min), got -1",
        ),
        ("OPT(1,0)", "expected a number > 0 and ≤ 525600 (min), got 0"),
        ("OPT(1,inf)", "expected a number > 0 and ≤ 525600 (min), got inf"),
        ("OPT(1,1e400)", "expected a number > 0 and ≤ 525600 (min), got 1e400"),
        (
            "MOD(1,-5,1,1,1)",
            "MOD parameter 1 (maxMinPerSubtable, maximum time per subtable): expected a number > 0",
        ),
        (
            "MOD(1,1,2,1,1)",
            "MOD parameter 2 (singSing, protect singletons): expected 0 or 1 (no or yes), got 2",
        ),
        (
            "RND(1,5,0,10,0,7)",
            "RND parameter 5 (stopRule, stop rule): expected 1 (first RAPID solution), 2 (first feasible), 3 (optimal), got 7",
        ),
    ],
)
def test_bad_time_limits_are_refused(tmp_path, call, fragment):
    """Refused: a negative, zero or infinite time limit (τ-Argus would run −60 s or hand
    infinity to the solver)."""
    folder = _case(tmp_path, "batch_ex2", EX2_JOB.replace("OPT(1,1)", call))
    _fails(_run(folder), "job.arb", 6, fragment)


def test_variable_twice_in_specifytable_is_refused(tmp_path):
    """Refused: "region""region" would build a diagonal table."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB.replace('"Size""Region"', '"Region""region"'))
    _fails(_run(folder), "job.arb", 3, "'region' is named twice")


# ---------------------------------------------------------------- unclear before
def test_separator_not_on_first_line(tmp_path):
    folder = _case(tmp_path, "batch_ex2", EX2_JOB)
    rda = folder / "metadata_ex2.rda"
    lines = rda.read_bytes().split(b"\r\n")
    lines.insert(2, lines.pop(0))
    rda.write_bytes(b"\r\n".join(lines))
    _fails(_run(folder), "metadata_ex2.rda", 3, "<SEPARATOR> must be the first line")


def test_garbage_hierarchy_names_the_hierarchy_file(tmp_path):
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    (folder / "region2.hrc").write_bytes(b"\x00\x01garbage\xff\n@@@\n")
    _fails(_run(folder), "region2.hrc", 1, "control character 0x00")


def test_hierarchy_damage_names_the_hierarchy_file(tmp_path):
    """A leaf removed from the .hrc: the data codes it held are named with their first data
    line and the hierarchy file."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    hrc = folder / "region2.hrc"
    hrc.write_text(hrc.read_text().replace("@ 3\n", ""))
    msg = _fails(_run(folder), "tau_testW.asc", None, "region2.hrc", "' 3'")
    assert re.search(r"tau_testW.asc, line \d+:", msg) and "first on line" in msg


def test_fixed_line_too_short_for_a_code(tmp_path):
    """The blank code of a short line is named with its data line, and the short-line
    warning is in the log."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    _edit_line(folder / "tau_testW.asc", 4, lambda s: s[:10])
    out = _run(folder)
    _fails(out, "tau_testW.asc", 4, "'  '", "line too short")
    assert any("first: line 4, 10 characters" in w for w in _warnings(out))


def test_lead_string_mismatch_gets_a_hint(tmp_path):
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    rda = folder / "tau_testW.rda"
    rda.write_text(rda.read_text().replace('<HIERLEADSTRING> "@"', '<HIERLEADSTRING> "#"'))
    _fails(_run(folder), "tau_testW.asc", None, "region2.hrc", "lead string '@'")


def test_overflowing_responses_are_refused_at_reading(tmp_path):
    """Two responses of 1e308 overflow their sum: refused at reading with file, line and
    column (was "internal error … SCIP" at protection)."""
    folder = _case(tmp_path, "batch_ex2", EX2_JOB)
    asc = folder / "microdata_ex2.asc"
    asc.write_bytes(asc.read_bytes().replace(b"77.38", b"1e308").replace(b"112.02", b"1e308"))
    msg = _fails(_run(folder), "microdata_ex2.asc", None, "too large to add up")
    assert re.search(r"microdata_ex2.asc, line \d+", msg)


@pytest.mark.parametrize("text", [b"inf", b"-inf", b"nan", b"1e400"])
def test_non_finite_fixed_width_numbers_are_refused(tmp_path, text):
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    _edit_line(folder / "tau_testW.asc", 8, lambda s: s[:27] + text.rjust(10) + s[37:])
    _fails(_run(folder), "tau_testW.asc", 8, "column 28", "finite number", text.decode())


@pytest.mark.parametrize("text", [b"inf", b"nan", b"1e400", b'77"38'])
def test_non_finite_free_format_numbers_are_refused(tmp_path, text):
    folder = _case(tmp_path, "batch_ex2", EX2_JOB)

    def put(s: bytes) -> bytes:
        parts = s.split(b",")
        parts[4] = text
        return b",".join(parts)

    _edit_line(folder / "microdata_ex2.asc", 5, put)
    _fails(_run(folder), "microdata_ex2.asc", 5, "column", "field 5 (variable num1)")


def test_tabular_overflow_is_refused(tmp_path):
    folder = _case(tmp_path, "batch_ex1", "")
    tab = folder / "tabdata_ex1.tab"
    tab.write_text(re.sub(r",\s*\d+,([SU]),", r",1e308,\1,", tab.read_text()))
    (folder / "job.arb").write_text(
        '<OPENTABLEDATA> "tabdata_ex1.tab"\n<OPENMETADATA> "metadata_ex1.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"freq"|""|""\n<SAFETYRULE> MAN(20)\n<READTABLE>\n'
    )
    _fails(_run(folder), "tabdata_ex1.tab", None, "too large to add up")


def test_writetable_to_a_folder_names_the_target(tmp_path):
    folder = _case(tmp_path, "batch_ex2", EX2_JOB.replace('"out.txt"', '"outdir"'))
    (folder / "outdir").mkdir()
    msg = _fails(_run(folder), "job.arb", 7, "outdir is a folder")
    assert ".tmp" not in msg


@pytest.mark.parametrize(("big", "explained"), [(b"1e300", True), (b"77.39", False)])
def test_solver_failure_on_extreme_values_is_explained(tmp_path, monkeypatch, big, explained):
    """One record of 1e300 among values near 100 is beyond what LP solvers resolve (the
    attacker LP fails): the failure is reported as a method error saying why and what to do,
    not "internal error"; a solver failure on ordinary values stays an internal error."""
    import argusqt.protection.run as methods

    def failing(*args, **kwargs):
        raise RuntimeError("attacker LP not solved: Unbounded")

    monkeypatch.setattr(methods, "run_method", failing)
    folder = _case(tmp_path, "batch_ex2", EX2_JOB)
    asc = folder / "microdata_ex2.asc"
    asc.write_bytes(asc.read_bytes().replace(b"77.38", big))
    out = _run(folder)
    msg = str(out.error)
    assert ("rescale the response" in msg) is explained, msg
    assert ("internal error" in msg) is not explained, msg


def test_cli_bad_input_prints_no_traceback(tmp_path):
    """`argusqt batch` on damaged input: exit 1, one clear line, no traceback."""
    folder = _case(tmp_path, "tableinput", PP_JOB)
    _edit_line(folder / "pp.tab", 1, lambda s: s.replace(b"16847646,84", b"inf", 1))
    proc = subprocess.run(
        [sys.executable, "-m", "argusqt", "batch", "job.arb"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])),
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "pp.tab, line 1, column" in proc.stderr


# ---------------------------------------------------------------- further campaign findings
def test_blank_holding_code_is_a_warning(tmp_path):
    """A blank holding code is read as a code, as τ-Argus does (accepted); consecutive
    blank ones would be one holding, so the count is logged."""
    folder = _case(tmp_path, "enterprise", ENT_JOB)
    _edit_line(folder / "example_enterprise.asc", 5, lambda s: b" " * 9 + s[9:])
    out = _run(folder)
    assert out.ok, out.error
    assert any("1 record(s) have a blank holding code" in w for w in _warnings(out))


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda s: s[:97] + b" " + s[97:], "differ in length from the 99 characters"),
        (lambda s: s[:97] + s[98:], "end before column 99"),
        (lambda s: b"", "1 empty line(s) skipped (first: line 21)"),
    ],
)
def test_shifted_or_emptied_fixed_line_is_a_warning(tmp_path, edit, fragment):
    """A character inserted or deleted shifts the fields after it into other valid numbers;
    an emptied line loses a record. τ-Argus reads both (accepted): the line is named."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    _edit_line(folder / "tau_testW.asc", 21, edit)
    out = _run(folder)
    assert out.ok, out.error
    assert any(fragment in w and "line 21" in w for w in _warnings(out)), _warnings(out)


def test_field_too_narrow_for_its_numbers_is_a_warning(tmp_path):
    """Var2 declared one column wide: every number runs on into undeclared columns. The
    metadata is legal (accepted) but the warning names the variable and the first line."""
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    rda = folder / "tau_testW.rda"
    rda.write_text(rda.read_text().replace("Var2 28  10 9999999999", "Var2 37  1"))
    out = _run(folder)
    assert out.ok, out.error
    (w,) = [w for w in _warnings(out) if "seems to continue" in w]
    assert "Var2 (columns 37-37)" in w and "before its field" in w and "first: line 1" in w


def test_unknown_variable_points_at_the_misspelt_definition(tmp_path):
    folder = _case(tmp_path, "batch_ex2", EX2_JOB)
    rda = folder / "metadata_ex2.rda"
    rda.write_bytes(rda.read_bytes().replace(b"region 1", b"regoin 1"))
    _fails(_run(folder), "metadata_ex2.rda", 2, "did you mean 'regoin'")


def test_control_characters_in_text_files_are_refused(tmp_path):
    folder = _case(tmp_path, "tau_testW", TESTW_JOB)
    _edit_line(folder / "tau_testW.rda", 3, lambda s: s[:4] + b"\x1b" + s[5:])
    _fails(_run(folder), "tau_testW.rda", 3, "column 5", "control character 0x1B")
