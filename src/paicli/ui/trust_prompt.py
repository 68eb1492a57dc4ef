"""The trust prompt for a project's MCP servers: shows each entry as written (every `${VAR}`
it reads named, secret-looking ones flagged, what changed since the last approval) and reads
the answer from stdin: y/N for one server; for several, one question (all, choose one by one,
or none). Used when stdin is a terminal, by the REPL and by the `paicli mcp` commands alike.
Every line goes through `err`, which escapes what the repository wrote."""

from __future__ import annotations

import sys
from collections.abc import Sequence

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


def ask_on_terminal(requests: Sequence[TrustRequest]) -> set[str] | None:
    """The names of the project servers the user lets run (the rest are declined), or None
    when stdin ended before an answer."""
    if len(requests) == 1:
        (request,) = requests
        for line in prompt_lines(request):
            err(line)
        return _one(request, "Allow it? [y/N] ")
    err(f"{len(requests)} project servers want to run:")
    for number, request in enumerate(requests, 1):
        first, *rest = prompt_lines(request)
        err(f"{number}. {first}")
        for line in rest:
            err(f"   {line}")
    err("Allow them? [a]ll, [c]hoose one by one, [N]one? [a/c/N] ")
    answer = _answer()
    if answer is None:
        return None
    if answer in ("a", "all"):
        return {request.entry.name for request in requests}
    if answer not in ("c", "choose"):
        return set()
    chosen: set[str] = set()
    for request in requests:
        allowed = _one(request, f"Allow {request.entry.name!r}? [y/N] ")
        if allowed is None:
            return None
        chosen |= allowed
    return chosen


def _one(request: TrustRequest, question: str) -> set[str] | None:
    err(question)
    answer = _answer()
    if answer is None:
        return None
    return {request.entry.name} if answer in ("y", "yes") else set()


def _answer() -> str | None:
    line = sys.stdin.readline()
    return None if not line else line.strip().lower()
