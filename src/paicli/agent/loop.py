"""The agent loop: ask the model, run the tools it calls, feed the results back, repeat.

One `run(text, emit)` is one user turn. Several tool calls in one model reply run at once and
their results go back in call order. A tool failure is a result the model reads; a model
endpoint failure ends the turn with an error (and the conversation is left as before the
turn). Cancelling the task running `run` (Ctrl+C) cancels in-flight tool calls (MCP servers
get `notifications/cancelled`) and leaves a conversation the model can continue.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Protocol

from paicli.agent import compaction
from paicli.agent.events import (
    CALL_EVENTS,
    CallEvents,
    EventSink,
    ModelReplied,
    Notice,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.agent.turn_messages import (
    NO_IMAGES,
    add_usage,
    assistant_message,
    names,
    parse_arguments,
    tool_images,
    tool_message,
    with_id,
)
from paicli.llm.errors import LlmError
from paicli.llm.events import Completion, ReasoningDelta, Retrying, TextDelta, ToolCallRequest
from paicli.llm.messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    SystemMessage,
    ToolDefinition,
    UserMessage,
    whole_text,
)
from paicli.servers.retry import Attempt, listening
from paicli.tools.base import PROGRESS, ProgressUpdate, Toolbox, ToolOutcome, ToolSpec
from paicli.tools.mcp.jobs import JobBoard
from paicli.tools.mcp.results import for_model
from paicli.tools.search.offer import SEARCH_TOOL, Deferral, ToolOffer

DEFAULT_MAX_STEPS = 40


def replied(
    completion: Completion, calls: Sequence[ToolCallRequest], seconds: float
) -> ModelReplied:
    """The `ModelReplied` event of `completion`, its calls given ids."""
    step: dict[str, int] = {}
    add_usage(step, completion)
    return ModelReplied(
        completion.text,
        completion.reasoning,
        tuple(calls),
        completion.finish_reason,
        step,
        seconds,
    )


class ModelClient(Protocol):
    """What the loop needs of `paicli.llm.client.LlmClient`."""

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncGenerator[object, None]: ...

    async def aclose(self) -> None: ...


class TurnHooks(Protocol):
    """The user's hooks a turn runs (`paicli.hooks.session.SessionHooks`)."""

    async def prompt_submitted(self, prompt: str) -> tuple[str | None, str]:
        """(why the prompt is blocked, or None; context to add to it)."""
        ...

    async def stopping(self, answer: str, active: bool) -> str | None:
        """Why the model must go on instead of ending the turn (None: it ends)."""
        ...


# A Stop hook may send the model on at most this many times in a row (as Claude Code).
MAX_STOP_CONTINUATIONS = 8


