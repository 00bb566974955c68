"""scipy.sparse without the numpy submodules its import loads and never uses.

scipy (1.15+) copies numpy's namespace for its array-API layer when it is imported
(`scipy._lib.array_api_compat.numpy`: `from numpy import *`, then every name of
`dir(numpy)`), which imports all of numpy's lazy submodules: numpy.testing (with unittest,
importlib.metadata, email, concurrent.futures), numpy.f2py (58 regular expressions
compiled), numpy.polynomial, numpy.fft and numpy.ctypeslib — a quarter of a small batch
run's CPU (docs/design.md, D-16, D-92) — and numpy.ma, numpy.char and numpy.rec (≈ 14 ms,
D-107: the audits' integer sets go through model.distinct, so a small table's run no
longer imports numpy.ma by `np.unique`). scipy.sparse reaches none of them while it is
imported (scipy asks `np.ma` only inside a function, then the real one is imported), and
argusqt uses them only in its tests, if at all. `load()`
lends numpy empty stand-ins for them while scipy.sparse is imported and takes them back
after, so a later `import numpy.testing` is the real one. Should a scipy release need them
during its import, the import is repeated the ordinary way: slower, never wrong. (Another
thread importing numpy.testing in those milliseconds would get the empty stand-in; nothing
in argusqt imports it.)
"""

from __future__ import annotations

import gc
import importlib
import sys
import threading
import types
from typing import Any

#: numpy's lazily imported submodules that scipy's namespace copy touches and never uses
#: (fft and ctypeslib: ≈ 1 ms of a b520 or p78 run, docs/design.md D-92; ma, char, rec D-107)
UNUSED = ("testing", "f2py", "polynomial", "fft", "ctypeslib", "ma", "char", "rec")
#: scipy's copy of numpy's namespace (the stand-ins are taken out of it too)
CLONE = "scipy._lib.array_api_compat.numpy"
#: set by the batch command once it froze its imports (D-57): then scipy's modules, imported
#: mid-run on a small table (D-78), are frozen too; any other process's collector untouched
REFREEZE = False
#: one importer at a time: another thread must never get a half-imported scipy.sparse
_LOADING = threading.RLock()


def load() -> types.ModuleType:
    """scipy.sparse, imported without the UNUSED numpy submodules when this is the first."""
    loaded = _initialised()
    if loaded is not None:
        return loaded
    with _LOADING:
        loaded = sys.modules.get("scipy.sparse")
        if loaded is not None:
            # imported by now, or still being imported by a plain `import` elsewhere:
            # importlib waits on the module's import lock for that
            return importlib.import_module("scipy.sparse")
        # a small table's run imports it in the middle of the run (D-78), after the batch
        # command froze its imports out of the collector (D-57): no collector passes over
        # the import, and its modules frozen like the others (what else lives now stays too)
        collecting = gc.isenabled()
        gc.disable()
        try:
            module = _import()
            if REFREEZE:
                gc.freeze()
            return module
        finally:
            if collecting:
                gc.enable()


def _initialised() -> types.ModuleType | None:
    """scipy.sparse when its import is complete (a module still being imported by another
    thread is in sys.modules already, half-built)."""
    loaded = sys.modules.get("scipy.sparse")
    spec = getattr(loaded, "__spec__", None)
    if loaded is None or getattr(spec, "_initializing", False):
        return None
    return loaded


def _import() -> types.ModuleType:
    import numpy

    lent = _lend(numpy)
    try:
        return importlib.import_module("scipy.sparse")
    except Exception:
        if not lent:
            raise
    finally:
        _take_back(numpy, lent)
    # this scipy needs them after all: forget its half-done import and do the ordinary one
    for name in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        del sys.modules[name]
    return importlib.import_module("scipy.sparse")


def _lend(numpy: types.ModuleType) -> dict[str, types.ModuleType]:
    """Stand-ins for the UNUSED submodules not imported yet, in sys.modules and numpy."""
    lent = {}
    for name in UNUSED:
        full = f"numpy.{name}"
        if full in sys.modules or name in vars(numpy):
            continue
        stand_in = types.ModuleType(full, "stand-in while scipy.sparse is imported")
        sys.modules[full] = stand_in
        setattr(numpy, name, stand_in)
        lent[name] = stand_in
    return lent


def _take_back(numpy: types.ModuleType, lent: dict[str, types.ModuleType]) -> None:
    """Remove the stand-ins wherever they went: numpy imports the real ones when asked."""
    clone = sys.modules.get(CLONE)
    for name, stand_in in lent.items():
        if sys.modules.get(f"numpy.{name}") is stand_in:
            del sys.modules[f"numpy.{name}"]
        for module in (numpy, clone):
            if module is not None and vars(module).get(name) is stand_in:
                delattr(module, name)


class _Lazy:
    """scipy.sparse as a module-level name, imported (by `load`) at the first name read:
    modules on a small batch run's path name it without paying its import (D-78)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(load(), name)


#: `from argusqt.model.scipy_sparse import lazy as sp` (typed as scipy.sparse where read)
lazy: Any = _Lazy()
