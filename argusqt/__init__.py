"""argusqt: statistical disclosure control of tables, τ-Argus compatible, free solvers only.

`argusqt.protect(...)` is the Python API (argusqt.api); it is imported on first use so that
`import argusqt` stays light (no pandas, Qt or solver at import). Type checkers read the
names from `__init__.pyi`.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: names of the Python API, loaded from argusqt.api when first used (by name, so that the
#: modules that read `argusqt.__version__` do not depend on the API in the import layers)
_API = ("protect", "open_session", "Protection", "ProtectedTable", "P", "NK", "FREQ", "ZERO")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:  # no typing import: `import argusqt` stays light
    if name in _API:
        return getattr(importlib.import_module("argusqt.api"), name)
    raise AttributeError(f"module 'argusqt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
