"""Pinned tool definitions: a server cannot change what a tool says or takes unnoticed.

The first time paicli sees a server's tools (per server config: the catalogue's key), it pins
each tool's definition hash (`servers.tool_definition`: name, title, description, schemas,
annotations) in `$PAICLI_HOME/tool-pins.json`. Later, after a restart or a `list_changed`, a
tool whose definition differs from its pin (a "rug pull": an instruction appended to a
description, a parameter added) is held back from the model until the user accepts the
change, seeing what changed; a tool the server adds is offered and reported once (and pinned);
a tool that disappeared is reported. `paicli mcp lock [--update] [NAME]` shows and renews the
pins; a one-shot run leaves changed tools out with one line, unless `--accept-tool-changes`.

A project's committed `.paicli/mcp.lock` comes with the repository, so it can only hold tools
back: it speaks for the project's own servers only, and only for a tool the user has no pin
of: one whose definition differs from the lock's is held back, one that matches is offered and
pinned as the user's own. A tool the user pinned is judged by that pin alone, so no lock (nor a
later pull that changes the lock along with the server) approves what the pin does not.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.private_files import write_atomically
from paicli.servers.config import REPOSITORY_SCOPES
from paicli.servers.tool_definition import definition, definition_hash, describe_change

if TYPE_CHECKING:
    from paicli.mcp import Tool

__all__ = ["PinReview", "ToolChange", "ToolPins", "from_project"]

log = logging.getLogger("paicli.servers")

FORMAT = 1


def from_project(entry: object) -> bool:
    """Whether the configured server `entry` came with the project (its `.paicli/mcp.json` or
    `.mcp.json`): the only servers the project's lock speaks for, or `lock --project` writes."""
    return getattr(entry, "scope", None) in REPOSITORY_SCOPES


@dataclass(frozen=True)
class ToolChange:
    """A tool whose definition differs from its pin: what was pinned, what it is now."""

    server: str
    key: str  # the server config's hash (where the pin lives)
    tool: Tool
    pinned: Mapping[str, object]
    now: Mapping[str, object]

    def lines(self) -> list[str]:
        """The summary and diff the user reads before accepting."""
        return describe_change(self.pinned, self.now)


@dataclass(frozen=True)
class PinReview:
    """One server's live tools against its pins."""

    offered: list[Tool]  # pinned and unchanged, or new
    changed: list[ToolChange] = field(default_factory=list)  # held back
    added: list[str] = field(default_factory=list)  # new since the pins (now pinned)
    removed: list[str] = field(default_factory=list)  # pinned, no longer offered


