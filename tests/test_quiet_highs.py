"""HiGHS's banner ("Running HiGHS … Copyright") never reaches stdout: one helper builds every
instance (tests/test_quiet_highs.py checks the source and a real run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_highs_instance_comes_from_the_helper():
    makers = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "argusqt").rglob("*.py")
        if "highspy.Highs(" in p.read_text(encoding="utf-8")
    ]
    assert makers == ["argusqt/protection/lp/quiet_highs.py"]


def test_no_banner_on_stdout_from_a_protection_run(shared_data, tmp_path):
    """A fresh process (the banner comes once per process) that protects with the methods
    using HiGHS prints only what it prints itself, with stdout a pipe (C stdio buffered)."""
    code = (
        "import os, sys; sys.path.insert(0, os.environ['AQT_TESTS'])\n"
        "from session_helpers import ex2_session\n"
        "from pathlib import Path\n"
        "s = ex2_session(Path(os.environ['AQT_EX2']))\n"
        "print('before')\n"
        "s.protect(1, 'MOD', {})\n"
        "s.protect(1, 'IP', {})\n"
        "print('after')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_")}
    env |= {"AQT_TESTS": str(ROOT / "tests"), "AQT_EX2": str(shared_data / "batch_ex2")}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "before\nafter\n"
    assert "HiGHS" not in proc.stderr


def _fresh_process(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a new interpreter (the banner is swallowed once per process)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_a_process_without_stdout_gets_its_highs():
    """pythonw and the bundle's Windows window program (argusqt.exe) have sys.stdout None:
    the first HiGHS is built all the same (it crashed on `sys.stdout.flush()`)."""
    proc = _fresh_process(
        "import sys\n"
        "sys.stdout = None\n"
        "from argusqt.protection.lp.quiet_highs import quiet_highs\n"
        "h = quiet_highs()\n"
        "assert type(h).__name__ == 'Highs', type(h)\n"
        "sys.stderr.write('built')\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.endswith("built")


def test_no_c_library_to_flush_is_no_error():
    """Where the C library cannot be opened as asked (Windows: `CDLL(None)` is a TypeError),
    the first HiGHS is still built silently."""
    proc = _fresh_process(
        "import ctypes\n"
        "def refuse(*args, **kwargs):\n"
        "    raise TypeError(\"argument of type 'NoneType' is not iterable\")\n"
        "ctypes.CDLL = refuse\n"
        "from argusqt.protection.lp.quiet_highs import quiet_highs\n"
        "quiet_highs()\n"
        "print('built')\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("built\n")


#: a fresh process's table whose primary an LP recomputes (alone in its row)
_TABLE = (
    "import sys; sys.path.insert(0, 'tests')\n"
    "import highspy\n"
    "from protect_helpers import problem_2d\n"
    "from argusqt.protection.audit.outsider import audit\n"
    "from argusqt.protection.lp.quiet_highs import SchedulerTaken\n"
    "p = problem_2d([[5, 7], [9, 4]], [(0, 0)], 0.3)\n"
    "sup = p.primary.copy()  # alone in its row: recomputed, an LP says so\n"
)
#: an API user's own model on two threads, then argusqt's audit, then again after a reset
_USERS_MODEL_THEN_AUDIT = (
    "own = highspy.Highs(); own.setOptionValue('output_flag', False)\n"
    "own.setOptionValue('threads', 2); own.addVar(0.0, 1.0); own.run()\n"
    "try:\n"
    "    audit(p, sup)\n"
    "    print('no error')\n"
    "except SchedulerTaken as e:\n"
    "    print('named:', 'resetGlobalScheduler' in str(e))\n"
    "highspy.Highs.resetGlobalScheduler(True)\n"
    "print('after reset:', audit(p, sup).ok)\n"
)


def test_a_highs_started_with_more_threads_before_argusqt_is_named_not_blamed_on_the_table():
    """HiGHS keeps the thread count of the first model run in a process: an API user's own
    multi-threaded highspy model first made every argusqt LP fail, reported as a table "not
    additive". The audit now names the cause, and works once the user resets the scheduler."""
    proc = _fresh_process(_TABLE + _USERS_MODEL_THEN_AUDIT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ["named: True", "after reset: False"]


def test_a_highs_model_run_between_two_argusqt_audits_is_named_not_blamed_on_the_table():
    """The scheduler checked once at the first instance missed a user's own model solved
    between two argusqt calls: the next audit said the table was "not additive" (review
    rev17, R3). An LP that ends in error now checks again and names the cause."""
    proc = _fresh_process(
        _TABLE
        + "print('first:', audit(p, sup).ok)\n"
        + "highspy.Highs.resetGlobalScheduler(True)  # the user's model starts it anew\n"
        + _USERS_MODEL_THEN_AUDIT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-3:] == ["first: False", "named: True", "after reset: False"]
