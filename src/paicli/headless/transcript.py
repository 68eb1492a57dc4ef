"""The agent's events as Claude Code's headless messages (`--output-format stream-json`):
`system`/`init` first, an `assistant` message per model reply (text, thinking and `tool_use`
blocks), a `user` message per tool result, `stream_event`s with the raw deltas when partial
messages are asked for, and a `result` at the end of each turn. `json` prints that result
alone. Every message carries the session id and a fresh uuid.

Pure: `Transcript` turns events into plain dicts and keeps the little state a turn needs
(the open partial message, the denials, the clocks); the printer writes them. A new kind of
agent event is one function in `RENDERERS`; one not listed there is left out of the stream.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paicli.agent.events import (
    AgentEvent,
    ModelReplied,
    Notice,
    ReasoningDelta,
    Retrying,
    SubAgentEvent,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.agent.turn_messages import parse_arguments

__all__ = ["RENDERERS", "Message", "RunFacts", "Transcript", "result_subtype", "usage_of"]

Message = dict[str, Any]

# The endpoint's finish reasons (OpenAI's words) in Anthropic's.
STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
SUBTYPES = {"done": "success", "step_budget": "error_max_turns"}
# paicli's permission modes in Claude Code's words.
PERMISSION_MODES = {
    "default": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "yolo": "bypassPermissions",
}


@dataclass(frozen=True)
class RunFacts:
    """What the `init` message says about the run."""

    cwd: str
    model: str
    tools: Sequence[str]
    mcp_servers: Sequence[tuple[str, str]]  # (name, status)
    permission_mode: str  # paicli's name (`accept-edits`)
    version: str


def usage_of(counts: Mapping[str, int]) -> dict[str, int]:
    """paicli's token counts (`prompt_tokens`, `completion_tokens`) in Anthropic's words."""
    return {
        "input_tokens": int(counts.get("prompt_tokens", 0)),
        "output_tokens": int(counts.get("completion_tokens", 0)),
    }


def result_subtype(ended: TurnEnded) -> str:
    return SUBTYPES.get(ended.reason, "error_during_execution")


@dataclass
class _Partial:
    """The message being streamed with `--include-partial-messages`."""

    id: str
    blocks: int = 0  # content blocks opened so far
    open: str | None = None  # the kind of the block open now ("text", "thinking")


@dataclass
class Transcript:
    """One headless run's messages (see the module). `session_id` may be set once known."""

    session_id: str = ""
    partial: bool = False  # --include-partial-messages
    model: str = ""
    clock: Callable[[], float] = time.monotonic
    _started: float = field(default=0.0, init=False)
    _api_seconds: float = field(default=0.0, init=False)
    _denials: list[Message] = field(default_factory=list, init=False)
    _inputs: dict[str, Mapping[str, object]] = field(default_factory=dict, init=False)
    _streaming: _Partial | None = field(default=None, init=False)
    _stop_reason: str | None = field(default=None, init=False)
    _subagents: dict[str, Transcript] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._started = self.clock()

    def begin_turn(self) -> None:
        """A new user turn: its result counts its own time and denials."""
        self._started = self.clock()
        self._api_seconds = 0.0
        self._denials = []
        self._inputs = {}
        self._streaming = None
        self._stop_reason = None

    def message(self, kind: str, **body: Any) -> Message:
        """A message of type `kind` with the session id and a fresh uuid."""
        return {"type": kind, **body, "session_id": self.session_id, "uuid": str(uuid.uuid4())}

    def init(self, facts: RunFacts) -> Message:
        self.model = facts.model
        return self.message(
            "system",
            subtype="init",
            cwd=facts.cwd,
            model=facts.model,
            tools=list(facts.tools),
            mcp_servers=[{"name": name, "status": status} for name, status in facts.mcp_servers],
            permissionMode=PERMISSION_MODES.get(facts.permission_mode, facts.permission_mode),
            paicli_version=facts.version,
        )

    def user_text(self, text: str) -> Message:
        """A user message read from stdin, echoed (`--replay-user-messages`)."""
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
        return self.message("user", message=message, parent_tool_use_id=None)

    def on(self, event: AgentEvent) -> list[Message]:
        """The messages `event` becomes (none for an event the stream leaves out)."""
        renderer = RENDERERS.get(type(event))
        return renderer(self, event) if renderer is not None else []

    def result(self, ended: TurnEnded, errors: Sequence[str] = ()) -> Message:
        """The turn's `result`: `success` with the answer, or an `error_*` with why."""
        subtype = result_subtype(ended)
        body: Message = {
            "subtype": subtype,
            "is_error": subtype != "success",
            "duration_ms": round((self.clock() - self._started) * 1000),
            "duration_api_ms": round(self._api_seconds * 1000),
            "num_turns": ended.steps,
            "stop_reason": self._stop_reason,
            "total_cost_usd": None,  # paicli does not know the model's prices
            "usage": usage_of(ended.usage),
            "permission_denials": list(self._denials),
        }
        if subtype == "success":
            body["result"] = ended.text
        else:
            reasons = list(errors) or [ended.error or _why(ended)]
            body["errors"] = reasons
        return self.message("result", **body)

    # -- renderers ---------------------------------------------------------------------------

    def _delta(self, kind: str, text: str) -> list[Message]:
        if not self.partial or not text:
            return []
        events: list[Message] = []
        streaming = self._streaming
        if streaming is None:
            streaming = self._streaming = _Partial(_message_id())
            events.append({"type": "message_start", "message": self._api_message(streaming.id)})
        if streaming.open != kind:
            events += self._close_block(streaming)
            block = {"type": "text", "text": ""} if kind == "text" else {"type": kind, kind: ""}
            events.append(
                {"type": "content_block_start", "index": streaming.blocks, "content_block": block}
            )
            streaming.open = kind
            streaming.blocks += 1
        delta = {"type": "text_delta", "text": text}
        if kind == "thinking":
            delta = {"type": "thinking_delta", "thinking": text}
        events.append(
            {"type": "content_block_delta", "index": streaming.blocks - 1, "delta": delta}
        )
        return [self._stream_event(e) for e in events]

    def _replied(self, event: ModelReplied) -> list[Message]:
        self._api_seconds += event.seconds
        stop = "tool_use" if event.calls else STOP_REASONS.get(event.finish_reason or "")
        self._stop_reason = stop
        streaming, self._streaming = self._streaming, None
        message_id = streaming.id if streaming is not None else _message_id()
        messages = self._closing(streaming, event, stop) if self.partial else []
        content: list[Message] = []
        if event.reasoning:
            content.append({"type": "thinking", "thinking": event.reasoning})
        if event.text:
            content.append({"type": "text", "text": event.text})
        content += [_tool_use(call.id, call.name, call.arguments) for call in event.calls]
        api = self._api_message(message_id, content, stop, usage_of(event.usage))
        messages.append(self.message("assistant", message=api, parent_tool_use_id=None))
        return messages

    def _closing(
        self, streaming: _Partial | None, event: ModelReplied, stop: str | None
    ) -> list[Message]:
        """The end of a partial message: the tool calls as whole blocks (the agent does not
        stream their arguments), then `message_delta` and `message_stop`."""
        events: list[Message] = []
        if streaming is None:
            streaming = _Partial(_message_id())
            events.append({"type": "message_start", "message": self._api_message(streaming.id)})
        events += self._close_block(streaming)
        for call in event.calls:
            index = streaming.blocks
            streaming.blocks += 1
            block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
            json_delta = {"type": "input_json_delta", "partial_json": call.arguments or "{}"}
            events += [
                {"type": "content_block_start", "index": index, "content_block": block},
                {"type": "content_block_delta", "index": index, "delta": json_delta},
                {"type": "content_block_stop", "index": index},
            ]
        usage = {"output_tokens": usage_of(event.usage)["output_tokens"]}
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": usage,
            }
        )
        events.append({"type": "message_stop"})
        return [self._stream_event(e) for e in events]

    def _close_block(self, streaming: _Partial) -> list[Message]:
        if streaming.open is None:
            return []
        streaming.open = None
        return [{"type": "content_block_stop", "index": streaming.blocks - 1}]

    def _stream_event(self, event: Message) -> Message:
        return self.message("stream_event", event=event, parent_tool_use_id=None)

    def _api_message(
        self,
        message_id: str,
        content: list[Message] | None = None,
        stop: str | None = None,
        usage: Mapping[str, int] | None = None,
    ) -> Message:
        return {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content or [],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": dict(usage or {"input_tokens": 0, "output_tokens": 0}),
        }

    def _tool_result(self, event: ToolFinished) -> list[Message]:
        outcome = event.outcome
        tool_input = self._inputs.pop(event.call_id, {})
        if outcome.decision == "denied":
            self._denials.append(
                {"tool_name": event.name, "tool_use_id": event.call_id, "tool_input": tool_input}
            )
        block = {
            "type": "tool_result",
            "tool_use_id": event.call_id,
            "content": outcome.text,
            "is_error": outcome.is_error,
        }
        message = {"role": "user", "content": [block]}
        return [self.message("user", message=message, parent_tool_use_id=None)]

    def _tool_started(self, event: ToolStarted) -> list[Message]:
        """Nothing to say (the call is the reply's `tool_use` block); its input is kept for
        `permission_denials`."""
        self._inputs[event.call_id] = dict(event.arguments or {})
        return []

    def _progress(self, event: ToolProgress) -> list[Message]:
        return [
            self.message(
                "tool_progress",
                tool_use_id=event.call_id,
                tool_name=event.name,
                parent_tool_use_id=None,
                elapsed_time_seconds=round(event.seconds, 3),
                progress=event.progress,
                total=event.total,
                message=event.message,
            )
        ]

    def _api_retry(self, event: Retrying) -> list[Message]:
        return [
            self.message(
                "system",
                subtype="api_retry",
                attempt=event.attempt,
                max_retries=None,
                retry_delay_ms=round(event.delay * 1000),
                error_status=None,
                error=event.reason,
            )
        ]

    def _tool_retry(self, event: ToolRetrying) -> list[Message]:
        return [
            self.message(
                "system",
                subtype="tool_retry",
                tool_use_id=event.call_id,
                tool_name=event.name,
                attempt=event.attempt,
                max_retries=event.of,
                retry_delay_ms=round(event.delay * 1000),
                error=event.reason,
            )
        ]

    def _notice(self, event: Notice) -> list[Message]:
        return [self.message("system", subtype="notice", text=event.text)]

    def _subagent(self, event: SubAgentEvent) -> list[Message]:
        """A sub-agent's replies and tool results, as Claude Code streams them: the same
        messages with `parent_tool_use_id` set to the `Agent` call that runs it (no partial
        deltas; its end is the call's own tool result)."""
        if isinstance(event.event, TurnEnded):
            self._subagents.pop(event.call_id, None)
            return []
        inner = self._subagents.get(event.call_id)
        if inner is None:
            inner = Transcript(self.session_id, model=self.model, clock=self.clock)
            self._subagents[event.call_id] = inner
        messages = inner.on(event.event)
        for message in messages:
            if "parent_tool_use_id" in message:
                message["parent_tool_use_id"] = event.call_id
        return messages