class ToolPins:
    """The pins in `path` (see the module docstring). Never raises for a broken file: it reads
    as no pins (a problem line is kept in `problems`), and writing failures are logged."""

    def __init__(self, path: Path, *, project: Path | None = None) -> None:
        self.path = path
        self.problems: list[str] = []
        self._servers: dict[str, dict[str, object]] = self._load()
        # A project's committed `.paicli/mcp.lock`: server name -> tool -> definition (see
        # the module docstring for the little it may decide).
        self.project_lock = project / ".paicli" / "mcp.lock" if project is not None else None
        self._locked = self._load_lock()
        # Changes the user turned down in this session: not asked about again.
        self.declined: set[tuple[str, str, str]] = set()

    def pinned(self, key: str) -> dict[str, dict[str, object]] | None:
        """Tool name → pinned definition for the server config `key` (None: never pinned)."""
        entry = self._servers.get(key)
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if not isinstance(tools, dict):
            return None
        return {str(n): d for n, d in tools.items() if isinstance(d, dict)}

    def review(
        self, key: str, server: str, tools: Sequence[Tool], *, project: bool = False
    ) -> PinReview:
        """`tools` as live now against their pins; first sight pins them all. `project`: the
        server is one of the project's, so its lock applies to tools the user never pinned."""
        pins = self.pinned(key)
        locked = self._locked.get(server, {}) if project else {}
        if pins is None and not locked:
            self.pin(key, server, tools)
            return PinReview(offered=list(tools))
        pins = pins or {}
        offered: list[Tool] = []
        changed: list[ToolChange] = []
        added: list[Tool] = []
        for tool in tools:
            now = definition(tool)
            # The user's own pin decides; the lock only where there is none.
            pinned = pins.get(tool.name)
            if pinned is None:
                pinned = locked.get(tool.name)
            if pinned is None:
                added.append(tool)
                offered.append(tool)
            elif definition_hash(pinned) == definition_hash(now):
                offered.append(tool)
            else:
                changed.append(ToolChange(server, key, tool, pinned, now))
        live = {t.name for t in tools}
        removed = sorted(name for name in pins if name not in live)
        # What was offered for the first time (new, or as the lock has it) is the user's pin
        # from now on: a later lock cannot move it.
        fresh = [t for t in offered if t.name not in pins]
        if fresh:
            self.pin(key, server, fresh, keep=True)
        return PinReview(offered, changed, [t.name for t in added], removed)

    def pin(self, key: str, server: str, tools: Iterable[Tool], *, keep: bool = False) -> None:
        """Pin `tools` of the server config `key` (with `keep`, beside its other pins; else
        in place of them)."""
        pins = (self.pinned(key) or {}) if keep else {}
        for tool in tools:
            pins[tool.name] = definition(tool)
        self._servers[key] = {"server": server, "tools": pins}
        self._save()

    def accept(self, changes: Iterable[ToolChange]) -> None:
        """The user accepted these changes: pin the tools as they are now."""
        for change in changes:
            self.pin(change.key, change.server, [change.tool], keep=True)

    def decline(self, change: ToolChange) -> None:
        self.declined.add((change.key, change.tool.name, definition_hash(change.now)))

    def was_declined(self, change: ToolChange) -> bool:
        return (change.key, change.tool.name, definition_hash(change.now)) in self.declined

    def write_lock(self, tools: Mapping[str, Sequence[Tool]]) -> Path:
        """Write the project's `.paicli/mcp.lock` pinning `tools` (server name -> tools as
        they are now), for committing; returns its path."""
        assert self.project_lock is not None
        servers = {
            name: {"tools": {t.name: definition(t) for t in listed}}
            for name, listed in sorted(tools.items())
        }
        document = {"format": FORMAT, "servers": servers}
        data = json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1) + "\n"
        write_atomically(self.project_lock, data.encode(), mode=0o644, keep_mode=True)
        self._locked = self._load_lock()
        return self.project_lock

    def _load_lock(self) -> dict[str, dict[str, dict[str, object]]]:
        lock = self.project_lock
        if lock is None:
            return {}
        try:
            text = read_config_text(lock, str(lock), inside=lock.parent.parent)
            if text is None:
                return {}
            document = parse_json(text, str(lock))
        except ConfigFileError as exc:
            self.problems.append(f"{exc}; the project's tool lock is not used")
            return {}
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            self.problems.append(f"{lock}: not a tool lock file; not used")
            return {}
        servers = document.get("servers")
        if not isinstance(servers, dict):
            return {}
        locked: dict[str, dict[str, dict[str, object]]] = {}
        for name, entry in servers.items():
            tools = entry.get("tools") if isinstance(entry, dict) else None
            if isinstance(tools, dict):
                locked[str(name)] = {str(t): d for t, d in tools.items() if isinstance(d, dict)}
        return locked

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            text = read_config_text(self.path, str(self.path))
            if text is None:
                return {}
            document = parse_json(text, str(self.path))
        except ConfigFileError as exc:
            self.problems.append(f"{exc}; tool pins start afresh")
            return {}
        servers = document.get("servers") if isinstance(document, dict) else None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            self.problems.append(f"{self.path}: not a tool pins file; tool pins start afresh")
            return {}
        if not isinstance(servers, dict):
            return {}
        return {str(k): v for k, v in servers.items() if isinstance(v, dict)}

    def _save(self) -> None:
        document = {"format": FORMAT, "servers": self._servers}
        data = json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1).encode()
        try:
            write_atomically(self.path, data)
        except OSError as exc:
            log.warning("could not save the tool pins: %s", exc)
