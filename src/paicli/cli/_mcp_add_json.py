"""`paicli mcp add-json NAME JSON`: one server entry, written as JSON, checked, then saved.

The JSON is parsed the way config files are (strict: no key twice, nesting bounded) and the
entry is checked with the loader's own checks (`check_entry`) before a byte is written, so
a malformed entry never reaches the file. Every problem is one line naming it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from paicli.cli._mcp_add import save
from paicli.config_files import ConfigFileError, parse_json
from paicli.servers.config import Scope, check_entry, name_problem, shown_name
from paicli.ui.output import err


def add_json(
    options: argparse.Namespace,
    config_path: Callable[[str], Path],
    project_dir: Path | None,
) -> int:
    """Add the server `options.name` from `options.json`; the exit code."""
    problem = name_problem(options.name)
    if problem is not None:
        err(f"paicli mcp add-json: {shown_name(options.name)}: {problem}")
        return 2
    try:
        value = parse_json(options.json, "the JSON")
    except ConfigFileError as exc:
        err(f"paicli mcp add-json: {exc}")
        return 2
    if not isinstance(value, dict):
        err(
            "paicli mcp add-json: the JSON must be one server entry, an object like "
            '{"command": "npx", "args": [...]} or {"type": "http", "url": "..."}'
        )
        return 2
    if "mcpServers" in value:
        err("paicli mcp add-json: give the server's own entry, not an mcpServers object")
        return 2
    scope: Scope = options.scope or "user"
    path = config_path(scope)
    problem, warnings = check_entry(
        options.name, value, scope=scope, source=path, project_dir=project_dir
    )
    if problem is not None:
        err(f"paicli mcp add-json: {problem}; nothing written")
        return 2
    for warning in warnings:
        err(f"paicli: warning: {warning}")
    force = bool(options.force)
    return save(path, options.name, value, force=force, command="add-json", scope=scope)
