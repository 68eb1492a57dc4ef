"""The trust prompt for a project's MCP servers: shows each entry as written (every `${VAR}`
it reads named, secret-looking ones flagged, the OS sandbox it would run in, warnings for
what its entry asks beyond the project's default sandbox (off, hosts, writes outside), for
shell lines and downloaded code, what changed since the last approval) and reads the answer
from stdin: y/N for one server; for several, one question (all, choose one by one, or
none). Then, for each server that runs, one y/N per secret it would be handed (default no:
one yes to a server is not consent to hand it `AWS_SECRET_ACCESS_KEY`). Used when stdin is
a terminal, by the REPL and by the `paicli mcp` commands alike. Every line goes through
`err`, which escapes what the repository wrote."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from paicli.servers.trust import TrustAnswer, TrustRequest
from paicli.ui.output import err
from paicli.ui.typeahead import answering


def prompt_lines(request: TrustRequest) -> list[str]:
    """What the user reads before answering, one item per line."""
    entry = request.entry
    verb = "changed since you approved it" if request.changes else "wants to run"
    if request.approved:
        verb = "(approved) reads variables that look secret"
    lines = [f"Project server {entry.name!r} ({entry.source}) {verb}:", f"  {request.target}"]
    if request.settings:
        lines.append(f"  with {request.settings}")
    if request.sandbox:
        lines.append(f"OS sandbox: {request.sandbox}")
    if request.variables:
        named = ", ".join(
            f"{name} (looks secret)" if name in request.secrets else name
            for name in request.variables
        )
        lines.append(f"Variables it reads: {named}")
    if request.confirm:
        names = ", ".join(request.confirm)
        lines.append(
            f"It reads {names}, which {'looks' if len(request.confirm) == 1 else 'look'} "
            "secret: each is passed only if you agree to it below (default no)"
        )
    passed = [name for name in request.secrets if name not in request.confirm]
    if passed:
        # Secrets the user's config.toml allows, or already agreed to: they go with a yes.
        lines.append(
            "Warning: it would receive the values of "
            + ", ".join(f"${{{name}}}" for name in passed)
        )
    if request.on_command_line:
        names = ", ".join(f"${{{name}}}" for name in request.on_command_line)
        lines.append(
            f"Warning: {names} goes on its command line, which every user of this machine "
            "can read (ps)"
        )
    lines += [f"Warning: it {warning}" for warning in request.sandbox_warnings]
    lines += [f"Warning: it {warning}" for warning in request.launchers]
    lines += [f"Ignored: {notice}" for notice in request.ignored]
    if request.changes:
        lines.append("Changes to its entry:")
        lines += [f"  {line}" for line in request.changes]
    return lines


def ask_on_terminal(requests: Sequence[TrustRequest]) -> TrustAnswer | None:
    """The project servers the user lets run (the rest are declined) and the secrets each may
    be given, or None when stdin ended before an answer."""
    servers = _servers([r for r in requests if not r.approved])
    if servers is None:
        return None
    secrets: dict[str, frozenset[str]] = {}
    for request in requests:
        name = request.entry.name
        if not request.confirm or not (request.approved or name in servers):
            continue
        if request.approved:
            for line in prompt_lines(request):
                err(line)
        agreed: set[str] = set()
        for secret in request.confirm:
            answer = _yes(f"Pass ${{{secret}}} to {name!r}? [y/N] ")
            if answer is None:
                return None
            if answer:
                agreed.add(secret)
        secrets[name] = frozenset(agreed)
    return TrustAnswer(frozenset(servers), secrets)


def _servers(requests: Sequence[TrustRequest]) -> set[str] | None:
    """The servers among `requests` the user lets run (None: stdin ended)."""
    if not requests:
        return set()
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
    answer = _answer("Allow them? [a]ll, [c]hoose one by one, [N]one? [a/c/N] ")
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
    answer = _yes(question)
    if answer is None:
        return None
    return {request.entry.name} if answer else set()


def _yes(question: str) -> bool | None:
    """Whether the answer to `question` is yes (None: stdin ended)."""
    answer = _answer(question)
    return None if answer is None else answer in ("y", "yes")


def _answer(question: str) -> str | None:
    with answering():  # before the question shows: what is typed after it is its answer
        err(question)
        line = sys.stdin.readline()
    return None if not line else line.strip().lower()
