"""Every HiGHS instance of argusqt, silent: HiGHS prints its banner ("Running HiGHS …
Copyright …") to stdout from its constructor, before any option can be set, once per process.

The first instance is therefore built with the process's stdout (file descriptor 1) pointed
at the null device, C's stdio buffer flushed before it is put back; later instances print
nothing, and every one gets `output_flag` off. The one place a `highspy.Highs` is created.

Every instance runs on one thread (the same LPs, the same answers). HiGHS's scheduler is
one per process and keeps the thread count of the first instance that ran: when another
program in the process ran HiGHS with more threads first, ours would fail every LP, so the
first instance checks it once and says so (SchedulerTaken); an LP that ends in error checks
again (another model may have taken the scheduler between two argusqt calls).

Before the first instance, HiGHS's per-run count of the machine's cores (a log line's
number, ≈ 36 µs of every run) is made a count taken once (highs_core_count, D-83).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import highspy

from argusqt.errors import MethodError
from argusqt.protection.lp.highs_core_count import count_cores_once

_lock = threading.Lock()
_banner_swallowed = False
_scheduler_checked = False


class SchedulerTaken(MethodError):
    """HiGHS already runs in this process with another thread count than argusqt's one."""


def _check_scheduler() -> None:
    """Run one empty one-thread LP: HiGHS refuses it when its process-wide scheduler was
    started with more threads by someone else (an API user's own highspy model)."""
    global _scheduler_checked
    probe = highspy.Highs()
    probe.setOptionValue("output_flag", False)
    probe.setOptionValue("threads", 1)
    probe.addVar(0.0, 1.0)
    if probe.run() == highspy.HighsStatus.kError:
        raise SchedulerTaken(
            "HiGHS, the LP solver, already runs in this Python process with more than one "
            "thread (started by another program or model in it); argusqt solves its "
            "LPs on one thread so that the same input gives the same output. Run argusqt in "
            "a process of its own, or call highspy.Highs.resetGlobalScheduler(True) once "
            "that other model is solved."
        )
    _scheduler_checked = True


def scheduler_still_ours() -> None:
    """After an LP ended in error: SchedulerTaken when another model took HiGHS's scheduler
    since the first check, so the error is not blamed on the table (review rev17, R3)."""
    with _lock:
        _check_scheduler()


def _flush_c_stdio() -> None:
    """Push what C's stdio buffered (the banner) to the descriptor it is meant for now."""
    try:
        # Windows has no CDLL(None) (TypeError): its C runtime is ucrtbase
        libc = ctypes.CDLL("ucrtbase") if sys.platform == "win32" else ctypes.CDLL(None)
        libc.fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library to ask: nothing to flush
        pass


def quiet_highs() -> highspy.Highs:
    """A new one-thread HiGHS instance with its console output off, banner included."""
    global _banner_swallowed
    with _lock:
        if not _banner_swallowed:
            count_cores_once()
        if _banner_swallowed:
            h = highspy.Highs()
        else:
            try:
                sys.stdout.flush()
                saved = os.dup(1)
            # no stdout (pythonw, the bundle's Windows window program: sys.stdout is None)
            # or no descriptor behind it: nothing to silence
            except (OSError, ValueError, AttributeError):
                saved = None
            if saved is None:
                h = highspy.Highs()
            else:
                null = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(null, 1)
                    h = highspy.Highs()
                    _flush_c_stdio()
                finally:
                    os.dup2(saved, 1)
                    os.close(saved)
                    os.close(null)
            _banner_swallowed = True
        if not _scheduler_checked:
            _check_scheduler()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    return h
