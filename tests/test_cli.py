"""The `argusqt` console command: --version, `batch` exit codes and stderr format."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from confidential_helpers import body_lines

from argusqt import __version__
from argusqt.cli import main

REPO = Path(__file__).resolve().parents[1]


def _python_m(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "argusqt", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_version_via_python_m(tmp_path):
    res = _python_m("--version", cwd=tmp_path)
    assert res.returncode == 0
    assert res.stdout.strip() == f"argusqt {__version__}"


def test_batch_ok_exit_zero(shared_data, tmp_path, capsys):
    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    arb = folder / "batch_ex2.arb"
    arb.write_text("".join(ln for ln in arb.read_text().splitlines(True) if "SUPPRESS" not in ln))
    log = tmp_path / "book.log"
    code = main(["batch", str(arb), str(log), str(tmp_path / "tmp")])
    assert code == 0
    assert body_lines(folder / "tabout_ex2.txt")[6] == '"A","female",189.40,3'  # AS+: banner
    assert "Batch file batch_ex2.arb finished" in log.read_text()
    assert "the logbook given on the command line is kept" in log.read_text()
    assert not (folder / "arguslog_ex2.log").exists()
    assert "written:" in capsys.readouterr().out


def test_batch_error_exit_one_with_file_and_line(tmp_path):
    arb = tmp_path / "bad.arb"
    arb.write_text('// first\n<OPENMICRODATA> "missing.asc"\n')
    res = _python_m("batch", str(arb), cwd=tmp_path)
    assert res.returncode == 1
    first = res.stderr.strip().splitlines()[0]
    assert first.startswith(f"{arb}, line 2: <OPENMICRODATA>")
    assert "missing.asc" in first
    assert "Traceback" not in res.stderr


def test_batch_syntax_error_in_process(tmp_path, capsys):
    arb = tmp_path / "bad.arb"
    arb.write_text("<READMICRODATA>\n<WHATEVER>\n")
    assert main(["batch", str(arb)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{arb}, line 2: unknown command <WHATEVER>")


def test_an_in_process_batch_leaves_the_garbage_collector_as_it_was(tmp_path):
    """The command freezes its modules out of the collector's passes (gc.freeze) only when
    the process ends with the run (its own command line); a caller passing argv goes on with
    nothing frozen."""
    import gc

    arb = tmp_path / "empty.arb"
    arb.write_text("<SOLVER> FREE\n")
    before = gc.get_freeze_count()
    assert main(["batch", str(arb), str(tmp_path / "log.txt")]) == 0
    assert gc.get_freeze_count() == before


def test_batch_without_logbook_prints_one_line_per_step(shared_data, tmp_path, capsys):
    """No <LOGBOOK>, no logbook argument: the log lines (one summary per step) go to stdout,
    on success and before a failure's message on stderr."""
    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    arb = folder / "plain.arb"
    arb.write_text(
        '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n<SAFETYRULE> FREQ(5,20)|P(20,5)\n'
        '<READMICRODATA>\n<SUPPRESS> MOD(1)\n<WRITETABLE> (1, 3, AS+, "t.txt")\n'
    )
    assert main(["batch", str(arb)]) == 0
    out = capsys.readouterr().out
    for k in range(1, 8):
        assert f" : Batch line {k}: <" in out
    assert "Batch file plain.arb finished" in out
    assert f"written: {folder / 't.txt'} (CONFIDENTIAL, not for publication)" in out
    arb.write_text(arb.read_text().replace("MOD(1)", "MOD(1)\n<RECODE> 1, nosuch, 1"))
    assert main(["batch", str(arb)]) == 1
    captured = capsys.readouterr()
    assert " : Batch line 6: <SUPPRESS> MOD(1)" in captured.out
    assert "stopped with an error" in captured.out
    assert f"{arb}, line 7: <RECODE>" in captured.err


def test_the_command_starts_numpy_with_one_blas_thread_unless_told_otherwise():
    """`argusqt` (our own process) asks OpenBLAS for one thread before numpy loads: no pool
    to start, and dot products summed in the same order on every machine (D-57); a user's
    own setting stays."""
    from argusqt.cli import one_blas_thread

    env = {"OPENBLAS_NUM_THREADS": "4"}
    one_blas_thread(env)
    assert env == {"OPENBLAS_NUM_THREADS": "4"}
    probe = (
        "import os, sys; from argusqt.cli import main; sys.argv = ['argusqt', '--version']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "import numpy; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    )
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for given, expected in ((None, "1"), ("3", "3")):
        env = dict(clean, PYTHONPATH=str(REPO))
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        out = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.split()[-1] == expected


