"""`paicli mcp add`: one server entry built from the command line, checked, then saved.

Options are accepted anywhere before `--` (Claude Code's habit: `add NAME -e K=V -- CMD`); a
URL means an HTTP server; a name already in the file is replaced only with `--force` or when
the user says so at a terminal. The entry is checked the way loading will check it before a
byte is written, so a malformed entry never reaches the file.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from paicli.cli._add_args import parse_rest
from paicli.cli.errors import UsageError
from paicli.mcp import ServerConfigError, server_from_dict
from paicli.servers.config import ConfigWriteError, ServerExists, add_server, name_problem
from paicli.ui.output import err, out

# A name a shell can export: anything else would never reach the server as written.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An HTTP header name is an RFC 9110 token.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def add(options: argparse.Namespace, config_path: Callable[[str], Path]) -> int:
    """Add the server; `config_path(scope)` is the file of a scope."""
    try:
        _transport, entry = entry_from(options)
    except UsageError as exc:
        err(f"paicli mcp add: {exc}")
        return 2
    scope = options.scope or "user"
    path = config_path(scope)
    command = entry.get("command")
    if scope != "project" and isinstance(command, str) and _relative_path(command):
        # Saved as typed, it would run whatever file has that name in the folder paicli
        # runs from: in a cloned repository, the repository's.
        entry["command"] = os.path.abspath(command)
    done = save(path, options.name, entry, force=bool(options.force), command="add", scope=scope)
    if done == 0 and entry.get("command") != command:
        err(f"paicli mcp add: {command!r} is saved as its full path, {entry['command']!r}")
    return done


def project_of(scope: str, path: Path) -> Path | None:
    """The project folder the file of `scope` at `path` must really be in (a project's
    `.paicli/mcp.json`), None for the user's own files."""
    return path.parent.parent if scope == "project" else None


def save(
    path: Path, name: str, entry: dict[str, Any], *, force: bool, command: str, scope: str
) -> int:
    """Write server `name` into the file of `scope` at `path`: a name already there is
    replaced only with `force` or when the user says so at a terminal. The exit code."""
    replace = force
    while True:
        try:
            add_server(path, name, entry, replace=replace, inside=project_of(scope, path))
        except ServerExists as exc:
            if replace or not sys.stdin.isatty() or not _replace_asked(name):
                err(f"paicli mcp {command}: {exc}; nothing changed (--force replaces it)")
                return 1
            replace = True
            continue
        except ConfigWriteError as exc:
            err(f"paicli mcp {command}: {exc}")
            return 1
        break
    verb = "Replaced" if replace else "Added"
    out(f"{verb} {transport_of(entry)} server {name!r} in {path}")
    return 0


def transport_of(entry: dict[str, Any]) -> str:
    """The transport an entry names (as `server_from_dict` reads it)."""
    kind = entry.get("type", "http" if "url" in entry else "stdio")
    return "http" if kind == "streamable-http" else str(kind)


def entry_from(options: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The transport and the `mcpServers` entry the command line describes."""
    problem = name_problem(options.name)
    if problem is not None:
        raise UsageError(f"{options.name!r}: {problem}")
    words, command = parse_rest(list(options.target), options)
    if words and command:
        raise UsageError(f"unexpected {words[0]!r} before -- (the command goes after --)")
    target = command or words
    if not target:
        raise UsageError("give the command after -- (stdio) or the URL (http, sse)")
    transport = options.transport or ("http" if _looks_like_url(target[0]) else "stdio")
    entry = _stdio_entry(target, options) if transport == "stdio" else None
    if entry is None:
        entry = _http_entry(transport, target, options)
    if options.protocol not in (None, "auto"):
        entry["protocol"] = options.protocol
    try:
        server_from_dict(entry, name=options.name, warnings=[])
    except ServerConfigError as exc:
        raise UsageError(str(exc)) from exc
    return transport, entry


def _stdio_entry(target: list[str], options: argparse.Namespace) -> dict[str, Any]:
    if _looks_like_url(target[0]):
        raise UsageError(f"{target[0]!r} is a URL: leave out --transport stdio, or use -t http")
    if options.header:
        raise UsageError("--header is for HTTP servers; a stdio server takes --env K=V")
    entry: dict[str, Any] = {"command": target[0], "args": target[1:]}
    env = {}
    for item in options.env:
        key, sep, value = item.partition("=")
        if not sep or not _ENV_NAME.fullmatch(key):
            raise UsageError(f"--env {item!r} is not NAME=VALUE")
        env[key] = value
    if env:
        entry["env"] = env
    return entry


def _http_entry(transport: str, target: list[str], options: argparse.Namespace) -> dict[str, Any]:
    if len(target) != 1:
        raise UsageError(f"an {transport} server takes one URL, got {len(target)} words")
    url = target[0]
    if not _has_host(url):
        raise UsageError(f"{url!r} is not an http:// or https:// URL with a host")
    if options.env:
        raise UsageError("--env is for stdio servers; an HTTP server takes --header 'K: V'")
    entry: dict[str, Any] = {"type": transport, "url": url}
    headers = {}
    for item in options.header:
        key, sep, value = item.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not _HEADER_NAME.fullmatch(key) or "\r" in value or "\n" in value:
            raise UsageError(f"--header {item!r} is not 'Name: value'")
        headers[key] = value
    if headers:
        entry["headers"] = headers
    return entry


def _relative_path(command: str) -> bool:
    """Whether `command` is a path from the current folder (`./x`, `bin/x`), not a program
    looked up on PATH nor a full path (`${VAR}/x` is paicli's to expand)."""
    return "/" in command and not command.startswith(("/", "$", "~"))


def _looks_like_url(word: str) -> bool:
    return word.lower().startswith(("http://", "https://"))


def _has_host(word: str) -> bool:
    try:
        parts = urlsplit(word)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _replace_asked(name: str) -> bool:
    err(f"A server named {name!r} is already configured there. Replace it? [y/N] ")
    return sys.stdin.readline().strip().lower() in ("y", "yes")
