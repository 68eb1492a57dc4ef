"""Tab completion in the REPL: slash commands and their arguments (each command's record says
which), `@server:uri` mentions."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from paicli.tools.escape import terminal_safe

from .commands import BY_NAME, COMMANDS


class ReplCompleter(Completer):
    def __init__(
        self, server_names: Callable[[], list[str]], resource_mentions: Callable[[], list[str]]
    ) -> None:
        self._server_names = server_names
        self._mentions = resource_mentions

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

    def _slash(self, words: list[str]) -> Iterable[Completion]:
        if len(words) == 1:
            for command in COMMANDS:
                if command.name.startswith(words[0]):
                    yield Completion(
                        command.name, start_position=-len(words[0]), display_meta=command.help
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
