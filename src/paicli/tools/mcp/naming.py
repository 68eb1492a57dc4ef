"""Model-facing tool names: `mcp__{server}__{tool}`, and the exact way back.

Providers accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`, so every other character becomes
`_`, and a name over 64 characters is cut and ends in a hash of the original pair. Sanitising
can map two pairs to one name (`a.b` and `a_b`); the registry (`ToolNameRegistry`) refuses the
second pair rather than guess, so a model name always resolves to exactly one (server, tool).
"""

from __future__ import annotations

import hashlib
import re

from paicli.tools.errors import ToolError

__all__ = [
    "MAX_NAME_LENGTH",
    "ToolNameCollision",
    "ToolNameRegistry",
    "UnknownToolName",
    "blurred_server",
    "model_tool_name",
    "unsanitised_tool_name",
]

MAX_NAME_LENGTH = 64
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]")
# 8 hex digits (32 bits): short enough to leave most of the readable name, long enough that
# two long names sharing their first 55 characters practically never meet (and if they do,
# the registry still refuses the second).
_HASH_LENGTH = 8


def unsanitised_tool_name(server: str, tool: str) -> str:
    """`mcp__{server}__{tool}` as written, before sanitising (`mcp__my.server__tool`): what a
    user may write a deny pattern against."""
    return f"mcp__{server}__{tool}"


def blurred_server(server: str) -> str | None:
    """Why no permission rule can name the tools of `server` (one phrase), or None: a name
    whose model-facing part holds `__` or ends with `_` (`github.`, `github__x`) blurs where
    the server ends, so `mcp__github__*` would cover its tools too."""
    part = _NOT_ALLOWED.sub("_", server)
    if "__" in part or part.endswith("_"):
        return (
            f"the server's name {server!r} blurs where it ends in mcp__SERVER__TOOL, so no "
            "rule can name its tools"
        )
    return None


def model_tool_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of `server`; pure, so stable across runs."""
    name = _NOT_ALLOWED.sub("_", unsanitised_tool_name(server, tool))
    if len(name) <= MAX_NAME_LENGTH:
        return name
    # Hash the original pair, not the sanitised text, so long names that differ only in
    # replaced characters (or only past the cut) still get different hashes. The NUL cannot
    # occur in either part, so ("a", "b_c") and ("a_b", "c") hash differently.
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_LENGTH]
    return f"{name[: MAX_NAME_LENGTH - _HASH_LENGTH - 1]}_{digest}"


class ToolNameCollision(ToolError):
    """Two different (server, tool) pairs map to the same model-facing name.

    `taken` is the pair that already holds `name`; `refused` is the pair that was not added.
    """

    def __init__(self, name: str, taken: tuple[str, str], refused: tuple[str, str]) -> None:
        self.name = name
        self.taken = taken
        self.refused = refused
        super().__init__(
            f"tool name {name!r} is already used by tool {taken[1]!r} of server {taken[0]!r}; "
            f"tool {refused[1]!r} of server {refused[0]!r} maps to the same name and is not "
            "offered to the model (rename one server, or exclude one tool)"
        )


class UnknownToolName(ToolError):
    """No tool is offered under this model-facing name."""


class ToolNameRegistry:
    """The model names currently offered, each mapped back to its (server, tool).

    `add` raises `ToolNameCollision` instead of returning an error value: a collision is a
    setup problem the caller reports once per tool, and the registry stays unchanged by it.
    """

    def __init__(self) -> None:
        self._pairs: dict[str, tuple[str, str]] = {}

    def add(self, server: str, tool: str) -> str:
        """Register `tool` of `server` and return its model name (again, if already added)."""
        name = model_tool_name(server, tool)
        taken = self._pairs.setdefault(name, (server, tool))
        if taken != (server, tool):
            raise ToolNameCollision(name, taken, (server, tool))
        return name

    def resolve(self, name: str) -> tuple[str, str]:
        """The (server, tool) behind a model name; `UnknownToolName` for a name not offered."""
        try:
            return self._pairs[name]
        except KeyError:
            raise UnknownToolName(f"no tool is offered under the name {name!r}") from None

    def remove_server(self, server: str) -> list[str]:
        """Withdraw every name of `server` (disabled, crashed, tools relisted); return them."""
        gone = [name for name, pair in self._pairs.items() if pair[0] == server]
        for name in gone:
            del self._pairs[name]
        return gone

    def names(self, server: str | None = None) -> list[str]:
        """The model names offered, in the order added; only `server`'s when given."""
        return [name for name, pair in self._pairs.items() if server in (None, pair[0])]

    def __contains__(self, name: object) -> bool:
        return name in self._pairs

    def __len__(self) -> int:
        return len(self._pairs)
