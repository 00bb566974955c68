"""The standard `dataclass` with `__repr__`, `__eq__` and `__hash__` shared, not compiled per class.

Python 3.11's `dataclasses` writes and `exec`s the text of each generated method; for the
≈ 75 classes a batch process imports that is ≈ 13 ms for these three (D-119). Here the
standard decorator still makes `__init__` (and a frozen class's `__setattr__`/`__delattr__`),
and the three are closures over the field names that return what the generated text returns:
the same strings, the same tuples compared and hashed (tests/test_dataclass_shared.py).
`__eq__` is 3.11's and 3.12's tuple comparison on every Python: 3.13's generated text compares
field by field, which differs only for a field that is one object unequal to itself (a NaN).
"""

from __future__ import annotations

import dataclasses
from _thread import get_ident
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, cast, dataclass_transform, overload

_T = TypeVar("_T")

#: what a class body defining one of these makes us leave the whole class to the standard
#: decorator (its rules for explicit methods and `__hash__` then apply unchanged)
_OWN = ("__eq__", "__hash__")


def _tuple_of(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The field values as the generated text's `(self.a,self.b,)` tuple."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return attrgetter(*names)  # a tuple for two or more names


def _repr_fn(qualname: str, names: tuple[str, ...]) -> Callable[[object], str]:
    """`Cls(a=1, b='x')`, and '...' for a recursive call, as `dataclasses._repr_fn`."""
    running: set[tuple[int, int]] = set()

    def __repr__(self: object) -> str:
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            inner = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
            return self.__class__.__qualname__ + f"({inner})"
        finally:
            running.discard(key)

    __repr__.__qualname__ = f"{qualname}.__repr__"
    return __repr__


def _eq_fn(qualname: str, names: tuple[str, ...]) -> Callable[[object, object], Any]:
    """The fields compared as tuples when both are of one class, as `dataclasses._cmp_fn`."""
    values = _tuple_of(names)

    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    __eq__.__qualname__ = f"{qualname}.__eq__"
    return __eq__


def _hash_fn(qualname: str, names: tuple[str, ...]) -> Callable[[object], int]:
    """The hash of the fields' tuple, as `dataclasses._hash_fn`."""
    values = _tuple_of(names)

    def __hash__(self: object) -> int:
        return hash(values(self))

    __hash__.__qualname__ = f"{qualname}.__hash__"
    return __hash__


def _process(cls: type[_T], *, repr: bool, eq: bool, frozen: bool, kw_only: bool) -> type[_T]:
    """The standard class without the three texts, then the shared three as it sets them."""
    if any(n in cls.__dict__ for n in _OWN):
        return dataclasses.dataclass(cls, repr=repr, eq=eq, frozen=frozen, kw_only=kw_only)
    made = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen, kw_only=kw_only)
    fields = dataclasses.fields(cast(Any, made))
    qualname = made.__qualname__
    if repr and "__repr__" not in made.__dict__:
        made.__repr__ = _repr_fn(qualname, tuple(f.name for f in fields if f.repr))  # type: ignore[assignment]
    if eq:
        made.__eq__ = _eq_fn(qualname, tuple(f.name for f in fields if f.compare))  # type: ignore[assignment,method-assign]
        if frozen:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            made.__hash__ = _hash_fn(qualname, hashed)  # type: ignore[assignment,method-assign]
        else:
            made.__hash__ = None  # type: ignore[assignment]
    return made


@overload
def dataclass(cls: type[_T], /) -> type[_T]: ...


@overload
def dataclass(
    *,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    kw_only: bool = False,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(
    cls: type[_T] | None = None,
    /,
    *,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    kw_only: bool = False,
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`dataclasses.dataclass` for the options argusqt uses; the same class, cheaper to make."""

    def wrap(c: type[_T]) -> type[_T]:
        return _process(c, repr=repr, eq=eq, frozen=frozen, kw_only=kw_only)

    return wrap if cls is None else wrap(cls)
