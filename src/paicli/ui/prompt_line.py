"""The REPL's input line, and the quick start that draws it before anything else loads.

A prompt_toolkit session with the REPL's keys (Enter sends, a trailing backslash, Ctrl+J or
Escape-Enter add a line, Ctrl+C clears the line or, at an empty prompt, arms the exit,
Shift+Tab switches the permission mode, Esc Esc clears the line or, at an empty prompt,
opens `/rewind`), the permission mode before the mark and a history
file whose failures cost the history, never the prompt.

This module loads little of paicli (the home folder's layout, private files, errors):
`quick_repl` draws the prompt with prompt_toolkit alone (about 0.1 s after launch), then
loads the runtime in a thread while the prompt already takes keys, and hands the live prompt
to `paicli.ui.repl_start`, whose REPL prints its banner above it and answers what was typed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import signal
import sys
import termios
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, DynamicCompleter
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from paicli.errors import PaicliError
from paicli.home import PaicliHome
from paicli.private_files import make_private_dir
from paicli.ui.above_prompt import above_prompt

PROMPT = "› "  # noqa: RUF001 - the prompt mark, not a typo for ">"
REWIND = "/rewind"  # what Esc Esc at an empty prompt enters


class ArmExit(PaicliError):
    """Ctrl+C at an empty prompt, the first time: warn, and leave on the next one (raised by
    the key binding out of the prompt, handled by the REPL loop, never beyond it)."""


class ModeSwitch(Protocol):
    """The permission modes (`paicli.permissions.approval.ApprovingToolbox`), as the line sees
    them."""

    @property
    def mode(self) -> _Named: ...

    def switch(self) -> object: ...


class _Named(Protocol):
    @property
    def value(self) -> str: ...


@dataclass
class LineState:
    """What the keys and the prompt mark read: filled in by the REPL once its runtime is open
    (until then Shift+Tab does nothing and nothing is completed)."""

    exit_armed: bool = False  # Ctrl+C was pressed once at this empty prompt
    approvals: ModeSwitch | None = None
    initial_mode: str | None = None  # shown until `approvals` is there (--permission-mode)
    early_switches: int = 0  # Shift+Tab pressed before `approvals` was there
    completer: Completer | None = None

    def take(self, approvals: ModeSwitch | None) -> None:
        """The runtime's permission modes, with the switches asked for before it opened."""
        self.approvals = approvals
        if approvals is not None:
            for _ in range(self.early_switches):
                approvals.switch()
        self.early_switches = 0


