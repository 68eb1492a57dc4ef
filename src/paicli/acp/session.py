"""One ACP session: one paicli `Runtime` (opened by `open_runtime` in a task of its own,
which owns it until the session closes), the turns the editor prompts, and their events
streamed as `session/update`s in the order they happened.

A turn runs in a task of its own so that `session/cancel` can cancel it (MCP servers are
told, the conversation is settled as after Ctrl+C) while the `session/prompt` request
answers `cancelled`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from acp.interfaces import Client
from acp.schema import StopReason

from paicli.acp.commands import command_of
from paicli.acp.updates import Update, event_updates
from paicli.agent.events import AgentEvent, ModelReplied, Notice, TurnEnded
from paicli.errors import PaicliError
from paicli.runtime import Runtime
from paicli.runtime.custom_turn import running
from paicli.tools.builtin.editor_files import EDITOR_FILES, EditorFiles

__all__ = ["EditorSession", "TurnFailed", "stop_reason"]

log = logging.getLogger("paicli.acp")

# The servers worth waiting for before a first turn (each has its own start timeout too).
SERVER_WAIT = 60.0


class TurnFailed(PaicliError):
    """The turn could not end (the model endpoint failed): the message says why."""


@dataclass
class EditorSession:
    """What one editor session holds: its id (that of its saved conversation), its runtime
    and the close event its owner task waits on."""

    id: str
    runtime: Runtime
    client: Client
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    files: EditorFiles | None = None  # the editor's fs, when it offered it
    replies: int = 0  # the model's replies so far: each one's tool calls get its prefix
    _turn: asyncio.Task[TurnEnded | None] | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def send(self, updates: list[Update]) -> None:
        for update in updates:
            await self.client.session_update(session_id=self.id, update=update)

    async def prompt(self, text: str) -> StopReason:
        """One turn of the conversation: its events streamed, then why it stopped."""
        async with self._lock:  # an editor that prompts again before the end waits its turn
            runtime = self.runtime
            if (starting := runtime.manager.starting(without_catalogue=True)) != []:
                await runtime.manager.wait_ready(starting, timeout=SERVER_WAIT)
            queue: asyncio.Queue[tuple[str, AgentEvent] | None] = asyncio.Queue()
            finish: list[str | None] = [None]

            def emit(event: AgentEvent) -> None:
                # The prefix is decided as the event happens: the pump may lag behind.
                if isinstance(event, ModelReplied):
                    self.replies += 1
                queue.put_nowait((self.call_prefix(), event))

            async with asyncio.TaskGroup() as group:
                pump = group.create_task(self._pump(queue, finish))
                self._turn = group.create_task(self._run(text, emit))
                try:
                    ended = await self._turn
                finally:
                    self._turn = None
                    queue.put_nowait(None)
                await pump
            await asyncio.to_thread(runtime.save_session)
            return stop_reason(ended, finish[0], runtime.redactor.redact_known)

    def call_prefix(self) -> str:
        """What goes before a tool call's id in the current reply (see `event_updates`)."""
        return f"{self.replies}-"

    def cancel(self) -> None:
        """`session/cancel`: the running turn stops (nothing when none runs)."""
        if self._turn is not None:
            self._turn.cancel()

    async def _run(self, text: str, emit: Callable[[AgentEvent], None]) -> TurnEnded | None:
        agent = self.runtime.agent
        assert agent is not None
        EDITOR_FILES.set(self.files)  # this turn's task: its tool calls inherit it
        # A prompt that starts with /NAME runs that custom command (for this turn only).
        command, lines = command_of(self.runtime, text)
        for line in lines:
            emit(Notice(line))
        try:
            async with running(self.runtime, command, lambda line: emit(Notice(line))):
                return await agent.run(command.text if command else text, emit)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.uncancel() == 0:
                return None  # `cancel` asked for this: the turn ended cancelled
            raise

    async def _pump(
        self, queue: asyncio.Queue[tuple[str, AgentEvent] | None], finish: list[str | None]
    ) -> None:
        root, redact = self.runtime.root, self.runtime.redactor.redact_known
        while (item := await queue.get()) is not None:
            prefix, event = item
            if isinstance(event, ModelReplied):
                finish[0] = event.finish_reason
            try:
                await self.send(event_updates(event, root, redact, prefix))
            except ConnectionError:
                log.debug("an update could not be sent: the editor went away")


def stop_reason(
    ended: TurnEnded | None, finish: str | None, redact: Callable[[str], str]
) -> StopReason:
    """ACP's stop reason for a turn that ended so (None: cancelled); `TurnFailed` when the
    model endpoint failed."""
    if ended is None or ended.reason == "cancelled":
        return "cancelled"
    if ended.reason == "step_budget":
        return "max_turn_requests"
    if ended.reason == "error":
        raise TurnFailed(redact(ended.error or "the turn failed"))
    if finish == "length":
        return "max_tokens"
    if finish == "content_filter":
        return "refusal"
    return "end_turn"


async def owned(
    opening: Callable[[], contextlib.AbstractAsyncContextManager[Runtime]],
    ready: asyncio.Future[Runtime],
    closing: Callable[[], Awaitable[object]],
) -> None:
    """A session's owner task: opens the runtime, hands it over through `ready`, and keeps
    it open until `closing` returns (the runtime is closed in the task that opened it)."""
    try:
        async with opening() as runtime:
            if runtime.sandbox is not None:  # the first command need not wait for the probe
                runtime.sandbox.prefetch()
            ready.set_result(runtime)
            await closing()
    except Exception as exc:
        if not ready.done():
            ready.set_exception(exc)
        else:
            log.warning("a session ended with an error: %s", exc)