END_PROBE = """
import atexit, sys
atexit.register(lambda: print("exit functions ran"))
from argusqt.cli import main
sys.argv = ["argusqt", "batch", %r]
main()
print("not reached: the command ends the process")
"""


def test_the_command_ends_without_teardown_but_with_its_streams_and_exit_functions(
    shared_data, tmp_path
):
    """`argusqt batch` ends its process from main (no module teardown, D-57): its exit code,
    everything it printed (piped, so buffered), its files and the exit functions are kept."""
    folder = tmp_path / "ex1"
    shutil.copytree(shared_data / "batch_ex1", folder)
    bad = tmp_path / "bad.arb"
    bad.write_text("<READMICRODATA>\n<WHATEVER>\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for arb, code in ((folder / "batch_ex1.arb", 0), (bad, 1)):
        res = subprocess.run(
            [sys.executable, "-c", END_PROBE % str(arb)],
            cwd=arb.parent, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert res.returncode == code, res.stderr
        out = res.stdout.splitlines()
        assert out[-1] == "exit functions ran" and "not reached" not in res.stdout
        if code == 0:
            assert any(
                line.startswith("written: ")
                and line.endswith("tabout_ex1.txt (CONFIDENTIAL, not for publication)")
                for line in out
            )
            assert body_lines(folder / "tabout_ex1.txt")
            assert "Batch file batch_ex1.arb finished" in (folder / "arguslog_ex1.log").read_text()
        else:
            assert res.stderr.startswith(f"{bad}, line 2: unknown command <WHATEVER>")


FLAGS_PROBE = """
import atexit, sys
atexit.register(lambda: print("dlopen flags", sys.getdlopenflags()))
from argusqt.cli import main
sys.argv = ["argusqt", "batch", %r, "flags.log"]
main()
"""


def test_the_batch_command_binds_c_libraries_lazily_a_caller_keeps_its_flags(shared_data, tmp_path):
    """`argusqt batch` (its own process) loads numpy's, HiGHS's and SCIP's libraries with
    lazy binding (D-92) and writes the same table; `main(argv)` leaves a caller's flags."""
    if not hasattr(sys, "setdlopenflags") or not hasattr(os, "RTLD_LAZY"):
        return  # Windows: nothing to set
    tables = []
    for own in (True, False):
        folder = tmp_path / f"ex1-{own}"
        shutil.copytree(shared_data / "batch_ex1", folder)
        arb = folder / "batch_ex1.arb"
        if own:
            env = dict(os.environ, PYTHONPATH=str(REPO))
            res = subprocess.run(
                [sys.executable, "-c", FLAGS_PROBE % str(arb)],
                cwd=folder, env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert res.returncode == 0, res.stderr
            flags = int(res.stdout.split("dlopen flags")[-1])
            assert flags & os.RTLD_LAZY and not flags & os.RTLD_NOW
        else:
            before = sys.getdlopenflags()
            assert main(["batch", str(arb), str(folder / "flags.log")]) == 0
            assert sys.getdlopenflags() == before
        tables.append(body_lines(folder / "tabout_ex1.txt"))
    assert tables[0] == tables[1]


def test_a_plain_batch_command_line_gets_the_parsers_reading_without_the_parser():
    """`batch ARB [LOGBOOK [TEMPDIR]]` skips argparse (D-73): same three values as the parser;
    anything else (options, `--`, `-`, too few or too many) goes to the parser."""
    from argusqt.cli import _parser, _plain_batch

    plain = [
        ["batch", "a.arb"],
        ["batch", "a.arb", "log.txt"],
        ["batch", "a b.arb", "log.txt", "tmp"],
        ["batch", ""],
        ["batch", "batch", "gui"],
    ]
    for argv in plain:
        args = _parser().parse_args(argv)
        assert _plain_batch(argv) == (args.arb, args.logbook, args.tempdir), argv
        assert args.report is False
    for argv in (
        ["batch"],
        ["batch", "a.arb", "--report"],
        ["batch", "--", "a.arb"],
        ["batch", "-", "log.txt"],
        ["batch", "a.arb", "-1"],
        ["batch", "a", "b", "c", "d"],
        ["audit", "a.arb", "out.txt"],
        ["tidy", "."],
        ["--version"],
        [],
    ):
        assert _plain_batch(argv) is None, argv
