"""`SafeConsole`: a rich Console that cannot be made to write a server's or model's control
characters, whatever renderable it is given (the REPL's console, and tables in `paicli mcp`).

Markup, emoji codes and highlighting are off, so text prints literally ("x[/]" and ":smile:"
neither crash nor restyle). A plain string is escaped before rich sees it (rich would drop a
carriage return or bell silently; escaped, the user sees it), and every text segment rich
renders passes `terminal_safe`, its secrets redacted (`screen_secrets`). Callers still escape
what they put in a `Text`, so widths are measured on what is shown; this is the net under them.
Control segments (cursor moves by Live and status) are rich's own and pass as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import IO

from rich.console import Console, ConsoleOptions, JustifyMethod, OverflowMethod, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from paicli.escape import terminal_safe
from paicli.ui.screen_secrets import screen_text


class SafeConsole(Console):
    """A rich Console that prints text literally and escaped (see the module docstring)."""

    def __init__(
        self,
        *,
        stderr: bool = False,
        force_terminal: bool | None = None,
        file: IO[str] | None = None,
        width: int | None = None,
    ) -> None:
        super().__init__(
            stderr=stderr,
            force_terminal=force_terminal,
            file=file,
            width=width,
            markup=False,
            emoji=False,
            highlight=False,
        )

    def on_broken_pipe(self) -> None:
        """The reader of stdout went away: raised as it is (rich would exit at once), so the
        command stops its servers on the way out and `paicli.cli.main` ends it quietly."""
        raise BrokenPipeError

    def render_str(
        self,
        text: str,
        *,
        style: str | Style = "",
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        emoji: bool | None = None,
        markup: bool | None = None,
        highlight: bool | None = None,
        highlighter: Callable[[str | Text], Text] | None = None,
    ) -> Text:
        return super().render_str(
            terminal_safe(screen_text(text)),
            style=style,
            justify=justify,
            overflow=overflow,
            emoji=False,
            markup=False,
            highlight=highlight,
            highlighter=highlighter,
        )

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is not None:
                yield segment
                continue
            shown = terminal_safe(screen_text(segment.text))
            yield segment if shown == segment.text else Segment(shown, segment.style)
