"""The MCP servers an editor passes in `session/new` and `session/load`, as paicli's own
config entries: the `mcpServers` values a user would write (stdio, http and sse), loaded through
`paicli.servers.config` like `--mcp-config`'s (the user chose them, in the editor), so their
names, limits and sandbox are checked and applied as every configured server's are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from paicli.run_settings import RunSettings, config_secrets

__all__ = ["EDITOR_SOURCE", "with_editor_servers"]

# How the editor's servers are named in problems and `paicli mcp`-style messages.
EDITOR_SOURCE = Path("<editor>")


def with_editor_servers(settings: RunSettings, servers: Sequence[Any]) -> RunSettings:
    """`settings` with the editor's `servers` added (winning a name); an entry of a kind
    paicli does not take (acp) is a problem line, as a refused entry is."""
    values: dict[str, object] = {}
    problems: list[str] = []
    for server in servers:
        if isinstance(server, McpServerStdio):
            values[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {v.name: v.value for v in server.env},
            }
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            values[server.name] = {
                "type": server.type,
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers},
            }
        else:
            kind = getattr(server, "type", "?")
            problems.append(f"{EDITOR_SOURCE}: server {server.name!r}: {kind} is not supported")
    if not values and not problems:
        return settings
    config = settings.config.with_servers(values, EDITOR_SOURCE)
    problems += [p.message for p in config.errors[len(settings.config.errors) :]]
    secrets = {*settings.secrets, *config_secrets(config)}
    return replace(
        settings, config=config, secrets=tuple(secrets), problems=(*settings.problems, *problems)
    )
