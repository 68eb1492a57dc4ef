"""A question answered by one key on the terminal (an approval: y, n, s, p, a, m), with no
Enter; Enter answers the default. A small prompt_toolkit application of one line: other keys
do nothing, Ctrl+C is KeyboardInterrupt and Ctrl+D EOFError, as at the REPL's prompt.

A question reads only the keys typed after it showed (`typed_before`): those typed earlier
(a line typed ahead during a turn) wait for the next prompt, in order, so none of them
answers it and none is lost. Keys that came in the same read as a one-key answer are not
kept (they would answer the next question or send the next prompt: "y" then a habitual
Enter)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from prompt_toolkit.application import Application, get_app_session
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.input.typeahead import clear_typeahead, get_typeahead, store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent
from prompt_toolkit.layout import FormattedTextControl, Layout, Window

from paicli.escape import terminal_safe
from paicli.ui.screen_secrets import screen_text


async def read_key(prompt: str, keys: str, *, default: str) -> str:
    """The key among `keys` the user pressed (lower case), or `default` for Enter; the
    question's line then reads the answer."""
    chosen: list[str] = []
    prompt = terminal_safe(screen_text(prompt))  # (a command's words may be in it)

    def shown() -> FormattedText:
        return FormattedText([("", prompt), ("bold", chosen[0] if chosen else "")])

    bindings = KeyBindings()

    def answer(key: str) -> None:
        def pressed(event: KeyPressEvent) -> None:
            chosen.append(key)
            event.app.exit(result=key)

        for variant in {key, key.upper()}:
            bindings.add(variant)(pressed)

    for key in keys:
        answer(key)

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        chosen.append(default)
        event.app.exit(result=default)

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    @bindings.add("c-d")
    def _end(event: KeyPressEvent) -> None:
        event.app.exit(exception=EOFError())

    @bindings.add("<any>")
    def _other(event: KeyPressEvent) -> None:
        """Any other key answers nothing."""

    control = FormattedTextControl(shown, show_cursor=True)
    app: Application[str] = Application(
        layout=Layout(Window(control, dont_extend_height=True, wrap_lines=True)),
        key_bindings=bindings,
        full_screen=False,
    )
    with typed_before(keep_after=False):
        # handle_sigint=False: the REPL's own SIGINT handler stays (see TerminalInput.read).
        return await app.run_async(handle_sigint=False)


@contextlib.contextmanager
def typed_before(*, keep_after: bool) -> Iterator[None]:
    """Around a question on the terminal: the keys typed before it showed (read already by
    the last prompt, or still waiting in the terminal, which the REPL holds between
    prompts) are set aside and given back afterwards to the next prompt, ahead of what is
    typed later. `keep_after` False: keys read along with the answer are dropped."""
    source = get_app_session().input
    early = get_typeahead(source)
    while keys := source.read_keys():  # (never blocks: only what is there)
        early += keys
    early += source.flush_keys()  # (a lone Esc, not the start of a longer key)
    try:
        yield
    finally:
        after: list[KeyPress] = get_typeahead(source) if keep_after else []
        clear_typeahead(source)
        store_typeahead(source, [*early, *after])
