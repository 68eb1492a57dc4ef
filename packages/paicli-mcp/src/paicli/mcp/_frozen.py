"""Frozen slotted dataclasses built by setting their slots, for the few made on every call.

A frozen dataclass's `__init__` sets each field through `object.__setattr__`, which looks
the name up again each time; a tool result and its text blocks are built for every tool
call, so `from_wire` makes them with these builders instead: the slots' own descriptors set
directly, an equal object for about half the instructions. A builder names every field of
its class, in order, or it is refused when the module defining the class is imported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["builder3", "builder4"]

T = TypeVar("T")


def _setters(cls: type[Any], names: tuple[str, ...]) -> list[Callable[[Any, Any], None]]:
    fields = tuple(f.name for f in dataclasses.fields(cls))
    params = cls.__dataclass_params__
    if fields != names or not params.frozen or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__}: a builder sets every field {fields}, not {names}")
    if getattr(cls, "__post_init__", None) is not None:
        raise TypeError(f"{cls.__name__}: a builder would skip __post_init__")
    return [vars(cls)[name].__set__ for name in names]


def builder3(cls: type[T], *names: str) -> Callable[[Any, Any, Any], T]:
    """Make a `cls` of three fields from their values, in the order of `names`."""
    set_a, set_b, set_c = _setters(cls, names)
    new = object.__new__

    def build(a: Any, b: Any, c: Any) -> T:
        made = new(cls)
        set_a(made, a)
        set_b(made, b)
        set_c(made, c)
        return made

    return build


def builder4(cls: type[T], *names: str) -> Callable[[Any, Any, Any, Any], T]:
    """Make a `cls` of four fields from their values, in the order of `names`."""
    set_a, set_b, set_c, set_d = _setters(cls, names)
    new = object.__new__

    def build(a: Any, b: Any, c: Any, d: Any) -> T:
        made = new(cls)
        set_a(made, a)
        set_b(made, b)
        set_c(made, c)
        set_d(made, d)
        return made

    return build
