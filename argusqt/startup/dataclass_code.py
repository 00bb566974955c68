"""The methods `dataclasses` writes for argusqt's classes, compiled once into a .pyc instead
of at every start of the command (docs/design.md, D-68).

Python 3.11's `dataclasses` compiles the text of every `__init__`, `__repr__`, `__eq__`, … it
generates with `exec`: 0.03–0.04 s of a 0.26-s batch run. `_py311.py` holds those texts
as code (written by `scripts/gen_dataclass_code.py`), so Python keeps them compiled in its
.pyc. While `compiled_once()` is active, `dataclasses`' `exec` finds a text there and makes
the function from the stored code object (its file name and line numbers set back to those
`exec` gives): the same code, so the same class. Any other text, another Python, or an
unusual call is passed to the real `exec`: slower, never different.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: when a list: every text `dataclasses` compiles while active (the generator reads it)
RECORD: list[str] | None = None
#: the name of the one function each text defines (dataclasses' `_create_fn`)
FACTORY = "__create_fn__"

_table: dict[str, types.CodeType] | None = None
_ready: dict[str, types.CodeType] = {}


def _stored() -> dict[str, types.CodeType]:
    """The generated table for this Python, or nothing (another minor version's texts differ)."""
    global _table
    if _table is None:
        from argusqt.startup import _py311  # lazy: 300 functions' code, for the command only

        _table = _py311.CODE if sys.version_info[:2] == _py311.PYTHON else {}
    return _table


def as_exec_makes_it(code: types.CodeType, line: int) -> types.CodeType:
    """`code` as compiling its text alone gives it: file `<string>`, lines counted from 1
    (`line`: where the text starts in the generated file); nested code likewise."""
    consts = tuple(
        as_exec_makes_it(c, line) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(
        co_filename="<string>", co_firstlineno=code.co_firstlineno - line + 1, co_consts=consts
    )


def _code_for(text: str) -> types.CodeType | None:
    code = _ready.get(text)
    if code is None:
        stored = _stored().get(text)
        if stored is None:
            return None
        code = _ready[text] = as_exec_makes_it(stored, stored.co_firstlineno)
    return code


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec` for `dataclasses`: a stored text defines its function from the stored code."""
    if RECORD is not None and isinstance(source, str):
        RECORD.append(source)
    code = None
    if isinstance(source, str) and type(globals) is dict and type(locals) is dict:
        if "__builtins__" in globals:  # else exec would add it: leave such calls to exec
            code = _code_for(source)
    if code is None:  # compiled as in `dataclasses`, which has no `__future__` import
        if isinstance(source, str):
            source = compile(source, "<string>", "exec", dont_inherit=True)
        exec(source, globals, locals)
        return
    locals[FACTORY] = types.FunctionType(code, globals)


@contextmanager
def compiled_once() -> Iterator[None]:
    """Classes created inside get their methods from the stored code where it has them."""
    if "exec" in vars(dataclasses):  # already active (or someone else's): leave it alone
        yield
        return
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
