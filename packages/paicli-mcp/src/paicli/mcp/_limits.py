"""Resource limits for a stdio server: the value, its config-file form, and how it reads.

`Limits` says what a server may use (memory, CPU seconds, open files, processes); how each
is enforced on this machine is `_confine`'s business. `strict` (the default) means a limit
that cannot be applied stops the server from starting instead of being skipped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ServerConfigError

__all__ = ["Limits"]

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"(\d+)\s*([KMGT]?)(?:I?B)?", re.IGNORECASE)
# Below a few megabytes no interpreter starts at all; a smaller figure is surely a typo
# (bytes meant as megabytes).
MIN_MEMORY = 4 * 1024**2
KINDS = ("memory", "cpu", "files", "processes")
KEYS = (*KINDS, "strict")


@dataclass(frozen=True, slots=True)
class Limits:
    """What one server process group may use. None: no limit of that kind.

    `memory` is in bytes, `cpu` in CPU seconds per process, `files` open descriptors per
    process, `processes` tasks (processes and threads) in the whole group.
    """

    memory: int | None = None
    cpu: int | None = None
    files: int | None = None
    processes: int | None = None
    strict: bool = True

    def __post_init__(self) -> None:
        if self.memory is not None and (_not_int(self.memory) or self.memory < MIN_MEMORY):
            raise ServerConfigError("limits: 'memory' must be at least 4M")
        for key in ("cpu", "files", "processes"):
            value = getattr(self, key)
            if value is not None and (_not_int(value) or value < 1):
                raise ServerConfigError(f"limits: {key!r} must be a whole number >= 1")
        if not isinstance(self.strict, bool):
            raise ServerConfigError("limits: 'strict' must be true or false")

    @property
    def empty(self) -> bool:
        return all(getattr(self, k) is None for k in KINDS)

    def describe(self, kind: str) -> str:
        """How a limit reads in messages: `memory limit (512M)`, `CPU limit (30 s)`."""
        value = getattr(self, kind)
        if kind == "memory":
            return f"memory limit ({format_size(value)})"
        if kind == "cpu":
            return f"CPU limit ({value} s)"
        return f"{kind} limit ({value})"

    @classmethod
    def from_dict(cls, value: object, where: str, *, unknown: list[str] | None = None) -> Limits:
        """Parse a `"limits"` object of a config file (`where` names it in errors).
        Unknown keys are errors, unless `unknown` collects warnings about them."""
        return limits_from_dict(value, where, unknown=unknown)

    def within(self, ceiling: Limits) -> Limits:
        """These limits, none looser than `ceiling`'s, and `ceiling`'s strictness: what a
        repository's server gets under the user's defaults."""
        values: dict[str, int | None] = {}
        for key in KINDS:
            mine, cap = getattr(self, key), getattr(ceiling, key)
            values[key] = cap if mine is None else mine if cap is None else min(mine, cap)
        return Limits(**values, strict=ceiling.strict)

    def over(self, defaults: Limits) -> Limits:
        """`defaults` with each limit this one sets (and its strictness) put over them."""
        values = {k: getattr(self, k) or getattr(defaults, k) for k in KINDS}
        return Limits(**values, strict=self.strict)


def _not_int(value: object) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)


def format_size(size: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)


def parse_size(value: object) -> int:
    """`512M`, `2G`, `1048576` (bytes): the size in bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and (match := _SIZE.fullmatch(value.strip())):
        return int(match[1]) * _UNITS[match[2].upper()]
    raise ServerConfigError('limits: \'memory\' must be a size such as "512M" or "2G"')


def limits_from_dict(value: object, where: str, *, unknown: list[str] | None = None) -> Limits:
    """Parse a `"limits"` object. Unknown keys are errors, unless `unknown` collects them
    (then they are ignored)."""
    if not isinstance(value, Mapping):
        raise ServerConfigError(f"{where}: 'limits' must be an object")
    for key in sorted(set(value) - set(KEYS)):
        if unknown is None:
            raise ServerConfigError(f"{where}: limits: unknown key {key!r}")
        unknown.append(f"{where}: limits: ignoring unknown key {key!r}")
    cpu = value.get("cpu")
    if isinstance(cpu, float) and cpu > 0:
        cpu = math.ceil(cpu)  # the kernel counts whole seconds
    try:
        return Limits(
            memory=None if value.get("memory") is None else parse_size(value["memory"]),
            cpu=cpu,
            files=value.get("files"),
            processes=value.get("processes"),
            strict=value.get("strict", True),
        )
    except ServerConfigError as exc:
        raise ServerConfigError(f"{where}: {exc}") from None
