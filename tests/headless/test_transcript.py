"""The agent's events as Claude Code's headless messages, in memory: every message fits the
shipped schema, partial messages open and close their blocks in order, and each way a turn
ends is its own result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from paicli.agent.events import (
    AgentEvent,
    ModelReplied,
    Notice,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.headless.transcript import RunFacts, Transcript
from paicli.llm.events import ToolCallRequest
from paicli.tools.base import ToolOutcome

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "stream-json.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
USAGE = {"prompt_tokens": 7, "completion_tokens": 3}
FACTS = RunFacts("/p", "m", ["read_file"], [("fs", "connected")], "accept-edits", "0.1.0")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def played(transcript: Transcript, events: list[AgentEvent]) -> list[dict[str, Any]]:
    messages = [m for event in events for m in transcript.on(event)]
    for message in messages:
        VALIDATOR.validate(message)
    return messages


def a_turn_with_a_call() -> list[AgentEvent]:
    call = ToolCallRequest("c1", "write_file", '{"path": "a"}')
    denied = ToolOutcome("no", is_error=True, decision="denied", decided_by="flag")
    return [
        ReasoningDelta("think"),
        TextDelta("Let me "),
        TextDelta("write."),
        ModelReplied("Let me write.", "think", (call,), "tool_calls", USAGE, 0.5),
        ToolStarted("c1", "write_file", {"path": "a"}),
        ToolProgress("c1", "write_file", 0.1),
        ToolRetrying("c1", "write_file", 2, 3, "crash", 0.25),
        ToolFinished("c1", "write_file", denied, 0.2),
        Retrying(1, 2.0, "rate limited"),
        Notice("Context nearly full."),
        TextDelta("Done."),
        ModelReplied("Done.", "", (), "stop", USAGE, 0.25),
        TurnEnded("done", "Done.", steps=2, usage={"prompt_tokens": 14, "completion_tokens": 6}),
    ]


def test_partial_messages_open_and_close_each_block_in_order() -> None:
    transcript = Transcript("s1", partial=True, model="m")
    messages = played(transcript, a_turn_with_a_call())
    streamed = [m["event"] for m in messages if m["type"] == "stream_event"]
    first = streamed[: [e["type"] for e in streamed].index("message_stop") + 1]
    assert [(e["type"], e.get("index")) for e in first] == [
        ("message_start", None),
        ("content_block_start", 0),
        ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("content_block_start", 2),  # the tool call, whole
        ("content_block_delta", 2),
        ("content_block_stop", 2),
        ("message_delta", None),
        ("message_stop", None),
    ]
    assert first[9]["delta"] == {"type": "input_json_delta", "partial_json": '{"path": "a"}'}
    assistant = [m for m in messages if m["type"] == "assistant"]
    assert assistant[0]["message"]["id"] == first[0]["message"]["id"]
    assert assistant[0]["message"]["usage"] == {"input_tokens": 7, "output_tokens": 3}


def test_without_partial_messages_each_event_is_one_message_or_none() -> None:
    transcript = Transcript("s1", model="m")
    messages = played(transcript, a_turn_with_a_call())
    assert [(m["type"], m.get("subtype")) for m in messages] == [
        ("assistant", None),
        ("tool_progress", None),
        ("system", "tool_retry"),
        ("user", None),
        ("system", "api_retry"),
        ("system", "notice"),
        ("assistant", None),
    ]
    assert all(m["session_id"] == "s1" for m in messages)


def test_the_result_counts_the_turn_and_its_denials() -> None:
    clock = Clock()
    transcript = Transcript("s1", clock=clock)
    init = transcript.init(FACTS)
    VALIDATOR.validate(init)
    assert init["permissionMode"] == "acceptEdits"
    assert init["mcp_servers"] == [{"name": "fs", "status": "connected"}]
    events = a_turn_with_a_call()
    played(transcript, events[:-1])
    clock.now += 1.5
    result = transcript.result(events[-1])  # type: ignore[arg-type]
    VALIDATOR.validate(result)
    assert result["duration_ms"] == 1500 and result["duration_api_ms"] == 750
    assert result["permission_denials"] == [
        {"tool_name": "write_file", "tool_use_id": "c1", "tool_input": {"path": "a"}}
    ]
    assert result["usage"] == {"input_tokens": 14, "output_tokens": 6}
    assert result["stop_reason"] == "end_turn" and result["result"] == "Done."
    transcript.begin_turn()
    again = transcript.result(TurnEnded("done", "ok", steps=1))
    assert again["permission_denials"] == [] and again["duration_ms"] == 0


@pytest.mark.parametrize(
    ("ended", "subtype", "errors"),
    [
        (TurnEnded("step_budget", "so far", steps=4), "error_max_turns", ["stopped after 4"]),
        (TurnEnded("error", error="endpoint down"), "error_during_execution", ["endpoint down"]),
        (TurnEnded("cancelled"), "error_during_execution", ["interrupted"]),
    ],
)
def test_each_way_a_turn_fails_is_an_error_result(
    ended: TurnEnded, subtype: str, errors: list[str]
) -> None:
    result = Transcript("s").result(ended)
    VALIDATOR.validate(result)
    assert result["subtype"] == subtype and result["is_error"] and "result" not in result
    assert result["errors"][0].startswith(errors[0])


def test_an_unparsable_tool_call_keeps_the_block_shape() -> None:
    call = ToolCallRequest("c", "read_file", "{oops")
    [message] = played(Transcript("s"), [ModelReplied("", "", (call,), None, {}, 0.0)])
    assert message["message"]["content"] == [
        {"type": "tool_use", "id": "c", "name": "read_file", "input": {}}
    ]


def test_the_schema_is_valid_and_refuses_what_claude_codes_parsers_would() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    good = Transcript("s").result(TurnEnded("done", "ok", steps=1))
    VALIDATOR.validate(good)
    bad = [
        {**good, "subtype": "done"},
        {**good, "is_error": True},  # a success is no error
        {k: v for k, v in good.items() if k != "result"},
        {**good, "usage": {"prompt_tokens": 1}},
        {"type": "turn_ended", "session_id": "s", "uuid": "u"},
        {**Transcript("s").init(FACTS), "mcp_servers": [{"name": "fs", "status": "ready"}]},
        {**Transcript("s").user_text("hi"), "message": {"role": "user", "content": "hi"}},
    ]
    for message in bad:
        assert not VALIDATOR.is_valid(message), message
