"""Tab completion in the REPL: slash commands and their arguments (each command's record says
which), MCP prompts (`/mcp__SERVER__PROMPT`, their arguments asked of the server),
`@server:uri` mentions, and `@path` mentions of the project's files and folders (fuzzy,
`path_completion`).

prompt_toolkit runs the async completer on the REPL's event loop as a task of its own, so a
server asked for completions never holds up typing (and is given little time anyway)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from paicli.custom_commands.files import CommandSet
from paicli.escape import one_line, terminal_safe
from paicli.servers.prompts import PREFIX, PromptIndex, PromptProblem, split_command
from paicli.ui.commands import BY_NAME, COMMANDS
from paicli.ui.path_completion import PathIndex


class ReplCompleter(Completer):
    def __init__(
        self,
        server_names: Callable[[], list[str]],
        resource_mentions: Callable[[], list[str]],
        prompts: PromptIndex | None = None,
        custom: CommandSet | None = None,
        paths: PathIndex | None = None,
    ) -> None:
        self._server_names = server_names
        self._mentions = resource_mentions
        self._paths = paths
        self._prompts = prompts
        self._custom = custom

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        before = document.text_before_cursor
        if self._prompts is None or not before.startswith(PREFIX) or " " not in before:
            for completion in self.get_completions(document, complete_event):
                yield completion
            return
        # An argument of an MCP prompt: the server is asked.
        try:
            name, words = split_command(before)
        except PromptProblem:
            return
        command = self._prompts.find(name)
        if command is None:
            return
        typed = "" if before.endswith(" ") else (words.pop() if words else "")
        _, equals, value = typed.partition("=")
        current = value if equals else typed
        for candidate in await self._prompts.complete(command, words, typed):
            # A value with spaces or control characters would not survive the line (nor
            # should a server's escape sequence reach the screen): never offered.
            if candidate.startswith(current) and _plain(candidate):
                yield Completion(
                    candidate, start_position=-len(current), display=terminal_safe(candidate)
                )

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        words = before.split(" ")
        if before.startswith("/"):
            yield from self._slash(words)
            return
        word = words[-1]
        if word.startswith("@"):
            for mention in self._mentions():
                if mention.startswith(word):
                    # A mention holds a server's resource URI: shown escaped.
                    yield Completion(
                        mention, start_position=-len(word), display=terminal_safe(mention)
                    )
            for path in self._paths.complete(word[1:]) if self._paths is not None else ():
                # (Names with control characters are never offered: shown as they are.)
                mention = f'@"{path}"' if " " in path else f"@{path}"
                yield Completion(
                    mention,
                    start_position=-len(word),
                    display=path,
                    display_meta="file" if not path.endswith("/") else "folder",
                )

    def _slash(self, words: list[str]) -> Iterable[Completion]:
        if len(words) == 1:
            for command in COMMANDS:
                if command.name.startswith(words[0]):
                    yield Completion(
                        command.name, start_position=-len(words[0]), display_meta=command.help
                    )
            for custom in self._custom.sorted() if self._custom is not None else ():
                name = f"/{custom.name}"
                if name.startswith(words[0]):
                    # The name is plain (checked when loaded); the description is escaped.
                    about = custom.argument_hint or custom.description
                    yield Completion(
                        name, start_position=-len(words[0]), display_meta=one_line(about, 60)
                    )
            for prompt in self._prompts.commands() if self._prompts is not None else ():
                if prompt.name.startswith(words[0]):
                    about = prompt.prompt.title or prompt.prompt.description or ""
                    # The name is plain (only such prompts are commands); the text is escaped.
                    yield Completion(
                        prompt.name,
                        start_position=-len(words[0]),
                        display_meta=one_line(about, 60),
                    )
            return
        found = BY_NAME.get(words[0])
        if found is None:
            return
        typed = words[-1]
        for candidate in found.arguments(words[1:-1], self._server_names):
            if candidate.startswith(typed):
                # Server names come from config files (a project's too): shown escaped.
                yield Completion(
                    candidate, start_position=-len(typed), display=terminal_safe(candidate)
                )


def _plain(text: str) -> bool:
    return bool(text) and terminal_safe(text) == text and not any(c.isspace() for c in text)
