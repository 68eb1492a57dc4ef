"""Keys typed while no prompt reads them reach the next prompt, all of them and in order
(issue 27): during a turn, during a question's wait, right after a slash command's output
or a turn's answer. A real terminal: the keys wait in the pty's input queue as they do when
a user types ahead, and the kernel's line discipline would echo them, turn Enter into
Ctrl+J and swallow Ctrl+D if the REPL let the terminal fall back to cooked mode between two
prompts. The model's reply is held (`after`) until the keys are typed, so nothing here
depends on timing."""

from __future__ import annotations

import asyncio
import termios
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from tests.llm_server import Json, ScriptedLlm
from tests.ui.terminal import Terminal
from tests.ui.test_repl import MARK, Places, accepted, goodbye, paicli, places
from tests.ui.test_single_key_approvals import writing

pytestmark = pytest.mark.real
__all__ = ["places"]  # the fixture

NO_JOBS = "No background jobs."


@asynccontextmanager
async def turn_running(
    places: Places, script: Callable[[asyncio.Event], list[Json]], prompt: str
) -> AsyncIterator[tuple[ScriptedLlm, Terminal, asyncio.Event]]:
    """paicli with `prompt` sent and the turn running: the model has the request, and its
    reply waits for the event (set it once the keys are typed)."""
    held = asyncio.Event()
    async with ScriptedLlm(script(held)) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line(prompt)
        await llm.wait_for_requests(1)  # no prompt reads the terminal now
        yield llm, term, held


def answered(held: asyncio.Event) -> list[Json]:
    return [{"text": "Answered.", "after": held}]


async def test_a_line_typed_during_a_turn_runs_at_the_next_prompt(places: Places) -> None:
    async with turn_running(places, answered, "take your time") as (_, term, held):
        term.send("/jo")
        term.send("bs")
        term.send_keys("enter")
        held.set()
        await term.expect("Answered.")
        await term.expect(accepted("/jobs"))
        await term.expect(NO_JOBS)
        assert await goodbye(term) == 0
    assert "/jobs" not in term.text.split("take your time")[1].split("Answered.")[0]  # no echo


async def test_enter_enter_ctrl_d_typed_during_a_turn_leaves_afterwards(places: Places) -> None:
    async with turn_running(places, answered, "take your time") as (_, term, held):
        term.send_keys("enter", "enter", "ctrl-d")  # a cooked terminal made Ctrl+D a NUL
        assert not term.local_modes() & (termios.ICANON | termios.ECHO)  # the keys are held
        held.set()
        await term.expect("Answered.")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
        # The terminal is left as it was found: echo and line editing for the shell.
        cooked = termios.ICANON | termios.ECHO
        assert term.local_modes() & cooked == cooked


async def test_a_line_typed_before_a_question_waits_for_the_prompt(places: Places) -> None:
    """The question reads only what is typed after it shows; the line typed before it is
    neither its answer nor lost."""

    def script(held: asyncio.Event) -> list[Json]:
        return writing("notes.txt", after=held)

    async with turn_running(places, script, "write the notes") as (llm, term, held):
        term.line("/jobs")
        held.set()
        await term.expect("Allow?")
        term.send("n")
        await term.expect("Done with it.")
        await term.expect(accepted("/jobs"))
        await term.expect(NO_JOBS)
        assert await goodbye(term) == 0
    assert not (places.project / "notes.txt").exists()
    assert "denied" in llm.requests[1]["messages"][-1]["content"]


async def test_keys_typed_right_after_a_commands_output_reach_the_next_prompt(
    places: Places,
) -> None:
    """Typed the moment the output shows, while the REPL goes back to its prompt."""
    async with ScriptedLlm([{"text": "Answered."}]) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("/jobs")
        await term.expect(NO_JOBS)
        term.line("/jobs")
        await term.expect(NO_JOBS)
        term.line("hello")
        await term.expect("Answered.")
        term.send_keys("enter")  # an extra Enter, then Ctrl+D: both reach a prompt
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    assert len(llm.requests) == 1
