"""argusqt: statistical disclosure control of tables, τ-Argus compatible, free solvers only.

`argusqt.protect(...)` is the Python API (argusqt.api); it is imported on first use so that
`import argusqt` stays light (no pandas, Qt or solver at import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from argusqt.api import FREQ as FREQ
    from argusqt.api import NK as NK
    from argusqt.api import ZERO as ZERO
    from argusqt.api import P as P
    from argusqt.api import ProtectedTable as ProtectedTable
    from argusqt.api import Protection as Protection
    from argusqt.api import protect as protect

#: names of the Python API, loaded from argusqt.api when first used
_API = ("protect", "Protection", "ProtectedTable", "P", "NK", "FREQ", "ZERO")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from argusqt import api

        return getattr(api, name)
    raise AttributeError(f"module 'argusqt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
