"""argusqt.dataclass makes the classes `dataclasses.dataclass` makes: the same repr, eq, hash (D-119)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
from collections.abc import Callable
from dataclasses import field
from typing import Any, ClassVar

import pytest

import argusqt
from argusqt import dataclass as shared
from argusqt.dataclass import dataclass

OPTIONS: list[dict[str, bool]] = [
    {},
    {"frozen": True},
    {"frozen": True, "kw_only": True},
    {"eq": False},
    {"repr": False},
    {"eq": False, "frozen": True},
    {"kw_only": True},
]


def _bodies() -> list[Callable[[], type]]:
    """Class bodies, each made afresh so that both decorators see an untouched class."""

    def plain() -> type:
        class A:
            """A."""

            x: int
            y: Any = "y"

        return A

    def options() -> type:
        class B:
            """B."""

            x: int
            hidden: Any = field(default=0, repr=False)
            loose: Any = field(default=1, compare=False)
            unhashed: Any = field(default=2, hash=False)
            hashed: Any = field(default=3, compare=False, hash=True)
            items: list[int] = field(default_factory=list)
            counter: ClassVar[int] = 0

        return B

    def empty() -> type:
        class C:
            """C."""

        return C

    def one() -> type:
        class D:
            """D."""

            x: Any

        return D

    def own_repr() -> type:
        class E:
            """E."""

            x: int

            def __repr__(self) -> str:
                return "own"

        return E

    def own_eq() -> type:
        class F:
            """F."""

            x: int

            def __eq__(self, other: object) -> bool:
                return True

        return F

    def own_hash() -> type:
        class G:
            """G."""

            x: int

            def __hash__(self) -> int:
                return 7

        return G

    def undocumented() -> type:
        class H:
            x: int

        return H

    return [plain, options, empty, one, own_repr, own_eq, own_hash, undocumented]


def _instances(cls: type) -> list[Any]:
    """Instances over every field, with NaN (equal only as the same object) and a cycle."""
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    nan = math.nan
    out = []
    for values in ([1, "a", 2, 3, 4], [1, "b", 2, 3, 4], [nan, "a", 2, 3, 4], [1, "a", 9, 9, 9]):
        kwargs = {n: v for n, v in zip(names, values * 2, strict=False)}
        out.append(cls(**kwargs))
    if names:
        cyc: list[Any] = []
        obj = cls(**{n: cyc for n in names})
        cyc.append(obj)
        out.append(obj)
    return out


def _repr(obj: object) -> str:
    return "default" if type(obj).__repr__ is object.__repr__ else repr(obj)


def _hash(obj: object) -> object:
    if type(obj).__hash__ is object.__hash__:
        return "identity"
    try:
        return hash(obj)
    except TypeError as exc:
        return str(exc)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("body", _bodies())
def test_same_class_as_the_standard_decorator(
    body: Callable[[], type], options: dict[str, bool]
) -> None:
    ours = dataclass(**options)(body())
    std = dataclasses.dataclass(**options)(body())
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(std)]
    assert inspect.signature(ours) == inspect.signature(std)
    assert ours.__doc__ == std.__doc__
    assert ours.__match_args__ == std.__match_args__  # type: ignore[attr-defined]
    assert (ours.__hash__ is None) == (std.__hash__ is None)
    a, b = _instances(ours), _instances(std)
    assert [_repr(x) for x in a] == [_repr(x) for x in b]
    for i, j in [(i, j) for i in range(len(a)) for j in range(len(a))]:
        assert (a[i] == a[j]) == (b[i] == b[j])
        assert (a[i] != a[j]) == (b[i] != b[j])
    assert (a[0] == 1) == (b[0] == 1)
    assert [_hash(x) for x in a[:4]] == [_hash(x) for x in b[:4]]
    sub_a = dataclass(**options)(type("Sub", (ours,), {"__doc__": "S."}))
    sub_b = dataclasses.dataclass(**options)(type("Sub", (std,), {"__doc__": "S."}))
    sa, sb = _instances(sub_a)[0], _instances(sub_b)[0]
    assert [a[0] == sa, sa == a[0], _repr(sa)] == [b[0] == sb, sb == b[0], _repr(sb)]
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            a[0].x = 5
    if len(a) > 4:  # the cycle: '...' where the instance meets itself
        assert _repr(a[4]) == _repr(b[4])


def test_an_own_eq_or_hash_leaves_the_class_to_the_standard_decorator() -> None:
    for body in _bodies()[5:7]:
        cls = dataclass(frozen=True)(body())
        assert not _ours(cls.__eq__)
        assert not _ours(cls.__repr__)


def _ours(method: object) -> bool:
    return getattr(method, "__module__", None) == shared.__name__


def _core_dataclasses() -> list[type]:
    """Every dataclass of argusqt's core modules (the GUI keeps the standard decorator)."""
    out = []
    for mod in pkgutil.walk_packages(argusqt.__path__, "argusqt."):
        if mod.name.startswith(("argusqt.gui", "argusqt.__main__")):
            continue
        module = importlib.import_module(mod.name)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and obj.__module__ == mod.name
                and dataclasses.is_dataclass(obj)
            ):
                out.append(obj)
    return out


def test_core_classes_repr_eq_and_hash_their_fields_as_the_standard_text() -> None:
    classes = _core_dataclasses()
    assert len(classes) > 100
    made_here = 0
    for cls in classes:
        fields = dataclasses.fields(cls)
        if _ours(cls.__eq__):
            made_here += 1

        def blank(values: dict[str, Any], cls: type = cls) -> Any:
            obj = object.__new__(cls)
            for name, value in values.items():
                object.__setattr__(obj, name, value)
            return obj

        base = {f.name: ("v", f.name) for f in fields}
        obj = blank(base)
        if _ours(cls.__repr__):
            inner = ", ".join(f"{f.name}={base[f.name]!r}" for f in fields if f.repr)
            assert repr(obj) == f"{cls.__qualname__}({inner})"
        if not _ours(cls.__eq__):
            continue
        for f in fields:
            other = blank({**base, f.name: ("w", f.name)})
            assert (obj == other) == (not f.compare), (cls, f.name)
            if cls.__hash__ is not None:
                hashed = f.compare if f.hash is None else f.hash
                assert (hash(obj) == hash(other)) == (not hashed), (cls, f.name)
        assert obj == blank(base)
    assert made_here > 100
