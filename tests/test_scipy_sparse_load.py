"""model.scipy_sparse.load (D-78): scipy.sparse imported mid-run must reach every thread whole,
and its freeze belongs to the batch command alone (found in review, 2026-11-28)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

RACE = """
import sys, threading
from argusqt.model import scipy_sparse
from argusqt.model.scipy_sparse import lazy as sp
assert "scipy.sparse" not in sys.modules
t = threading.Thread(target=scipy_sparse.load)
t.start()
while "scipy.sparse" not in sys.modules:
    pass
print(type(sp.csr_matrix((2, 2))).__name__)
t.join()
"""

HOST_FREEZE = """
import gc, weakref
gc.freeze()  # a host process froze its own start-up objects
class Request: pass
r = Request(); r.self = r
w = weakref.ref(r)
from argusqt.model import scipy_sparse
scipy_sparse.load()
del r; gc.collect()
print(w() is None)
"""


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_thread_reading_scipy_sparse_while_another_imports_it_gets_the_whole_module():
    for _ in range(3):
        assert _run(RACE) == "csr_matrix"


def test_the_first_load_leaves_a_host_processs_collector_alone():
    assert _run(HOST_FREEZE) == "True"
