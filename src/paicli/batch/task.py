"""`Task`: one checked line of a batch's tasks file, and its wire form (what a worker is
sent). Kept apart from the reading and checking (`tasks`) so that what a Ray actor imports
to start its worker stays small: an actor's start is on the batch's clock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Task"]


@dataclass(frozen=True)
class Task:
    """One line of the tasks file, checked. `folder` is absolute (None: a scratch folder of
    its own); with `repo`, `folder` is that repository and `ref` what to check out."""

    line: int
    id: str
    prompt: str
    folder: str | None = None
    git: bool = False  # `folder` is a repository checked out at `ref` (a worktree)
    ref: str | None = None
    model: str | None = None
    permission_mode: str | None = None  # Mode's value
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    servers: Mapping[str, Any] = field(default_factory=dict)  # the mcpServers object
    max_turns: int | None = None

    def to_wire(self) -> dict[str, Any]:
        """As JSON for a worker (the inverse of `task_from_dict`'s checked shape)."""
        wire = asdict(self)
        wire["allow"], wire["deny"] = list(self.allow), list(self.deny)
        wire["servers"] = dict(self.servers)
        return wire

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Task:
        values = dict(wire)
        values["allow"], values["deny"] = tuple(values["allow"]), tuple(values["deny"])
        return cls(**values)
