"""The MCP servers Claude Desktop and Claude Code are set up with, for `paicli mcp import`.

Claude Desktop keeps `{"mcpServers": {...}}` in `claude_desktop_config.json` (Linux:
`~/.config/Claude/`, macOS: `~/Library/Application Support/Claude/`, Windows:
`%APPDATA%\\Claude\\`); Claude Code keeps its user servers in `~/.claude.json` under
`mcpServers` and a project's local ones under `projects[<project folder>].mcpServers`. Every
`~` is `$HOME` (so a test can point it elsewhere). The files are read like paicli's own
(`paicli.config_files`: regular files only, bounded, strict JSON); nothing here writes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from paicli.config_files import (
    MAX_CONFIG_BYTES,
    ConfigFileError,
    parse_json,
    read_config_text,
)
from paicli.home import user_home

__all__ = ["SOURCES", "Found", "Source", "claude_code_file", "claude_desktop_file", "found"]

Source = Literal["claude-desktop", "claude-code"]
SOURCES: tuple[Source, ...] = ("claude-desktop", "claude-code")
# ~/.claude.json also keeps Claude Code's history of every project: it grows past the 1 MiB
# paicli allows its own files, but not past this.
CLAUDE_CODE_MAX_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Found:
    """One server entry as another program wrote it; `where` names file and place."""

    name: str
    entry: object
    where: str


def claude_desktop_file(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    home = user_home(environ)
    if platform == "darwin":
        folder = home / "Library" / "Application Support" / "Claude"
    elif platform == "win32":
        folder = Path(environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        folder = home / ".config" / "Claude"
    return folder / "claude_desktop_config.json"


def claude_code_file(environ: Mapping[str, str]) -> Path:
    return user_home(environ) / ".claude.json"


def found(
    source: Source, environ: Mapping[str, str], project: Path, platform: str = sys.platform
) -> tuple[list[Found], str | None]:
    """The servers `source` is set up with (for Claude Code: the user's, then those of
    `project`), and the problem that kept its file from being read (None: read, or no
    file at all)."""
    if source == "claude-desktop":
        path, limit = claude_desktop_file(environ, platform), MAX_CONFIG_BYTES
    else:
        path, limit = claude_code_file(environ), CLAUDE_CODE_MAX_BYTES
    shown = _shown(path, user_home(environ))
    try:
        text = read_config_text(path, shown, max_bytes=limit)
        document = parse_json(text, shown) if text and text.strip() else {}
    except ConfigFileError as exc:
        return [], str(exc)
    if not isinstance(document, dict):
        return [], f"{shown}: expected a JSON object at the top"
    servers, problem = _servers(document, shown)
    if source == "claude-code":
        projects = document.get("projects")
        mine = projects.get(_project_key(projects, project)) if isinstance(projects, dict) else None
        if isinstance(mine, dict):
            more, other = _servers(mine, f"{shown} projects[{str(project)!r}]")
            servers += more
            problem = problem or other
    return servers, problem


def _servers(document: Mapping[str, object], where: str) -> tuple[list[Found], str | None]:
    servers = document.get("mcpServers", {})
    if not isinstance(servers, dict):
        return [], f"{where}: 'mcpServers' is not an object"
    return [Found(str(name), entry, where) for name, entry in servers.items()], None


def _project_key(projects: Mapping[str, object], project: Path) -> str:
    """The key of `project` among Claude Code's projects: its path as written there (the
    folder Claude Code ran in), else as resolved here."""
    for candidate in (str(project), os.path.realpath(project)):
        if candidate in projects:
            return candidate
    return str(project)


def _shown(path: Path, home: Path) -> str:
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)
