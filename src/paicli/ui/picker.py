"""A list to pick one item from on the terminal (`/resume`, `/model`): ↑/↓ (or k/j) move,
a digit picks that item, Enter picks the marked one, Esc or Ctrl+C picks none. The items are
shown escaped, one line each. A small prompt_toolkit application run without its own SIGINT
handler (the REPL's stays, as for every question)."""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import FormattedTextControl, Layout, Window

from paicli.escape import one_line
from paicli.ui.one_key import typed_before
from paicli.ui.screen_secrets import screen_text

WIDTH = 110  # an item's line is cut to this many characters


async def pick(title: str, items: Sequence[str], *, marked: int = 0) -> int | None:
    """The index of the item picked, or None (Esc, Ctrl+C, Ctrl+D, or no items)."""
    if not items:
        return None
    at = [min(max(marked, 0), len(items) - 1)]
    # Escaped and redacted as every line paicli prints (a saved conversation's first words
    # may quote a key the user pasted).
    lines = [one_line(screen_text(item), WIDTH) for item in items]

    def shown() -> FormattedText:
        parts: list[tuple[str, str]] = [("bold", one_line(screen_text(title), WIDTH) + "\n")]
        for number, line in enumerate(lines):
            here = number == at[0]
            mark = ">" if here else " "
            digit = f"{number + 1}." if number < 9 else "  "
            parts.append(("reverse" if here else "", f"{mark} {digit} {line}\n"))
        parts.append(("class:hint", "↑/↓ move · Enter picks · 1-9 pick · Esc: none"))
        return FormattedText(parts)

    bindings = KeyBindings()

    def move(step: int) -> None:
        at[0] = (at[0] + step) % len(items)

    bindings.add("up")(lambda event: move(-1))
    bindings.add("k")(lambda event: move(-1))
    bindings.add("down")(lambda event: move(1))
    bindings.add("j")(lambda event: move(1))

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        event.app.exit(result=at[0])

    for digit in range(1, min(len(items), 9) + 1):

        def chosen(event: KeyPressEvent, index: int = digit - 1) -> None:
            event.app.exit(result=index)

        bindings.add(str(digit))(chosen)

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d")
    def _none(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    @bindings.add("<any>")
    def _other(event: KeyPressEvent) -> None:
        """Other keys pick nothing."""

    app: Application[int | None] = Application(
        layout=Layout(Window(FormattedTextControl(shown, focusable=True), wrap_lines=False)),
        key_bindings=bindings,
        full_screen=False,
        erase_when_done=True,
    )
    with typed_before(keep_after=False):  # a key typed before the list showed picks nothing
        return await app.run_async(handle_sigint=False)
