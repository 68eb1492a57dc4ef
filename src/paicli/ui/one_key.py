"""A question answered by one key on the terminal (an approval: y, n, s, p, a, m), with no
Enter; Enter answers the default. A small prompt_toolkit application of one line: other keys
do nothing, Ctrl+C is KeyboardInterrupt and Ctrl+D EOFError, as at the REPL's prompt. Keys
that came in the same read as the answer are not kept for the next question or prompt (they
would answer it: "y" then a habitual Enter)."""

from __future__ import annotations

from prompt_toolkit.application import Application, get_app_session
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
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
    session_input = get_app_session().input
    clear_typeahead(session_input)
    try:
        # handle_sigint=False: the REPL's own SIGINT handler stays (see TerminalInput.read).
        return await app.run_async(handle_sigint=False)
    finally:
        clear_typeahead(session_input)