def _tool_use(call_id: str, name: str, arguments: str) -> Message:
    parsed = parse_arguments(arguments)
    # Arguments that did not parse ran nothing (the model was told); the block keeps the shape.
    return {
        "type": "tool_use",
        "id": call_id,
        "name": name,
        "input": parsed if isinstance(parsed, dict) else {},
    }


def _message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


def _why(ended: TurnEnded) -> str:
    if ended.reason == "step_budget":
        return f"stopped after {ended.steps} model turns (--max-turns)"
    if ended.reason == "cancelled":
        return "interrupted"
    return "the run failed"


Renderer = Callable[[Transcript, Any], list[Message]]

RENDERERS: dict[type, Renderer] = {
    TextDelta: lambda t, e: t._delta("text", e.text),
    ReasoningDelta: lambda t, e: t._delta("thinking", e.text),
    ModelReplied: Transcript._replied,
    ToolStarted: Transcript._tool_started,
    ToolFinished: Transcript._tool_result,
    ToolProgress: Transcript._progress,
    Retrying: Transcript._api_retry,
    ToolRetrying: Transcript._tool_retry,
    Notice: Transcript._notice,
    SubAgentEvent: Transcript._subagent,
}
"""Each agent event the stream shows, and how (ToolStarted is the `tool_use` block of the
reply before it, TurnEnded the `result` the printer writes). An event type not listed here
is left out of the stream: a new one is added by giving it a renderer here and its message
a shape in docs/stream-json.schema.json."""
