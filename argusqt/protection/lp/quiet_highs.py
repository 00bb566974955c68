"""Every HiGHS instance of argusqt, silent: HiGHS prints its banner ("Running HiGHS …
Copyright …") to stdout from its constructor, before any option can be set, once per process.

The first instance is therefore built with the process's stdout (file descriptor 1) pointed
at the null device, C's stdio buffer flushed before it is put back; later instances print
nothing, and every one gets `output_flag` off. The one place a `highspy.Highs` is created.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import highspy

_lock = threading.Lock()
_banner_swallowed = False


def _flush_c_stdio() -> None:
    """Push what C's stdio buffered (the banner) to the descriptor it is meant for now."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library to ask (Windows without msvcrt here)
        pass


def quiet_highs() -> highspy.Highs:
    """A new HiGHS instance with its console output off, banner included."""
    global _banner_swallowed
    with _lock:
        if _banner_swallowed:
            h = highspy.Highs()
        else:
            try:
                sys.stdout.flush()
                saved = os.dup(1)
            except (OSError, ValueError):  # no stdout descriptor (pythonw): nothing to silence
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
    h.setOptionValue("output_flag", False)
    return h
