"""The tools a server lists, checked as a model and other clients will meet them.

Names: providers accept `^[a-zA-Z0-9_-]{1,64}$` for `mcp__{server}__{tool}`, so other
characters are replaced and long names cut (`paicli.tools.mcp.naming`); two tools that
sanitise alike cannot both be offered. Descriptions: the model picks tools by them, and
paicli cuts one at `TOOL_DESCRIPTION_CAP`. Schemas: an input schema must be a valid JSON
Schema describing an object (MCP requires `"type": "object"`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from paicli.doctor.findings import ServerReport, excerpt
from paicli.mcp import Tool
from paicli.tools.mcp.naming import MAX_NAME_LENGTH, model_tool_name
from paicli.tools.mcp.toolbox import TOOL_DESCRIPTION_CAP

__all__ = ["check_tools", "schema_problem"]

# One finding per kind of problem, naming at most this many tools.
NAMED = 5


def check_tools(report: ServerReport, server: str, tools: Sequence[Tool]) -> None:
    """Add a finding per kind of tool problem (none when every tool is fine)."""
    report.add("tools", "info", f"{len(tools)} tool{'s' * (len(tools) != 1)}")
    counts = Counter(tool.name for tool in tools)
    duplicates = [name for name, count in counts.items() if count > 1]
    if duplicates:
        report.add(
            "tool-duplicate",
            "error",
            f"tool names listed more than once: {_names(duplicates)}",
            "give every tool its own name (clients keep only one of each)",
        )
    _check_names(report, server, list(counts))
    schemas = [(tool.name, problem) for tool in tools if (problem := schema_problem(tool))]
    for name, problem in schemas[:NAMED]:
        report.add(
            "tool-schema",
            "error",
            f"tool {excerpt(name, 64)!r}: invalid input schema: {problem}",
            'fix the schema: a JSON Schema object with "type": "object"',
        )
    missing = [tool.name for tool in tools if not (tool.description or "").strip()]
    if missing:
        report.add(
            "tool-description-missing",
            "warning",
            f"tools without a description: {_names(missing)}",
            "describe what each tool does and when to use it: the model chooses by it",
        )
    long = [tool.name for tool in tools if len(tool.description or "") > TOOL_DESCRIPTION_CAP]
    if long:
        report.add(
            "tool-description-long",
            "warning",
            f"descriptions over {TOOL_DESCRIPTION_CAP} characters (paicli cuts them): "
            f"{_names(long)}",
            "shorten them; put details in the parameters' descriptions",
        )


def _check_names(report: ServerReport, server: str, names: list[str]) -> None:
    # The server's part of the name is the server's business (its config name): compare
    # with the prefix as the model sees it, so only the tool's own part counts.
    prefix = model_tool_name(server, "")
    changed = [name for name in names if model_tool_name(server, name) != prefix + name]
    if changed:
        shown = ", ".join(
            f"{excerpt(name, 40)!r} → {model_tool_name(server, name)!r}" for name in changed[:NAMED]
        )
        report.add(
            "tool-name",
            "warning",
            f"tool names the model sees changed: {shown}",
            "use only letters, digits, '_' and '-', at most "
            f"{MAX_NAME_LENGTH - len(prefix)} characters",
        )
    by_model_name: dict[str, list[str]] = {}
    for name in names:
        by_model_name.setdefault(model_tool_name(server, name), []).append(name)
    clashes = [group for group in by_model_name.values() if len(group) > 1]
    for group in clashes[:NAMED]:
        report.add(
            "tool-name-clash",
            "error",
            f"tools {_names(group)} become the same name {model_tool_name(server, group[0])!r}; "
            "only the first is offered",
            "rename one of them",
        )


def schema_problem(tool: Tool) -> str | None:
    """Why `tool`'s input schema is not a valid JSON Schema for an object, or None."""
    # jsonschema pulls in referencing, rpds and attrs: import it only when tools are checked.
    from jsonschema import exceptions, validators  # noqa: PLC0415

    schema = dict(tool.input_schema)
    validator = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        return excerpt(f"{exc.message}" + (f" (at {where})" if where else ""))
    if schema.get("type") != "object":
        return f'"type" is {excerpt(repr(schema.get("type")), 40)}, not "object"'
    return None


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(repr(excerpt(name, 40)) for name in names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
