"""What the `paicli batch` command line says for every task, as sent to the workers (a
small module of its own: the Ray actors load it without the runtime)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Defaults"]


@dataclass(frozen=True)
class Defaults:
    """What the `paicli batch` command line says for every task (a task's own fields add
    rules and servers, and replace the model and mode)."""

    flags: Mapping[str, str | None] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    mode: str | None = None
    mcp_config: tuple[str, ...] = ()
    strict_mcp_config: bool = False
    sandbox: str | None = None
    max_steps: int | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "flags": dict(self.flags),
            "allow": list(self.allow),
            "deny": list(self.deny),
            "mode": self.mode,
            "mcp_config": list(self.mcp_config),
            "strict_mcp_config": self.strict_mcp_config,
            "sandbox": self.sandbox,
            "max_steps": self.max_steps,
        }

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Defaults:
        values = dict(wire)
        for name in ("allow", "deny", "mcp_config"):
            values[name] = tuple(values[name])
        return cls(**values)
