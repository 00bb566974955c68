"""Extreme and odd inputs give the right message first and only (issue 23 item 13): huge
values, absurd time limits, a 5 MB code echoed, write errors naming the target, a session
file's version of the wrong type."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from session_helpers import ex2_session

from argusqt.batch.runner import run_batch
from argusqt.errors import ArgusError, MethodError, clip_echo
from argusqt.io.atomic import atomic_write_set, atomic_write_text
from argusqt.sessionfile import SessionFileError, load_session, save_session

HEAD = (
    '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
    '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n<SAFETYRULE> FREQ(5,20)|P(20,5)\n'
    "<READMICRODATA>\n"
)


def _set_responses(ex2: Path, value: str, rows=(5, 50, 90)) -> None:
    data = ex2 / "microdata_ex2.asc"
    lines = data.read_bytes().split(b"\n")
    for i in rows:
        fields = lines[i].split(b",")
        fields[4] = value.encode()
        lines[i] = b",".join(fields)
    data.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("method", ["OPT(1,1)", "MOD(1)", "GH(1,1)"])
def test_huge_responses_are_refused_before_any_solver(ex2, capfd, method):
    _set_responses(ex2, "1e300")
    (ex2 / "x.arb").write_text(HEAD + f"<SUPPRESS> {method}\n")
    out = run_batch(ex2 / "x.arb")
    assert not out.ok and out.error is not None and out.error.line == 6
    message = str(out.error)
    assert "beyond 1e+15" in message and "internal error" not in message
    assert "The largest num1 in microdata_ex2.asc is 1e+300 (line 6)" in message
    printed = capfd.readouterr()
    assert "Traceback" not in printed.err + printed.out
    assert "ERROR" not in printed.err + printed.out  # no SCIP error lines


def test_absurd_time_limit_is_a_parameter_error(ex2):
    (ex2 / "x.arb").write_text(HEAD + "<SUPPRESS> OPT(1,1e300)\n")
    out = run_batch(ex2 / "x.arb")
    assert not out.ok
    message = str(out.error)
    assert "maximum time" in message and "525600" in message and "1e300" in message
    assert "internal error" not in message


def test_a_5_mb_code_is_cut_in_messages_and_the_logbook(ex2):
    data = ex2 / "microdata_ex2.asc"
    lines = data.read_bytes().split(b"\n")
    fields = lines[5].split(b",")
    fields[0] = b"Q" * 5_000_000
    lines[5] = b",".join(fields)
    data.write_bytes(b"\n".join(lines))
    (ex2 / "x.arb").write_text(HEAD)
    out = run_batch(ex2 / "x.arb", logbook=ex2 / "log.txt")
    assert not out.ok
    assert len(str(out.error)) < 2000 and "characters cut" in str(out.error)
    assert "line 6" in str(out.error)  # still says where
    assert (ex2 / "log.txt").stat().st_size < 20_000
    assert max(len(e.message) for e in out.session.log) < 2000


def test_clip_echo_keeps_short_text_and_cuts_long_runs():
    assert clip_echo("code 'A' on line 3") == "code 'A' on line 3"
    cut = clip_echo("code '" + "x" * 10_000 + "' here")
    assert cut.startswith("code 'xxx") and cut.endswith("' here")
    assert "[9,902 characters cut]" in cut and len(cut) < 200
    assert len(clip_echo("ab " * 100_000)) < 20_100
    assert ArgusError("x" * 1000).message != "x" * 1000


def _fail_write(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_write_errors_name_the_target_not_the_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "pub.csv"
    monkeypatch.setattr(os, "write", _fail_write)
    with pytest.raises(OSError) as info:
        atomic_write_text(target, "a,b\n")
    assert info.value.filename == str(target) and "No space left on device" in str(info.value)
    with pytest.raises(OSError) as info:
        atomic_write_set({target: b"x", tmp_path / "pub.rda": b"y"})
    assert info.value.filename == str(target)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []  # no temp file left either


def test_batch_write_error_names_the_output(ex2, monkeypatch):
    (ex2 / "x.arb").write_text(HEAD + '<WRITETABLE> (1, 3, AS+, "t.txt")\n')
    real_write = os.write

    def full_disk(fd, data):
        if b'"Total"' in bytes(data[:200]):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    out = run_batch(ex2 / "x.arb")
    assert not out.ok
    message = str(out.error)
    assert f"{ex2 / 't.txt'}: cannot write the file: No space left on device" in message
    assert ".aqt-" not in message


@pytest.mark.parametrize(
    "version, words",
    [("2", "the text '2' (write 2 without quotes)"), (2.5, "got 2.5"), (None, "got None")],
)
def test_session_version_of_the_wrong_type(ex2, version, words):
    saved = save_session(ex2_session(ex2), ex2 / "s.aqs")
    doc = json.loads(saved.read_text(encoding="utf-8"))
    doc["version"] = version
    saved.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SessionFileError) as info:
        load_session(saved)
    assert '"version" must be a whole number' in str(info.value) and words in str(info.value)


def test_huge_values_refused_through_the_session(ex2):
    _set_responses(ex2, "3e16", rows=(7,))
    s = ex2_session(ex2)
    with pytest.raises(MethodError, match="beyond 1e"):
        s.protect(1, "MOD", {})
