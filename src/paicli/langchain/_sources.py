"""What `load_tools` accepts as a server, as typed descriptions with names.

A `StdioServer` or `HttpServer`; one `mcpServers` entry as a dict (or a whole
`{"mcpServers": {...}}` document); or the path of an mcp.json file, all of whose servers are
used, except those marked `"disabled": true`. A file is read as paicli reads its own (a
regular file of at most 1 MiB, strict JSON) and `${VAR}` / `${VAR:-default}` are expanded
from the environment in the same fields. Every problem is one `BridgeError` naming the
file and the server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paicli.langchain.errors import BridgeError
from paicli.mcp import HttpServer, ServerConfigError, StdioServer, server_from_dict

__all__ = ["ServerSource", "servers_of"]

ServerSource = StdioServer | HttpServer | Mapping[str, Any] | str | os.PathLike[str]


def servers_of(
    source: ServerSource, environ: Mapping[str, str] | None = None
) -> list[StdioServer | HttpServer]:
    """The servers `source` describes, in order."""
    env = os.environ if environ is None else environ
    if isinstance(source, StdioServer | HttpServer):
        return [source]
    if isinstance(source, Mapping):
        if "mcpServers" in source:
            return _document_servers(source, "the mcpServers dict", env)
        return [_typed(source, None, "the server dict")]
    if isinstance(source, str | os.PathLike):
        return _file_servers(Path(source).expanduser(), env)
    raise BridgeError(
        f"cannot load tools from a {type(source).__name__}: give a StdioServer, an "
        "HttpServer, an mcpServers entry (dict) or the path of an mcp.json file"
    )


def _typed(entry: Mapping[str, Any], name: str | None, where: str) -> StdioServer | HttpServer:
    from paicli.servers.config import APP_KEYS  # noqa: PLC0415 - only for config dicts

    try:
        return server_from_dict(entry, name=name, extra_keys=APP_KEYS)
    except (ServerConfigError, TypeError, ValueError) as exc:
        raise BridgeError(f"{where}: {exc}") from exc


def _file_servers(path: Path, environ: Mapping[str, str]) -> list[StdioServer | HttpServer]:
    from paicli.config_files import (  # noqa: PLC0415 - only when a file is given
        ConfigFileError,
        parse_json,
        read_config_text,
    )

    shown = str(path)
    try:
        text = read_config_text(path, shown)
        if text is None:
            raise BridgeError(f"{shown}: no such file")
        document = parse_json(text, shown)
    except ConfigFileError as exc:
        raise BridgeError(str(exc)) from exc
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise BridgeError(f"{shown}: expected an object with an 'mcpServers' object")
    return _document_servers(document, shown, environ)


def _document_servers(
    document: Mapping[str, Any], shown: str, environ: Mapping[str, str]
) -> list[StdioServer | HttpServer]:
    from paicli.servers._config_file import InvalidConfig  # noqa: PLC0415
    from paicli.servers._expand import expanded  # noqa: PLC0415 - paicli's own ${VAR} rules

    servers: list[StdioServer | HttpServer] = []
    entries = document.get("mcpServers")
    if not isinstance(entries, Mapping):
        raise BridgeError(f"{shown}: 'mcpServers' must be an object of servers")
    for name, entry in entries.items():
        where = f"{shown}: server {name!r}"
        if not isinstance(entry, dict):
            raise BridgeError(f"{where}: expected an object")
        if entry.get("disabled") is True:
            continue
        try:
            resolved = expanded(entry, environ, where)
        except InvalidConfig as exc:
            raise BridgeError(str(exc)) from exc
        servers.append(_typed(resolved, str(name), shown))
    if not servers:
        raise BridgeError(f"{shown}: no servers (or all disabled)")
    return servers
