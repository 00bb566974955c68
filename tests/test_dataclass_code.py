"""The `argusqt` command's dataclasses get their methods from stored code (D-68): the same code
objects as compiling them gives, the same classes, the real `exec` for anything else."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from shared_paths import copy_case

from argusqt.startup import _py311, dataclass_code
from argusqt.startup.dataclass_code import FACTORY, as_exec_makes_it, compiled_once

ROOT = Path(__file__).resolve().parents[1]


def _same_code(ours: types.CodeType, theirs: types.CodeType) -> None:
    """Equal code objects (bytecode, constants, names, lines), with equal file names and
    positions, nested code too."""
    assert ours == theirs, (ours, theirs)
    assert ours.co_filename == theirs.co_filename
    assert ours.co_qualname == theirs.co_qualname
    assert list(ours.co_positions()) == list(theirs.co_positions())
    nested = [(a, b) for a, b in zip(ours.co_consts, theirs.co_consts, strict=True)]
    for a, b in nested:
        if isinstance(a, types.CodeType):
            _same_code(a, b)


def test_every_stored_text_is_the_code_compiling_it_gives():
    assert len(_py311.CODE) > 100
    for text, stored in _py311.CODE.items():
        module = compile(text, "<string>", "exec", dont_inherit=True)
        assert module.co_names == (FACTORY,), text
        (compiled,) = [c for c in module.co_consts if isinstance(c, types.CodeType)]
        _same_code(as_exec_makes_it(stored, stored.co_firstlineno), compiled)


def _a_class(*, frozen: bool) -> type:
    """A class with defaults, a factory and a frozen variant: text, locals and globals vary."""

    @dataclasses.dataclass(frozen=frozen)
    class Cell:
        code: str
        value: float = 0.0
        parts: list[int] = dataclasses.field(default_factory=list)

    return Cell


def _methods(cls: type) -> dict[str, types.FunctionType]:
    names = ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__")
    out = {}
    for name in names:
        fn = vars(cls).get(name)
        fn = getattr(fn, "__wrapped__", fn)  # __repr__ is wrapped against recursion
        if isinstance(fn, types.FunctionType):
            out[name] = fn
    return out


@pytest.mark.parametrize("frozen", [False, True])
def test_a_class_made_inside_is_the_class_made_outside(frozen, monkeypatch):
    """With the class's texts stored (recorded first), the methods are made from the stored
    code and equal the compiled ones: code, name, module, globals, defaults, annotations."""
    monkeypatch.setattr(dataclass_code, "RECORD", [])
    with compiled_once():
        _a_class(frozen=frozen)
    stored = {}
    for text in dataclass_code.RECORD or []:  # as in the generated file: at line 3
        stored[text] = compile(f"\n\n{text}", "gen.py", "exec", dont_inherit=True).co_consts[0]
    monkeypatch.setattr(dataclass_code, "RECORD", None)
    monkeypatch.setattr(dataclass_code, "_table", stored)
    monkeypatch.setattr(dataclass_code, "_ready", {})
    made = []
    real = dataclass_code._code_for
    monkeypatch.setattr(dataclass_code, "_code_for", lambda text: made.append(text) or real(text))
    with compiled_once():
        inside = _a_class(frozen=frozen)
    assert "exec" not in vars(dataclasses)  # the stdlib's own again
    outside = _a_class(frozen=frozen)
    assert len(made) == len(stored) >= 3 and dataclass_code._ready.keys() == stored.keys()
    ours, theirs = _methods(inside), _methods(outside)
    assert ours.keys() == theirs.keys()
    for name, fn in ours.items():
        other = theirs[name]
        _same_code(fn.__code__, other.__code__)
        assert fn.__qualname__ == other.__qualname__ and fn.__module__ == other.__module__
        assert fn.__globals__ is other.__globals__
        assert fn.__defaults__ == other.__defaults__
        assert fn.__annotations__ == other.__annotations__
    a, b = inside("x", 2.0), outside("x", 2.0)
    assert repr(a) == repr(b) and a == inside("x", 2.0) and a.parts == b.parts == []


def test_other_texts_and_calls_go_to_the_real_exec(monkeypatch):
    monkeypatch.setattr(dataclass_code, "_table", {})
    monkeypatch.setattr(dataclass_code, "_ready", {})
    with compiled_once():
        cls = _a_class(frozen=True)  # nothing stored: compiled as usual
        with compiled_once():  # nested: leaves the outer one alone
            assert vars(dataclasses)["exec"] is dataclass_code._exec
        assert vars(dataclasses)["exec"] is dataclass_code._exec
    assert "exec" not in vars(dataclasses)
    assert cls("a") == cls("a")
    outside = _methods(_a_class(frozen=True))
    for name, fn in _methods(cls).items():  # compiled without this module's __future__ flags
        _same_code(fn.__code__, outside[name].__code__)
    ns: dict = {}
    dataclass_code._exec("x = 1", {}, ns)  # globals without builtins: the real exec
    assert ns == {"x": 1}


RUN_PROBE = """
import atexit, json, sys
from argusqt.startup import dataclass_code as d
count = {"stored": 0, "compiled": 0}
real = d._code_for
def code_for(text):
    code = real(text)
    count["stored" if code is not None else "compiled"] += 1
    return code
d._code_for = code_for
sys.argv = ["argusqt", "batch", "batch_ex1.arb", "log.txt"]
atexit.register(lambda: print(json.dumps(count)))
from argusqt.cli import main
main()
"""


@pytest.mark.skipif(sys.version_info[:2] != _py311.PYTHON, reason="texts of another Python")
def test_the_command_makes_batch_ex1s_classes_from_stored_code(tmp_path):
    """The table is up to date: a class changed on batch_ex1's path and not regenerated
    (`scripts/gen_dataclass_code.py`) costs its compile at every start."""
    case = copy_case("batch_ex1", tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", RUN_PROBE],
        cwd=case,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    count = json.loads(out.stdout.strip().splitlines()[-1])
    assert count["stored"] > 250, count
    assert count["compiled"] <= 10, f"{count}: rerun scripts/gen_dataclass_code.py"
