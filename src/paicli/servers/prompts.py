"""MCP prompts as slash commands: `/mcp__SERVER__PROMPT arg1 name=value`.

The index keeps the prompts each ready server lists (refreshed when a server becomes ready
and after its `notifications/prompts/list_changed`). A prompt whose name (or server name)
holds anything but letters, digits, `_`, `-` and `.` cannot be typed as a command and is
kept aside, so its name is only ever shown escaped. Arguments are positional in the order
the prompt declares them, or `name=value`; quoting follows the shell (`"two words"`).
Argument completion asks the server (`completion/complete`) when it declares the
`completions` capability, under a short timeout, with the answers cached.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from paicli.errors import PaicliError
from paicli.mcp import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    McpError,
    Notification,
    Prompt,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from paicli.servers.manager import ServerManager, ServerState

__all__ = [
    "HELP_WAIT",
    "PromptCommand",
    "PromptIndex",
    "PromptProblem",
    "PromptTurn",
    "split_command",
]

log = logging.getLogger("paicli.servers")

PREFIX = "/mcp__"
TYPABLE = re.compile(r"^[A-Za-z0-9_.-]+$")
LIST_TIMEOUT = 10.0
# How long `/help` waits for listings under way (a server silent on prompts/list would hold
# it for the whole LIST_TIMEOUT): it shows what is listed by then.
HELP_WAIT = 1.0
# Tab must never wait long on a server: after this, no candidates (the user keeps typing).
COMPLETE_TIMEOUT = 1.5
GET_TIMEOUT = 30.0
# Completions remembered per (server, prompt, argument, typed value); cleared past this size.
CACHE_SIZE = 256
MAX_CANDIDATES = 100


class PromptProblem(PaicliError):
    """A prompt command that cannot run, in one line (missing arguments, unknown name...)."""


@dataclass(frozen=True)
class PromptCommand:
    server: str
    prompt: Prompt

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.server}__{self.prompt.name}"

    def usage(self) -> str:
        words = [a.name if a.required else f"[{a.name}]" for a in self.prompt.arguments]
        return " ".join([self.name, *words])


@dataclass(frozen=True)
class PromptTurn:
    """What a prompt hands the model: earlier messages, then the question (the last user
    message), plus one line per piece of content that is not text."""

    prior: tuple[tuple[str, str], ...]  # (role, text)
    question: str
    left_out: tuple[str, ...]


def split_command(text: str) -> tuple[str, list[str]]:
    """The command and its words, quoted as in a shell; PromptProblem on a stray quote."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise PromptProblem(f"cannot read the arguments: {exc}") from None
    return (words[0], words[1:]) if words else ("", [])


