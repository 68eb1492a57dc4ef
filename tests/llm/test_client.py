"""LlmClient through the real openai SDK against the scripted model, answering both in
memory (the in-memory tier) and on 127.0.0.1 (`real`): the same assertions hold for both."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

import openai
import pytest

from paicli.llm import (
    AuthenticationFailed,
    Completion,
    EndpointUnreachable,
    LlmError,
    ModelNotFound,
    ModelSettings,
    ReasoningDelta,
    RequestRejected,
    Retrying,
    ServiceUnavailable,
    StreamEvent,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from paicli.llm.client import HttpClient, LlmClient
from paicli.llm.messages import Message, ToolDefinition
from tests.http_servers import run_http_server
from tests.llm_memory import MemoryLlm
from tests.llm_server import LlmScript, ScriptedLlm

Scripted = Callable[[Sequence[Mapping[str, Any]]], LlmScript]

KEY = "sk-test-SECRET123"
MESSAGES: list[Message] = [{"role": "user", "content": "Hi"}]
READ_FILE_TOOL: ToolDefinition = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
WAIT = 10.0  # generous: every wait here normally ends in milliseconds


@pytest.fixture(params=["memory", pytest.param("socket", marks=pytest.mark.real)])
def scripted(request: pytest.FixtureRequest) -> Scripted:
    """The scripted model in memory, and (in the real tier) on 127.0.0.1."""
    return MemoryLlm if request.param == "memory" else ScriptedLlm


def settings_for(base_url: str, *, provider: str | None = None) -> ModelSettings:
    return ModelSettings(provider=provider, model="scripted-model", base_url=base_url, api_key=KEY)


async def collect(
    settings: ModelSettings,
    tools: list[ToolDefinition] | None = None,
    seen: list[StreamEvent] | None = None,
    max_retries: int = 4,
    max_delay: float = 30.0,
    *,
    http_client: HttpClient | None = None,
) -> list[StreamEvent]:
    """Every event of one stream; `seen` gets them too, as they come (for failing streams).
    Backoff starts at 10 ms, so retries cost the test next to nothing."""
    events = [] if seen is None else seen
    client = LlmClient(
        settings,
        base_delay=0.01,
        max_retries=max_retries,
        max_delay=max_delay,
        http_client=http_client,
    )
    try:
        async with asyncio.timeout(WAIT):
            async with aclosing(client.stream(MESSAGES, tools or [])) as stream:
                async for event in stream:
                    events.append(event)
    finally:
        await client.aclose()
    return events


def completion_of(events: list[StreamEvent]) -> Completion:
    assert isinstance(events[-1], Completion)
    assert sum(isinstance(event, Completion) for event in events) == 1
    return events[-1]


async def test_text_streams_in_several_deltas_then_one_completion(scripted: Scripted) -> None:
    async with scripted([{"text": "Hello there, world"}]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(deltas) >= 3
    assert "".join(deltas) == "Hello there, world"
    completion = completion_of(events)
    assert completion == Completion(
        text="Hello there, world",
        reasoning="",
        tool_calls=(),
        finish_reason="stop",
        usage=Usage(prompt_tokens=10, completion_tokens=5),
    )


async def test_request_carries_messages_model_key_and_usage_option_but_no_empty_tools(
    scripted: Scripted,
) -> None:
    async with scripted([{"text": "ok"}]) as llm:
        await collect(settings_for(llm.base_url), http_client=llm.http_client())
    [request] = llm.requests
    assert request["messages"] == MESSAGES
    assert request["model"] == "scripted-model"
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert "tools" not in request
    assert llm.authorizations == [f"Bearer {KEY}"]


async def test_tools_are_sent_when_there_are_some(scripted: Scripted) -> None:
    async with scripted([{"text": "ok"}]) as llm:
        await collect(
            settings_for(llm.base_url), http_client=llm.http_client(), tools=[READ_FILE_TOOL]
        )
    assert llm.requests[0]["tools"] == [READ_FILE_TOOL]


async def test_reasoning_deltas_are_kept_apart_from_the_text(scripted: Scripted) -> None:
    async with scripted([{"reasoning": "Let me think it over", "text": "Answer"}]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    reasoning = [event.text for event in events if isinstance(event, ReasoningDelta)]
    assert len(reasoning) >= 2
    assert "".join(reasoning) == "Let me think it over"
    assert "".join(event.text for event in events if isinstance(event, TextDelta)) == "Answer"
    first_text = next(i for i, event in enumerate(events) if isinstance(event, TextDelta))
    assert all(isinstance(event, ReasoningDelta) for event in events[:first_text])
    completion = completion_of(events)
    assert (completion.reasoning, completion.text) == ("Let me think it over", "Answer")


async def test_reasoning_in_the_ollama_style_field_is_read_too(scripted: Scripted) -> None:
    reply = {"reasoning": "Hmm", "reasoning_field": "reasoning", "text": "Yes"}
    async with scripted([reply]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert completion_of(events).reasoning == "Hmm"
    assert ReasoningDelta("Hmm") in events


async def test_parallel_tool_calls_are_assembled_from_fragments(scripted: Scripted) -> None:
    calls = [
        {"id": "call_a", "name": "read_file", "arguments": '{"path": "a.txt"}'},
        {"id": "call_b", "name": "list_dir", "arguments": '{"path": "src", "depth": 2}'},
    ]
    async with scripted([{"text": "Reading.", "tool_calls": calls}]) as llm:
        events = await collect(
            settings_for(llm.base_url), http_client=llm.http_client(), tools=[READ_FILE_TOOL]
        )
    completion = completion_of(events)
    assert completion.tool_calls == (
        ToolCallRequest("call_a", "read_file", '{"path": "a.txt"}'),
        ToolCallRequest("call_b", "list_dir", '{"path": "src", "depth": 2}'),
    )
    assert completion.finish_reason == "tool_calls"
    assert completion.text == "Reading."


async def test_malformed_tool_call_arguments_are_passed_through_raw(scripted: Scripted) -> None:
    broken = '{"path": "a.txt", "mode": '
    async with scripted([{"tool_calls": [{"name": "read_file", "arguments": broken}]}]) as llm:
        events = await collect(
            settings_for(llm.base_url), http_client=llm.http_client(), tools=[READ_FILE_TOOL]
        )
    [call] = completion_of(events).tool_calls
    assert (call.name, call.arguments) == ("read_file", broken)
    assert call.id  # the server's id, whatever it is


async def test_rate_limit_is_retried_after_the_retry_after_delay_with_a_notice(
    scripted: Scripted,
) -> None:
    async with scripted([{"status": 429, "retry_after": 0.05}, {"text": "ok"}]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert events[0] == Retrying(attempt=1, delay=0.05, reason="rate limited")
    assert events[0].describe() == "rate limited, retrying in 0.1s"
    assert completion_of(events).text == "ok"
    assert len(llm.requests) == 2


async def test_retry_after_longer_than_the_cap_is_cut_to_the_cap(scripted: Scripted) -> None:
    async with scripted([{"status": 429, "retry_after": 3600}, {"text": "ok"}]) as llm:
        events = await collect(
            settings_for(llm.base_url), http_client=llm.http_client(), max_delay=0.02
        )
    assert events[0] == Retrying(attempt=1, delay=0.02, reason="rate limited")


async def test_server_errors_are_retried_with_growing_delays(scripted: Scripted) -> None:
    script: list[dict[str, object]] = [{"status": 500}, {"status": 502}, {"text": "ok"}]
    async with scripted(script) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert events[:2] == [
        Retrying(attempt=1, delay=0.01, reason="server error (HTTP 500)"),
        Retrying(attempt=2, delay=0.02, reason="server error (HTTP 502)"),
    ]
    assert completion_of(events).text == "ok"


async def test_retries_stop_after_max_retries_with_the_servers_message(scripted: Scripted) -> None:
    failing: dict[str, object] = {"status": 503, "error": {"message": "overloaded, try later"}}
    async with scripted([failing] * 3) as llm:
        seen: list[StreamEvent] = []
        with pytest.raises(ServiceUnavailable) as caught:
            await collect(
                settings_for(llm.base_url), http_client=llm.http_client(), seen=seen, max_retries=2
            )
    assert len(llm.requests) == 3
    assert [event.attempt for event in seen if isinstance(event, Retrying)] == [1, 2]
    assert "after 3 attempts" in str(caught.value)
    assert "overloaded, try later" in str(caught.value)


async def test_an_exhausted_script_fails_fast_and_says_so(scripted: Scripted) -> None:
    async with scripted([]) as llm:
        with pytest.raises(LlmError, match="script exhausted"):
            await collect(settings_for(llm.base_url), http_client=llm.http_client())


async def test_authentication_failure_is_one_line_naming_the_key_variable_not_the_key(
    scripted: Scripted,
) -> None:
    reply = {"status": 401, "error": {"message": f"Incorrect API key provided: {KEY}"}}
    async with scripted([reply]) as llm:
        with pytest.raises(AuthenticationFailed) as caught:
            await collect(
                settings_for(llm.base_url, provider="deepseek"), http_client=llm.http_client()
            )
    message = str(caught.value)
    assert message == (
        f"authentication failed for deepseek ({llm.base_url}): check DEEPSEEK_API_KEY"
    )
    assert "SECRET123" not in message
    assert "\n" not in message
    assert len(llm.requests) == 1  # never retried


async def test_unknown_model_is_reported_by_name(scripted: Scripted) -> None:
    reply = {
        "status": 404,
        "error": {"message": "The model `nope` does not exist", "code": "model_not_found"},
    }
    async with scripted([reply]) as llm:
        with pytest.raises(ModelNotFound) as caught:
            await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert "'scripted-model'" in str(caught.value)
    assert llm.base_url in str(caught.value)


async def test_a_wrong_base_url_path_is_reported_as_such(scripted: Scripted) -> None:
    async with scripted([{"text": "never"}]) as llm:
        without_v1 = llm.base_url.removesuffix("/v1")
        with pytest.raises(RequestRejected, match="check the base URL"):
            await collect(settings_for(without_v1), http_client=llm.http_client())


async def test_other_client_errors_carry_the_servers_message_without_retrying(
    scripted: Scripted,
) -> None:
    reply = {"status": 400, "error": {"message": "messages[1]: content must not be empty"}}
    async with scripted([reply]) as llm:
        with pytest.raises(RequestRejected) as caught:
            await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert str(caught.value) == (
        f"{llm.base_url} rejected the request (HTTP 400): messages[1]: content must not be empty"
    )
    assert len(llm.requests) == 1


@pytest.mark.real
async def test_connection_refused_is_reported_at_once_without_retrying() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    seen: list[StreamEvent] = []
    settings = settings_for(f"http://127.0.0.1:{port}/v1", provider="ollama")
    with pytest.raises(EndpointUnreachable) as caught:
        await collect(settings, seen=seen)
    assert str(caught.value) == (
        f"cannot reach ollama (http://127.0.0.1:{port}/v1): connection refused"
    )
    assert seen == []


async def test_a_connection_dropped_before_any_token_is_retried(scripted: Scripted) -> None:
    async with scripted([{"disconnect": "before"}, {"text": "ok"}]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert events[0] == Retrying(attempt=1, delay=0.01, reason="connection lost")
    assert completion_of(events).text == "ok"


async def test_a_connection_dropped_after_text_is_not_retried(scripted: Scripted) -> None:
    script = [{"text": "one two three", "disconnect": "midway"}, {"text": "never"}]
    async with scripted(script) as llm:
        seen: list[StreamEvent] = []
        with pytest.raises(ServiceUnavailable, match="broke off"):
            await collect(settings_for(llm.base_url), http_client=llm.http_client(), seen=seen)
    assert seen == [TextDelta("one ")]
    assert len(llm.requests) == 1


async def test_a_server_rejecting_stream_options_is_asked_again_without_them(
    scripted: Scripted,
) -> None:
    rejection = {
        "status": 400,
        "error": {"message": "Unrecognized request argument supplied: stream_options"},
    }
    async with scripted([rejection, {"text": "ok"}]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert not any(isinstance(event, Retrying) for event in events)
    assert completion_of(events).usage is None  # the server sends usage only when asked
    assert "stream_options" in llm.requests[0]
    assert "stream_options" not in llm.requests[1]


async def test_cancelling_the_consumer_mid_stream_closes_the_response_promptly(
    scripted: Scripted,
) -> None:
    first_delta = asyncio.Event()

    async def consume(client: LlmClient) -> None:
        async with aclosing(client.stream(MESSAGES, [])) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    first_delta.set()

    async with scripted([{"text": "one two three", "hang": True}]) as llm:
        client = LlmClient(settings_for(llm.base_url), http_client=llm.http_client())
        try:
            async with asyncio.timeout(WAIT), asyncio.TaskGroup() as group:
                task = group.create_task(consume(client))
                await first_delta.wait()
                task.cancel()
                await llm.disconnected.wait()
            assert task.cancelled()
        finally:
            await client.aclose()


async def test_the_server_answers_a_request_without_stream_with_one_completion(
    scripted: Scripted,
) -> None:
    reply = {"text": "Hi", "tool_calls": [{"name": "read_file", "arguments": "{}"}]}
    async with scripted([reply]) as llm:
        http_client = llm.http_client()
        async with openai.AsyncOpenAI(
            base_url=llm.base_url, api_key=KEY, http_client=http_client
        ) as sdk:
            models = await sdk.models.list()
            answer = await sdk.chat.completions.create(model="m", messages=[])
    assert [model.id for model in models.data] == ["scripted-model"]
    message = answer.choices[0].message
    assert message.content == "Hi"
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.name == "read_file"  # type: ignore[union-attr]
    assert answer.choices[0].finish_reason == "tool_calls"


@pytest.mark.real
async def test_the_server_runs_as_a_subprocess_writing_its_port_and_requests(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from a process"}]), encoding="utf-8")
    port_file, requests_file = tmp_path / "port", tmp_path / "requests.jsonl"
    server = Path(__file__).parent.parent / "llm_server.py"
    args = ("--script", str(script), "--port-file", str(port_file))
    async with run_http_server(server, *args, "--requests-file", str(requests_file)) as url:
        assert url == f"http://127.0.0.1:{port_file.read_text()}/v1"
        events = await collect(settings_for(url))
    assert completion_of(events).text == "from a process"
    [line] = requests_file.read_text().splitlines()
    assert json.loads(line)["messages"] == MESSAGES


@pytest.mark.real
def test_importing_the_model_layer_does_not_load_the_openai_sdk() -> None:
    code = "import sys, paicli.llm; assert 'openai' not in sys.modules, 'openai loaded'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_client_for_settings_without_a_model_refuses_to_start() -> None:
    with pytest.raises(LlmError, match="No model named"):
        LlmClient(ModelSettings(base_url="http://localhost:8000/v1"))
