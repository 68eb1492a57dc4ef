"""What an MCP tool is, as approval binds to it: its definition and that definition's hash.

An "always allow" or "for this session" answer covers the tool as it was defined when the
user said yes: name, title, description, input and output schema, annotations. A server can
redefine a tool at any time (`notifications/tools/list_changed`, or a new version after a
restart), for instance adding a `shell_cmd` parameter or an instruction to its description;
the hash then differs and the user is asked again, with `describe_change` showing what
changed. This is the one place a tool's identity is computed, so pinning servers' tools in a
lock file can use the same hash.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from paicli.servers.errors import ServerCallFailed

if TYPE_CHECKING:
    from paicli.mcp import Tool

__all__ = [
    "MAX_CHANGE_LINES",
    "definition",
    "definition_hash",
    "describe_change",
    "still_offered",
]

# A changed schema can be long; the prompt shows this many diff lines and says how many more.
MAX_CHANGE_LINES = 40


def definition(tool: Tool) -> dict[str, object]:
    """The parts of `tool` that say what it does and what it takes (not `_meta`)."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    }


def definition_hash(tool_definition: Mapping[str, object]) -> str:
    """`sha256:` and the hex digest of the definition as canonical JSON (sorted keys, no
    spaces, UTF-8), so the same definition always has the same hash."""
    data = _canonical(tool_definition).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def still_offered(server: str, live: Sequence[Tool], tool: str, offered: str | None) -> None:
    """Raise unless the server's `live` tools still hold `tool`, defined as hashed in
    `offered` (when given): what the user and the model were offered is what is called."""
    found = next((t for t in live if t.name == tool), None)
    if found is None:
        raise ServerCallFailed(
            server, tool, "the server no longer offers this tool (its list changed)"
        )
    if offered is not None and definition_hash(definition(found)) != offered:
        raise ServerCallFailed(
            server,
            tool,
            "the server redefined this tool since it was offered; not called (its new "
            "definition is offered or held back from the next request)",
        )


def describe_change(before: Mapping[str, object], after: Mapping[str, object]) -> list[str]:
    """What changed between two definitions of a tool: one summary line naming the parts,
    then a unified diff of the two as indented JSON (at most `MAX_CHANGE_LINES` lines)."""
    parts = [key for key in after if before.get(key) != after.get(key)]
    parts += [key for key in before if key not in after]
    summary = f"changed: {', '.join(parts) or 'the definition'}"
    diff = list(
        difflib.unified_diff(
            _pretty(before).splitlines(),
            _pretty(after).splitlines(),
            "approved",
            "now",
            n=1,
            lineterm="",
        )
    )
    if len(diff) > MAX_CHANGE_LINES:
        more = len(diff) - MAX_CHANGE_LINES
        diff = [*diff[:MAX_CHANGE_LINES], f"... {more} more lines of difference"]
    return [summary, *diff]


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _pretty(value: Mapping[str, object]) -> str:
    # One description line per line of text, so a sentence added at its end shows as such.
    shown = dict(value)
    description = shown.get("description")
    if isinstance(description, str):
        shown["description"] = description.split("\n")
    return json.dumps(shown, sort_keys=True, indent=2, ensure_ascii=False)
