"""The trust prompt for a project's MCP server: shows its entry as written (every `${VAR}` it
reads named, secret-looking ones flagged, what changed since the last approval) and reads y/N
from stdin. Used when stdin is a terminal, by the REPL and by the `paicli mcp` commands
alike. Every line goes through `err`, which escapes what the repository wrote."""

from __future__ import annotations

import sys

from paicli.servers.trust import TrustRequest

from .output import err


def prompt_lines(request: TrustRequest) -> list[str]:
    """What the user reads before answering, one item per line."""
    entry = request.entry
    verb = "changed since you approved it" if request.changes else "wants to run"
    lines = [f"Project server {entry.name!r} ({entry.source}) {verb}:", f"  {request.target}"]
    if request.settings:
        lines.append(f"  with {request.settings}")
    if request.variables:
        named = ", ".join(
            f"{name} (looks secret)" if name in request.secrets else name
            for name in request.variables
        )
        lines.append(f"Variables it reads: {named}")
    if request.secrets:
        lines.append(
            "Warning: it would receive the values of "
            + ", ".join(f"${{{name}}}" for name in request.secrets)
        )
    if request.on_command_line:
        names = ", ".join(f"${{{name}}}" for name in request.on_command_line)
        lines.append(
            f"Warning: {names} goes on its command line, which every user of this machine "
            "can read (ps)"
        )
    lines += [f"Ignored: {notice}" for notice in request.ignored]
    if request.changes:
        lines.append("Changes to its entry:")
        lines += [f"  {line}" for line in request.changes]
    return lines


def ask_on_terminal(request: TrustRequest) -> bool:
    """Whether the user lets the project server run."""
    for line in prompt_lines(request):
        err(line)
    err("Allow it? [y/N] ")
    return sys.stdin.readline().strip().lower() in ("y", "yes")