class PromptIndex:
    """The prompts of every ready server, by command name."""

    def __init__(self, manager: ServerManager) -> None:
        self._manager = manager
        self.prompts: dict[str, list[Prompt]] = {}
        self.untypable: dict[str, list[str]] = {}  # server -> prompt names left out
        self._stale: set[str] = set()
        self._watched: set[int] = set()  # sessions subscribed to, by id
        self._cache: dict[tuple[str, str, str, str], list[str]] = {}
        self._listing: set[asyncio.Task[None]] = set()  # refreshes under way

    def refresh_soon(self, name: str) -> asyncio.Task[None]:
        """Relist `name`'s prompts in a task of its own (`settled` waits for it)."""
        task = asyncio.get_running_loop().create_task(self.refresh(name))
        self._listing.add(task)
        task.add_done_callback(self._listing.discard)
        return task

    async def settled(self, wait: float | None = None) -> None:
        """Wait for the listings under way (a server just ready: `/help` or its prompt
        typed at once must find its prompts), each bounded by the list timeout, and for
        at most `wait` seconds in all when given."""
        if self._listing:
            await asyncio.wait(set(self._listing), timeout=wait)

    async def refresh(self, name: str) -> None:
        server = self._manager.get(name)
        session = server.session
        self._stale.discard(name)
        if server.state is not ServerState.READY or session is None:
            self.prompts.pop(name, None)
            self.untypable.pop(name, None)
            return
        if "prompts" not in session.server_capabilities:
            self.prompts[name] = []
            return
        if id(session) not in self._watched:
            self._watched.add(id(session))
            session.subscribe(self._watcher(name))
        try:
            async with asyncio.timeout(LIST_TIMEOUT):
                listed = await session.list_prompts()
        except (McpError, TimeoutError) as exc:
            log.info("%s: could not list prompts: %s", name, exc)
            return
        typable = TYPABLE.match(name) is not None
        self.prompts[name] = [p for p in listed if typable and TYPABLE.match(p.name)]
        self.untypable[name] = [p.name for p in listed if not (typable and TYPABLE.match(p.name))]
        self._cache = {k: v for k, v in self._cache.items() if k[0] != name}

    def _watcher(self, name: str) -> Callable[[Notification], None]:
        def changed(notification: Notification) -> None:
            if notification.method == "notifications/prompts/list_changed":
                self._stale.add(name)

        return changed

    async def refresh_stale(self) -> None:
        """Relist the prompts of servers that said their list changed."""
        for name in list(self._stale):
            await self.refresh(name)

    def commands(self) -> list[PromptCommand]:
        ready = {s.name for s in self._manager.servers() if s.state is ServerState.READY}
        return [
            PromptCommand(server, prompt)
            for server, prompts in self.prompts.items()
            if server in ready
            for prompt in prompts
        ]

    def find(self, command: str) -> PromptCommand | None:
        for found in self.commands():
            if found.name == command:
                return found
        return None

    def arguments(self, command: PromptCommand, words: Sequence[str]) -> dict[str, str]:
        """The arguments `words` give, by name; PromptProblem (one line) when they do not
        fit: too many, an unknown name, or required ones missing."""
        declared = [a.name for a in command.prompt.arguments]
        given, extra = _assigned(declared, words)
        if extra:
            takes = ", ".join(declared) if declared else "no arguments"
            raise PromptProblem(f"{command.name}: too many arguments (it takes: {takes})")
        missing = [a.name for a in command.prompt.arguments if a.required and a.name not in given]
        if missing:
            raise PromptProblem(
                f"{command.name}: missing required argument{'s' if len(missing) > 1 else ''}: "
                f"{', '.join(missing)} (usage: {command.usage()})"
            )
        return given

    async def get(self, command: PromptCommand, arguments: Mapping[str, str]) -> PromptTurn:
        session = self._manager.get(command.server).session
        if session is None:
            raise PromptProblem(f"{command.name}: the server {command.server} is not ready")
        try:
            async with asyncio.timeout(GET_TIMEOUT):
                result = await session.get_prompt(command.prompt.name, arguments)
        except TimeoutError:
            raise PromptProblem(f"{command.name}: no answer in {GET_TIMEOUT:.0f} s") from None
        except McpError as exc:
            raise PromptProblem(f"{command.name}: {exc}") from None
        return prompt_turn(command, result)

    async def complete(self, command: PromptCommand, words: Sequence[str], typed: str) -> list[str]:
        """Candidates for the argument being typed (`typed`, after the `words` before it):
        the server's completions, or none when it offers none or is slow."""
        argument, value, context = self._completing(command, words, typed)
        if argument is None:
            return []
        key = (command.server, command.prompt.name, argument, value)
        if key in self._cache:
            return self._cache[key]
        session = self._manager.get(command.server).session
        if session is None or "completions" not in session.server_capabilities:
            return []
        ref = {"type": "ref/prompt", "name": command.prompt.name}
        try:
            async with asyncio.timeout(COMPLETE_TIMEOUT):
                found = await session.complete(ref, argument, value, context=context)
        except (McpError, TimeoutError) as exc:
            log.info("%s: no completions for %s: %s", command.server, argument, exc)
            return []
        values = found.values[:MAX_CANDIDATES]
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[key] = values
        return values

    def _completing(
        self, command: PromptCommand, words: Sequence[str], typed: str
    ) -> tuple[str | None, str, dict[str, str]]:
        """(the argument being typed, its value so far, the arguments before it)."""
        declared = [a.name for a in command.prompt.arguments]
        context, _ = _assigned(declared, words)
        key, equals, value = typed.partition("=")
        if equals and key in declared:
            return key, value, context
        left = [name for name in declared if name not in context]
        return (left[0] if left else None), typed, context


def prompt_turn(command: PromptCommand, result: GetPromptResult) -> PromptTurn:
    messages: list[tuple[str, str]] = []
    left_out: list[str] = []
    for message in result.messages:
        text = _text(message.content)
        if text is None:
            left_out.append(_described(message.content))
            continue
        role = "assistant" if message.role == "assistant" else "user"
        messages.append((role, text))
    if not messages:
        raise PromptProblem(f"{command.name}: the prompt has no text for the model")
    last_user = max((i for i, (role, _) in enumerate(messages) if role == "user"), default=None)
    if last_user is None or last_user != len(messages) - 1:
        # Ending on the assistant's words: the model is handed the whole prompt as one
        # message, each part marked with who says it.
        whole = "\n\n".join(f"[{role}]\n{text}" for role, text in messages)
        return PromptTurn((), whole, tuple(left_out))
    return PromptTurn(tuple(messages[:-1]), messages[-1][1], tuple(left_out))


def _text(content: ContentBlock) -> str | None:
    if isinstance(content, TextContent):
        return content.text
    if isinstance(content, EmbeddedResource) and isinstance(content.resource, TextResourceContents):
        return content.resource.text
    return None


def _described(content: ContentBlock) -> str:
    if isinstance(content, ImageContent | AudioContent):
        return f"{content.type} content ({content.mime_type})"
    if isinstance(content, ResourceLink):
        return f"a link to the resource {content.uri}"
    if isinstance(content, EmbeddedResource):
        return f"the binary resource {content.resource.uri}"
    return f"{getattr(content, 'type', 'unknown')} content"


def _assigned(declared: Sequence[str], words: Sequence[str]) -> tuple[dict[str, str], int]:
    """The arguments `words` give by name (`name=value` for a declared name, else the next
    free argument in declared order), and how many words were left over."""
    given: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in declared:
            given[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in given]
    given.update(zip(free, positional, strict=False))
    return given, max(0, len(positional) - len(free))
