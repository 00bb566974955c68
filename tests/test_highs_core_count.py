"""HiGHS's core count taken once (D-83): the count is HiGHS's own, the LPs' answers are
bit for bit those of HiGHS counting per run, and the switch and the checks leave HiGHS
alone."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from argusqt.protection.lp import highs_core_count as hcc
from argusqt.protection.lp.quiet_highs import quiet_highs

ROOT = Path(__file__).resolve().parents[1]
PATCHABLE = sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")

#: re-solves of one 2-D table's attacker LP (4×4 cells and totals, ±each cell in turn);
#: prints every run's status, objective and primal/dual solution as exact hex floats
SCRIPT = r"""
import json, sys
import numpy as np, scipy.sparse as sp, highspy
from argusqt.protection.lp import highs_core_count as hcc
from argusqt.protection.lp.components import new_highs, pass_model, use_primal
r = c = 4
rng = np.random.default_rng(7)
inner = rng.integers(1, 50, size=(r, c)).astype(float)
full = np.zeros((r + 1, c + 1)); full[:r, :c] = inner
full[r, :c] = inner.sum(0); full[:r, c] = inner.sum(1); full[r, c] = inner.sum()
idx = np.arange(full.size).reshape(r + 1, c + 1)
rows, cols, vals, k = [], [], [], 0
for i in range(r + 1):
    rows += [k] * (c + 1); cols += list(idx[i]); vals += [1.0] * c + [-1.0]; k += 1
for j in range(c + 1):
    rows += [k] * (r + 1); cols += list(idx[:, j]); vals += [1.0] * r + [-1.0]; k += 1
a = sp.csc_matrix((vals, (rows, cols)), shape=(k, full.size))
x = full.ravel()
supp = rng.random(x.size) < 0.4
lo, hi = np.where(supp, 0.0, x), np.where(supp, 3 * x + 5, x)
h = new_highs(primal=False, presolve=False)
b = a @ x
pass_model(h, a.indptr, a.indices, a.data, k, np.zeros(x.size), lo, hi, b, b)
out = []
last = -1
for step in range(2 * x.size + 1):
    h.run()
    if step == 0:
        use_primal(h)
    sol = h.getSolution()
    out.append([int(h.getModelStatus()), float(h.getObjectiveValue()).hex(),
                [v.hex() for v in sol.col_value], [v.hex() for v in sol.row_dual]])
    j, sense = step // 2, (1.0 if step % 2 else -1.0)
    if j < x.size:
        if last >= 0 and last != j:
            h.changeColCost(last, 0.0)
        h.changeColCost(j, sense)
        last = j
print(json.dumps({"cached": hcc.core_count_cached(), "runs": out}))
"""


def _run_script(per_run: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(hcc.ENV, None)
    if per_run:
        env[hcc.ENV] = "per-run"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not PATCHABLE, reason="the stub exists on Linux x86-64 only")
def test_count_is_highs_own_and_the_slot_leads_to_the_stub() -> None:
    quiet_highs()  # the first instance counts once
    import highspy._core as core

    count = hcc.core_count_cached()
    assert count is not None and count > 0
    lib = ctypes.CDLL(core.__file__)
    real = ctypes.cast(getattr(lib, hcc.SYMBOL.decode()), ctypes.c_void_p).value
    assert count == ctypes.CFUNCTYPE(ctypes.c_uint)(real)()  # HiGHS's own count, by dlsym
    slot = hcc._elf_slot(core.__file__, hcc._R_X86_64_JUMP_SLOT)
    assert slot is not None and real is not None
    got = ctypes.c_void_p.from_address(real - slot.value + slot.got).value
    assert got != real and got in hcc._keep
    assert ctypes.CFUNCTYPE(ctypes.c_uint)(got)() == count
    assert hcc.count_cores_once() == count  # idempotent


@pytest.mark.skipif(not PATCHABLE, reason="the stub exists on Linux x86-64 only")
def test_same_answers_bit_for_bit_as_highs_counting_per_run() -> None:
    stub = _run_script(per_run=False)
    own = _run_script(per_run=True)
    assert stub["cached"] is not None and own["cached"] is None
    assert len(stub["runs"]) == 51
    assert stub["runs"] == own["runs"]
    assert {r[0] for r in stub["runs"]} == {7}  # every run optimal (kOptimal)


def test_elf_reader_refuses_what_it_does_not_know(tmp_path: Path) -> None:
    junk = tmp_path / "not-elf.so"
    junk.write_bytes(b"MZ" + b"\0" * 200)
    assert hcc._elf_slot(str(junk), hcc._R_X86_64_JUMP_SLOT) is None
    if sys.platform.startswith("linux"):  # an ELF without HiGHS's symbol
        assert hcc._elf_slot(os.path.realpath(sys.executable), hcc._R_X86_64_JUMP_SLOT) is None
