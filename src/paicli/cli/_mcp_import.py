"""`paicli mcp import`: the servers Claude Desktop and Claude Code are set up with, copied
into a paicli config file.

What would be imported is shown first (names and command lines or URLs, env and header
values masked, everything through the screen's redactor), with each server left out and
why: a name paicli refuses, a name the file already has, an entry the loader would refuse.
Nothing is written until the user says yes at a terminal, or `--yes` says it beforehand;
without a terminal and without `--yes` nothing is written at all.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from paicli.cli._mcp_add import project_of
from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.redact import Redactor, environment_secrets
from paicli.servers.claude_import import SOURCES, Found, found
from paicli.servers.config import (
    ConfigWriteError,
    Scope,
    add_server,
    check_entry,
    name_problem,
    shown_name,
)
from paicli.servers.trust import target_line
from paicli.ui.output import err, out
from paicli.ui.screen_secrets import redacting


def import_servers(
    options: argparse.Namespace,
    config_path: Callable[[str], Path],
    project_dir: Path | None,
) -> int:
    """Import what `options.source` (default: both programs) is set up with; the exit code."""
    scope: Scope = options.scope or "user"
    path = config_path(scope)
    try:
        existing = _names_in(path)
    except ConfigFileError as exc:
        err(f"paicli mcp import: {exc}; nothing imported")
        return 1
    chosen: dict[str, Found] = {}
    left_out: list[str] = []
    secrets: list[str] = []
    broken = False
    for source in [options.source] if options.source else list(SOURCES):
        servers, problem = found(source, os.environ, Path.cwd())
        if problem is not None:
            err(f"paicli mcp import: {problem}")
            broken = True
        for server in servers:
            secrets += _secret_values(server.entry)
            why = _left_out(
                server,
                existing=existing,
                chosen=chosen,
                path=path,
                scope=scope,
                project_dir=project_dir,
            )
            if why is None:
                chosen[server.name] = server
            else:
                left_out.append(f"  {shown_name(server.name)} ({server.where}): {why}")
    with redacting(Redactor([*secrets, *environment_secrets(os.environ)])):
        return _confirm_and_write(options, path, chosen, left_out, broken=broken, scope=scope)


def _confirm_and_write(
    options: argparse.Namespace,
    path: Path,
    chosen: dict[str, Found],
    left_out: list[str],
    *,
    broken: bool,
    scope: Scope,
) -> int:
    if chosen:
        out(f"To import into {path}:")
        for name, server in chosen.items():
            entry = server.entry if isinstance(server.entry, dict) else {}
            out(f"  {name}: {target_line(entry, mask=True)}   ({server.where})")
    if left_out:
        out("Left out:")
        for line in left_out:
            out(line)
    if not chosen:
        out("Nothing to import.")
        return 1 if broken else 0
    if not options.yes:
        if not sys.stdin.isatty():
            err("paicli mcp import: not a terminal to confirm in; pass --yes to import them")
            return 1
        err(f"Import {len(chosen)} server(s) into {path}? [y/N] ")
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            out("Nothing imported.")
            return 1
    for name, server in chosen.items():
        try:
            entry = dict(server.entry) if isinstance(server.entry, dict) else {}
            add_server(path, name, entry, inside=project_of(scope, path))
        except ConfigWriteError as exc:
            err(f"paicli mcp import: {exc}; stopped there")
            return 1
    out(f"Imported {len(chosen)} server(s) into {path}: {', '.join(chosen)}")
    return 0


def _left_out(
    server: Found,
    *,
    existing: set[str],
    chosen: dict[str, Found],
    path: Path,
    scope: Scope,
    project_dir: Path | None,
) -> str | None:
    """Why `server` is not imported, or None when it is."""
    problem = name_problem(server.name)
    if problem is not None:
        return problem
    if server.name in existing:
        return f"{path} already has a server of that name; kept as it is"
    if server.name in chosen:
        return f"also in {chosen[server.name].where}, which is imported"
    problem, _ = check_entry(
        server.name, server.entry, scope=scope, source=path, project_dir=project_dir
    )
    return problem


def _names_in(path: Path) -> set[str]:
    """The server names the file at `path` has (none when there is no file)."""
    text = read_config_text(path, str(path))
    document = parse_json(text, str(path)) if text and text.strip() else {}
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    return set(servers) if isinstance(servers, dict) else set()


def _secret_values(entry: object) -> list[str]:
    """The env and header values of an entry: what must never reach the screen."""
    if not isinstance(entry, dict):
        return []
    values: list[str] = []
    for key in ("env", "headers"):
        mapping = entry.get(key)
        if isinstance(mapping, dict):
            values += [v for v in mapping.values() if isinstance(v, str)]
    return values
