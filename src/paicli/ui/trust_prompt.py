"""The trust prompt for a project's MCP server: shows the exact command line it would run
(escaped, secrets masked) and reads y/N from stdin. Used when stdin is a terminal, by the REPL
and by the `paicli mcp` commands alike."""

from __future__ import annotations

import sys

from paicli.servers.config import ServerEntry
from paicli.servers.trust import describe

from .output import err


def ask_on_terminal(entry: ServerEntry) -> bool:
    """Whether the user lets project server `entry` run."""
    err(f"Project server {entry.name!r} ({entry.source}) wants to run:\n  {describe(entry)}")
    err("Allow it? [y/N] ")
    return sys.stdin.readline().strip().lower() in ("y", "yes")