class SafeFileHistory(FileHistory):
    """Prompt history in a file; a file that cannot be read or written (disk full, read-only
    PAICLI_HOME) costs the history, never the prompt: one warning, then silence."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self._warned = False

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except OSError as exc:
            self._warn(exc)
            return []

    def store_string(self, string: str) -> None:
        try:
            super().store_string(string)
        except OSError as exc:
            self._warn(exc)

    def _warn(self, exc: OSError) -> None:
        if not self._warned:
            self._warned = True
            from paicli.ui.output import err  # noqa: PLC0415 - not before the prompt is drawn

            err(f"History not saved: {exc}")


def keys_held(attrs: list[Any]) -> list[Any]:
    """Terminal settings (`termios.tcgetattr`) that hold keys for the next prompt: no echo
    (nor of ^C), Enter stays a carriage return (as a line feed it would reach the prompt as
    Ctrl+J, a new line), no canonical mode (Ctrl+D stays a key rather than an end of file,
    which the kernel would turn into a NUL for the next prompt). Ctrl+C still signals."""
    held = [*attrs[:6], list(attrs[6])]
    held[0] &= ~termios.ICRNL
    held[3] &= ~(termios.ECHO | termios.ECHOCTL | termios.ICANON)
    held[6][termios.VMIN], held[6][termios.VTIME] = 1, 0
    return held


@contextlib.contextmanager
def holding_keys(wanted: bool = True) -> Iterator[None]:
    """While no prompt reads the terminal (a turn, a slash command, the moments between two
    prompts or a prompt and a question), the keys typed wait intact for the next reader, in
    order: the terminal holds them (`keys_held`) for the whole block, and every
    prompt_toolkit application in it returns the terminal to that state when it ends (it
    restores what it found). Left in cooked mode for even a moment, the kernel would echo
    them, turn Enter into Ctrl+J and swallow Ctrl+D. `wanted` False, or stdin not a
    terminal: nothing changes."""
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd) if wanted else None
    except (termios.error, ValueError, OSError):
        saved = None
    if saved is None:
        yield
        return
    termios.tcsetattr(fd, termios.TCSANOW, keys_held(saved))
    try:
        yield
    finally:
        with contextlib.suppress(termios.error, ValueError, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def prompt_mark(state: LineState) -> FormattedText:
    """The prompt mark, with the permission mode before it unless it is the default."""
    approvals = state.approvals
    mode = approvals.mode.value if approvals is not None else state.initial_mode or "default"
    if mode == "default":
        return FormattedText([("", PROMPT)])
    style = "bold red" if mode == "yolo" else "bold"
    return FormattedText([(style, f"[{mode}]"), ("", " " + PROMPT)])


def prompt_session(state: LineState, history_file: Path) -> PromptSession[str]:
    keys = KeyBindings()

    @keys.add("c-c")
    def _(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
            state.exit_armed = False
            return
        # One press at an empty prompt is easily a reflex: it ends this prompt with a
        # warning (printed by the loop, outside the prompt), and a second press at the
        # next one leaves; a line entered in between starts over.
        event.app.exit(exception=EOFError() if state.exit_armed else ArmExit())

    @keys.add("s-tab")
    def _(event: KeyPressEvent) -> None:
        if state.approvals is None:
            state.early_switches += 1  # made once the runtime is open
        else:
            state.approvals.switch()
            event.app.invalidate()  # the prompt shows the new mode

    @keys.add("escape", "escape")
    def _(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:  # as Claude Code: Esc Esc clears the line (Up brings it back)
            buffer.append_to_history()
            buffer.reset()
            return
        event.app.exit(result=REWIND)  # at an empty prompt: the rewind menu

    @keys.add("escape", "enter")
    @keys.add("c-j")
    def _(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("enter")
    def _(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text.endswith("\\"):  # a trailing backslash continues the line
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    with contextlib.suppress(OSError):
        make_private_dir(history_file.parent)
    return PromptSession(
        lambda: prompt_mark(state),
        history=SafeFileHistory(str(history_file)),
        completer=DynamicCompleter(lambda: state.completer),
        key_bindings=keys,
        complete_while_typing=False,
    )


async def read_line(session: PromptSession[str], default: str = "") -> str:
    """One prompt (its line holding `default`); what is printed meanwhile appears above it."""
    with above_prompt(session.app):
        return await session.prompt_async(handle_sigint=False, default=default)


class LiveLine:
    """A prompt already on the screen, handed from the quick start to the REPL: its session,
    its state, and the task reading the first line (done if the user already answered).

    If that line is entered (or the prompt ends with Ctrl+C or Ctrl+D) before the REPL has
    taken over (`take_over`), the user is told it waits; the keys typed meanwhile wait for
    the next prompt (the quick start holds them, `holding_keys`), and a Ctrl+C meanwhile is
    counted (`release` says how many) rather than stopping paicli.
    """

    def __init__(self, session: PromptSession[str], state: LineState) -> None:
        self.session = session
        self.state = state
        self._loop = asyncio.get_running_loop()
        self._interrupts = 0
        self._released = False
        self._taken = False
        self.held = False  # the first prompt ended before the REPL took over
        self._loop.add_signal_handler(signal.SIGINT, self._interrupted)
        self.first = self._loop.create_task(read_line(session))
        self.first.add_done_callback(self._hold)

    def _interrupted(self) -> None:
        self._interrupts += 1

    def take_over(self) -> None:
        """The REPL waits for the first line itself from now on."""
        self._taken = True

    def _hold(self, first: asyncio.Task[str]) -> None:
        if self._taken or self._released or first.cancelled():
            return
        self.held = True
        ended = first.exception()
        from paicli.ui.output import out  # noqa: PLC0415 - after the prompt, not before it

        if ended is None:
            out("⋯ paicli is still loading; your line goes once it is ready (Ctrl+C takes it back)")
        elif isinstance(ended, ArmExit):
            out("Press Ctrl+C again to exit.")

    def release(self) -> int:
        """The signal handler gone; the Ctrl+C presses counted."""
        if not self._released:
            self._released = True
            self._loop.remove_signal_handler(signal.SIGINT)
        return self._interrupts


async def quick_repl(options: argparse.Namespace, flags: Mapping[str, str | None]) -> int:
    """The REPL, its prompt drawn first: the rest of paicli loads behind it."""
    state = LineState(initial_mode=options.mode.value if options.mode is not None else None)
    session = prompt_session(state, PaicliHome.from_environ().history_file)
    with holding_keys():  # (before the first prompt, which restores what it finds)
        return await _quick_repl(options, flags, state, session)


async def _quick_repl(
    options: argparse.Namespace,
    flags: Mapping[str, str | None],
    state: LineState,
    session: PromptSession[str],
) -> int:
    drawn = asyncio.Event()
    session.app.after_render += lambda _: drawn.set()
    line = LiveLine(session, state)
    try:
        # The runtime's imports wait for the first frame (they would compete with it).
        shown = asyncio.ensure_future(drawn.wait())
        await asyncio.wait((shown, line.first), return_when=asyncio.FIRST_COMPLETED)
        shown.cancel()
        await asyncio.gather(shown, return_exceptions=True)
        repl = await asyncio.to_thread(importlib.import_module, "paicli.ui.repl_start")
        code: int = await repl.repl_main(options, flags, ask_trust=None, line=line)
        return code
    finally:
        line.first.cancel()  # (a no-op once answered; the answer or error is collected)
        await asyncio.gather(line.first, return_exceptions=True)
        line.release()
