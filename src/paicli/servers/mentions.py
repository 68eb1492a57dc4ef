"""`@server:uri` mentions in a prompt: the resources of ready servers, indexed for completion,
and expanded into `<resource>` blocks placed before the prompt text.

Only a mention of a ready server with a URI it lists (or that it can read) is expanded; any
other `@word:thing` is left as typed (e-mail addresses, decorators in code).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass

from paicli.mcp import McpError
from paicli.servers.manager import ServerManager, ServerState

log = logging.getLogger("paicli.servers")

MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_.-]+):(\S+)")
# A resource's text is attached up to this size; more is cut with a note (context is precious).
MAX_RESOURCE_CHARS = 100_000
LIST_TIMEOUT = 10.0
# How long a mention of a server still starting waits for it before going on without it.
MENTION_WAIT = 15.0


@dataclass(frozen=True)
class Expansion:
    text: str  # the prompt to send: resource blocks, then the user's text
    attached: tuple[str, ...]  # "server:uri" of each attached resource
    problems: tuple[str, ...]  # one line per mention that could not be read


class ResourceIndex:
    """The URIs each ready server lists, refreshed when asked (the REPL refreshes a server
    when it becomes ready)."""

    def __init__(self, manager: ServerManager) -> None:
        self._manager = manager
        self.uris: dict[str, list[str]] = {}

    async def refresh(self, name: str) -> None:
        server = self._manager.get(name)
        session = server.session
        if server.state is not ServerState.READY or session is None:
            self.uris.pop(name, None)
            return
        if "resources" not in session.server_capabilities:
            self.uris[name] = []
            return
        try:
            async with asyncio.timeout(LIST_TIMEOUT):
                resources = await session.list_resources()
        except (McpError, TimeoutError) as exc:
            log.info("%s: could not list resources: %s", name, exc)
            return
        self.uris[name] = [r.uri for r in resources]

    def completions(self) -> list[str]:
        return [f"@{name}:{uri}" for name, uris in self.uris.items() for uri in uris]


def starting_mentioned(manager: ServerManager, text: str) -> list[str]:
    """The servers `text` mentions a resource of that are still starting (worth waiting
    for: their resource would be left out)."""
    named = {match.group(1) for match in MENTION.finditer(text)}
    return [name for name in manager.starting() if name in named]


async def expand_mentions(
    manager: ServerManager, text: str, *, wait: float = MENTION_WAIT
) -> Expansion:
    """`text` with the resources it mentions attached; a mention of a server still
    starting waits for it (at most `wait` seconds), one of a server that is not ready is a
    problem line."""
    blocks: list[str] = []
    attached: list[str] = []
    problems: list[str] = []
    if starting := starting_mentioned(manager, text):
        await manager.wait_ready(starting, timeout=wait)
    servers = {s.name: s for s in manager.servers()}
    for match in MENTION.finditer(text):
        name, uri = match.group(1), match.group(2).rstrip(".,;:!?)")
        server = servers.get(name)
        if server is None or f"{name}:{uri}" in attached:
            continue  # not a server's: left as typed
        if server.state is not ServerState.READY or server.session is None:
            problems.append(
                f"@{name}:{uri}: not attached: MCP server {name!r} is "
                f"{server.state.value}, not ready"
            )
            continue
        # Loaded with the session already: a run without servers never loads the types.
        from paicli.mcp import BlobResourceContents, TextResourceContents  # noqa: PLC0415

        try:
            result = await server.session.read_resource(uri)
        except McpError as exc:
            problems.append(f"@{name}:{uri}: {exc}")
            continue
        parts: list[str] = []
        for content in result.contents:
            if isinstance(content, TextResourceContents):
                body = content.text
                if len(body) > MAX_RESOURCE_CHARS:
                    body = (
                        body[:MAX_RESOURCE_CHARS] + f"\n[cut at {MAX_RESOURCE_CHARS:,} characters]"
                    )
                parts.append(body)
            elif isinstance(content, BlobResourceContents):
                parts.append(f"[binary content, {content.mime_type or 'unknown type'}]")
        blocks.append(
            f'<resource server="{name}" uri="{uri}">\n' + "\n".join(parts) + "\n</resource>"
        )
        attached.append(f"{name}:{uri}")
    if not blocks:
        return Expansion(text, (), tuple(problems))
    return Expansion("\n\n".join([*blocks, text]), tuple(attached), tuple(problems))