class Agent:
    """A conversation with one model over one toolbox."""

    def __init__(
        self,
        llm: ModelClient,
        toolbox: Toolbox,
        *,
        system_prompt: str,
        context_window: int,
        max_steps: int = DEFAULT_MAX_STEPS,
        offer: ToolOffer | None = None,
        context: Callable[[], str] | None = None,
        prepare: Callable[[], Awaitable[None]] | None = None,
        hooks: TurnHooks | None = None,
    ) -> None:
        self.llm = llm
        self.hooks = hooks
        # Which tool definitions each request carries (None: all of them, always).
        self.offer = offer
        self._told: Deferral | None = None
        self.toolbox = toolbox
        self.context_window = context_window
        self.max_steps = max_steps
        self._system = system_prompt
        # Added to the system prompt before each request (memory files, server instructions),
        # so what changed meanwhile (a server came up, a file was written) is in it.
        self._context = context
        # Awaited before each request, ahead of `context` (the MCP servers' skills listed).
        self._prepare = prepare
        self.messages: list[Message] = [SystemMessage(role="system", content=system_prompt)]
        self.images = False  # whether the model takes image parts (`ModelSettings.images`)
        # What a cancellation must settle: text streamed so far, tool calls not answered yet.
        self._partial = ""
        self._pending: tuple[list[ToolCallRequest], list[ToolOutcome | None]] | None = None
        # Background jobs (MCP tasks): their results reach the model before each request.
        self.jobs: JobBoard | None = None

    def _refresh_system(self) -> None:
        if self._context is None or not self.messages or self.messages[0]["role"] != "system":
            return
        extra = self._context()
        content = f"{self._system}\n\n{extra}" if extra else self._system
        if self.messages[0].get("content") != content:
            self.messages[0] = SystemMessage(role="system", content=content)

    def switch_model(self, llm: ModelClient, context_window: int) -> ModelClient:
        """Talk to `llm` from the next request on, keeping the conversation; the client it
        replaces is returned for the caller to close."""
        old, self.llm = self.llm, llm
        self.context_window = context_window
        return old

    def restore(self, messages: Sequence[Message]) -> None:
        """Continue a saved conversation: its messages after this run's system prompt."""
        self.messages = [
            SystemMessage(role="system", content=self._system),
            *(m for m in messages if m["role"] != "system"),
        ]

    async def compact(self, instructions: str, emit: EventSink) -> bool:
        """`/compact`: summarise the whole conversation so far (following `instructions`,
        if any) into one message; False, with the history kept, when there is nothing to
        summarise or the summary fails."""
        messages, note = await compaction.compact(
            self.messages, self.llm, self.context_window, instructions
        )
        emit(Notice(note))
        if messages is None:
            return False
        self.messages = messages
        return True

    def clear(self) -> None:
        self.messages = [SystemMessage(role="system", content=self._system)]

    async def run(
        self,
        text: str,
        emit: EventSink,
        *,
        prior: Sequence[Message] = (),
        images: Sequence[ImagePart] = (),
    ) -> TurnEnded:
        """One turn: `text` from the user (after `prior`, messages an MCP prompt puts
        before it; with `images`, sent only if the model takes them), then the model and its
        tool calls until it answers."""
        text = whole_text(text)
        if self.hooks is not None:
            blocked, extra = await self.hooks.prompt_submitted(text)
            if blocked is not None:
                emit(Notice(f"A UserPromptSubmit hook blocked the prompt: {blocked}"))
                ended = TurnEnded("error", error=f"blocked by a hook: {blocked}")
                emit(ended)
                return ended
            if extra:
                text = f"{text}\n\n<user-prompt-submit-hook>\n{extra}\n</user-prompt-submit-hook>"
        # The history as it was, restored if the model endpoint fails. A copy, not an index:
        # summarising may rebuild the list during the turn.
        before = list(self.messages)
        self._partial, self._pending = "", None
        question = self._question(text, images, emit)
        self.messages.extend(prior)
        self.messages.append(question)
        usage: dict[str, int] = {}
        answer = ""
        step = 0
        continued = 0  # times a Stop hook sent the model on
        if self.offer is not None:
            self.offer.begin_turn()
        try:
            while step < self.max_steps:
                step += 1
                if self.jobs is not None:
                    self.jobs.deliver(self.messages)
                if self._prepare is not None:
                    await self._prepare()
                self._refresh_system()
                specs = self.toolbox.specs()
                tools = [spec.openai_tool() for spec in self._offered(specs, emit)]
                await self._fit_context(tools, emit)
                asked = time.monotonic()
                completion = await self._ask(tools, emit)
                add_usage(usage, completion)
                answer = completion.text or answer
                calls = [with_id(call, n) for n, call in enumerate(completion.tool_calls)]
                self.messages.append(assistant_message(completion.text, calls))
                emit(replied(completion, calls, time.monotonic() - asked))
                if not calls and (reason := await self._stop_hook(completion.text, continued)):
                    continued += 1
                    self.messages.append(UserMessage(role="user", content=reason))
                    continue
                if not calls and self.jobs is not None and await self.jobs.settle(self.messages):
                    continue  # jobs ended: the model reads their results
                if not calls:
                    ended = TurnEnded("done", completion.text, steps=step, usage=usage)
                    emit(ended)
                    return ended
                await self._run_tools(calls, {s.name: s for s in specs}, emit)
                self._keep_offering(calls, specs)
            emit(Notice(f"Stopped after {self.max_steps} steps (the step budget)."))
            ended = TurnEnded("step_budget", answer, steps=step, usage=usage)
            emit(ended)
            return ended
        except LlmError as exc:
            self.messages = before
            ended = TurnEnded("error", error=str(exc), steps=step, usage=usage)
            emit(ended)
            return ended
        except asyncio.CancelledError:
            self._settle_after_cancel(question)
            emit(TurnEnded("cancelled", answer, steps=step, usage=usage))
            raise
        finally:
            self._partial, self._pending = "", None

    def _question(self, text: str, images: Sequence[ImagePart], emit: EventSink) -> UserMessage:
        """The user's message: `text`, with `images` if the model takes them (if not, a
        notice says they were left out)."""
        question = UserMessage(role="user", content=text)
        if images and not self.images:
            emit(Notice(f"{len(images)} image(s) left out: {NO_IMAGES}"))
        elif images:
            parts: list[ContentPart] = [{"type": "text", "text": text}, *images]
            question["content"] = parts
        return question

    def _keep_offering(self, calls: list[ToolCallRequest], specs: list[ToolSpec]) -> None:
        """The tools the model called (but search_tools itself) are offered again in the
        next turns (`ToolOffer.used`)."""
        if self.offer is not None:
            for call in calls:
                if call.name != SEARCH_TOOL and any(s.name == call.name for s in specs):
                    self.offer.used(call.name)

    async def _stop_hook(self, answer: str, continued: int) -> str | None:
        """What a Stop hook tells the model when it sends it on (None: the turn ends)."""
        if self.hooks is None or continued >= MAX_STOP_CONTINUATIONS:
            return None
        reason = await self.hooks.stopping(answer, continued > 0)
        return f"<stop-hook>\n{reason}\n</stop-hook>" if reason else None

    def _offered(self, specs: list[ToolSpec], emit: EventSink) -> list[ToolSpec]:
        """The tools this request carries; says so when tools start being left out or the
        servers' tools change (a deferred tool can still be called: dispatch uses `specs`)."""
        if self.offer is None:
            return specs
        offered = self.offer.select(specs, self.context_window)
        deferral = self.offer.deferral
        told = self._told
        if deferral is not None and (told is None or told.total != deferral.total):
            emit(
                Notice(
                    f"Tool search: {deferral.deferred} of {deferral.total} MCP tools are left "
                    f"out of each request (about {deferral.saved_tokens:,} tokens saved); the "
                    "model finds them with search_tools."
                )
            )
        self._told = deferral
        return offered

    async def _ask(self, tools: list[ToolDefinition], emit: EventSink) -> Completion:
        completion: Completion | None = None
        self._partial = ""
        async with contextlib.aclosing(self.llm.stream(self.messages, tools)) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    self._partial += event.text
                    emit(event)
                elif isinstance(event, ReasoningDelta | Retrying):
                    emit(event)
                elif isinstance(event, Completion):
                    completion = event
        if completion is None:
            raise LlmError("the model's stream ended without a completion")
        self._partial = ""
        return completion

    async def _run_tools(
        self, calls: list[ToolCallRequest], specs: Mapping[str, ToolSpec], emit: EventSink
    ) -> None:
        outcomes: list[ToolOutcome | None] = [None] * len(calls)
        self._pending = (calls, outcomes)
        parsed = [parse_arguments(call.arguments) for call in calls]
        for call, arguments in zip(calls, parsed, strict=True):
            spec = specs.get(call.name)
            args = arguments if isinstance(arguments, dict) else None
            emit(ToolStarted(call.id, call.name, args, spec.server if spec else None))

        async def one(index: int) -> None:
            call, arguments = calls[index], parsed[index]
            started = time.monotonic()
            running: list[float] = []  # when the call started running (after approval)

            def report(update: ProgressUpdate) -> None:
                if not running:
                    running.append(time.monotonic())
                seconds = time.monotonic() - running[0]
                emit(
                    ToolProgress(
                        call.id, call.name, seconds, update.progress, update.total, update.message
                    )
                )

            # This task's own context: the tool reports to this call's line only.
            PROGRESS.set(report)
            CALL_EVENTS.set(CallEvents(call.id, emit))

            def on_retry(attempt: Attempt) -> None:
                emit(
                    ToolRetrying(
                        call.id,
                        call.name,
                        attempt.number + 1,
                        attempt.of,
                        attempt.reason,
                        attempt.delay,
                    )
                )

            with listening(on_retry):
                outcome = await self._call(call, arguments, specs.get(call.name), specs)
            outcomes[index] = outcome
            # Asking the user is not run time.
            seconds = max(0.0, time.monotonic() - started - (outcome.waited_ms or 0) / 1000)
            emit(ToolFinished(call.id, call.name, outcome, seconds))

        async with asyncio.TaskGroup() as group:
            for index in range(len(calls)):
                group.create_task(one(index))
        self._pending = None
        done = [outcome for outcome in outcomes if outcome is not None]
        for call, outcome in zip(calls, done, strict=True):
            self.messages.append(tool_message(call.id, for_model(outcome)))
        pictures, notes = tool_images(calls, done, self.images)
        for note in notes:
            emit(Notice(note))
        if pictures is not None:
            self.messages.append(pictures)

    async def _call(
        self,
        call: ToolCallRequest,
        arguments: dict[str, object] | str,
        spec: ToolSpec | None,
        specs: Mapping[str, ToolSpec],
    ) -> ToolOutcome:
        try:
            if spec is None:
                # Through the toolbox all the same, so the call is audited and the toolbox
                # that once offered the name can say why it is gone (a crashed server, say).
                unknown = ToolSpec(name=call.name, description="", parameters={}, kind="mcp")
                outcome = await self.toolbox.call(
                    unknown, arguments if isinstance(arguments, dict) else {}
                )
                return dataclasses.replace(
                    outcome, text=f"{outcome.text} Tools available: {names(specs)}."
                )
            if isinstance(arguments, str):
                return ToolOutcome.refused(arguments)
            return await self.toolbox.call(spec, arguments)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # A bug in one tool must cost one result, not the turn.
            return ToolOutcome(f"Error: the tool failed: {type(exc).__name__}: {exc}", True)

    async def _fit_context(self, tools: Sequence[object], emit: EventSink) -> None:
        self.messages = await compaction.fit(
            self.messages, tools, self.llm, self.context_window, emit
        )

    def _settle_after_cancel(self, question: Message) -> None:
        """Leave a history the provider accepts: every tool call answered, partial text kept."""
        pending = self._pending
        if pending is not None:
            calls, outcomes = pending
            for call, outcome in zip(calls, outcomes, strict=True):
                text = (
                    for_model(outcome) if outcome else "Cancelled by the user before it finished."
                )
                self.messages.append(tool_message(call.id, text))
            self._pending = None
        partial = self._partial
        if partial:
            self.messages.append(
                AssistantMessage(role="assistant", content=partial + "\n[interrupted]")
            )
            self._partial = ""
        if self.messages and self.messages[-1] is question:  # nothing answered: say so
            self.messages.append(
                AssistantMessage(role="assistant", content="[interrupted by the user]")
            )
