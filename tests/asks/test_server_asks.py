"""How paicli answers servers' asks, above the wire: forms it cannot show and sampling it does
not take are refused with the JSON-RPC error the specification names; an approved sample
hands the model the server's messages (other content described) and respects maxTokens."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from paicli.asks.server_asks import (
    ElicitAnswer,
    ElicitationRequest,
    Sampled,
    SamplingRequest,
    ServerAsks,
    model_sampler,
)
from paicli.audit.log import AuditLog
from paicli.llm.messages import Message, SystemMessage, UserMessage
from paicli.llm.settings import ModelSettings
from paicli.mcp import RpcError
from paicli.redact import Redactor
from tests.llm_memory import MemoryLlm


def asks(tmp_path: Path, **options: Any) -> tuple[ServerAsks, AuditLog]:
    audit = AuditLog(tmp_path / "audit", Redactor())
    defaults: dict[str, Any] = {"elicit": None, "approve_sampling": None, "model": None}
    return ServerAsks(tmp_path, audit, session_id="s", **(defaults | options)), audit


async def test_a_form_paicli_cannot_show_is_refused_with_invalid_params(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[ElicitationRequest] = []

    async def elicit(request: ElicitationRequest) -> ElicitAnswer:
        shown.append(request)
        return ElicitAnswer("accept", {})

    server, audit = asks(tmp_path, elicit=elicit)
    schema = {"type": "object", "properties": {"address": {"type": "object"}}}
    with caplog.at_level(logging.WARNING), pytest.raises(RpcError) as raised:
        await server.handlers("srv").answer(
            "elicitation/create", {"message": "hi", "requestedSchema": schema}
        )
    assert raised.value.code == -32602 and shown == []
    assert caplog.messages == [
        "srv asked for input with a form paicli cannot show: field address: type 'object' is "
        "not a form field"
    ]
    [record] = audit.tail(1)
    assert record["outcome"] == "refused" and record["server"] == "srv"


async def test_an_approved_sample_gives_the_model_the_messages_and_the_token_limit(
    tmp_path: Path,
) -> None:
    asked: list[tuple[Sequence[Message], int]] = []
    shown: list[SamplingRequest] = []

    async def approve(request: SamplingRequest) -> bool:
        shown.append(request)
        return True

    async def model(messages: Sequence[Message], max_tokens: int) -> Sampled:
        asked.append((messages, max_tokens))
        return Sampled("cut sh", "m1", "length")

    server, _ = asks(tmp_path, approve_sampling=approve, model=model)
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    params = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "look"}, image]},
            {"role": "assistant", "content": {"type": "text", "text": "ok"}},
        ],
        "maxTokens": 7,
    }
    result = await server.handlers("srv").answer("sampling/createMessage", params)
    assert result == {
        "role": "assistant",
        "content": {"type": "text", "text": "cut sh"},
        "model": "m1",
        "stopReason": "maxTokens",
    }
    [(messages, limit)] = asked
    assert limit == 7
    assert list(messages) == [
        {"role": "user", "content": "look\n[image content, image/png, not shown]"},
        {"role": "assistant", "content": "ok"},
    ]
    assert shown[0].server == "srv" and shown[0].max_tokens == 7


@pytest.mark.parametrize(
    "params",
    [
        {"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]},
        {"messages": [], "maxTokens": 5},
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
            "maxTokens": 5,
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
        },
    ],
)
async def test_a_sample_this_client_does_not_take_is_invalid_params(
    tmp_path: Path, params: dict[str, Any]
) -> None:
    async def approve(request: SamplingRequest) -> bool:
        raise AssertionError("never asked")

    server, _ = asks(tmp_path, approve_sampling=approve)
    with pytest.raises(RpcError) as raised:
        await server.handlers("srv").answer("sampling/createMessage", params)
    assert raised.value.code == -32602


async def test_a_sample_quoting_a_known_secret_reaches_the_model_redacted() -> None:
    """A server may quote a token it was given in what it asks the user's model."""
    async with MemoryLlm([{"text": "ok"}]) as llm:
        settings = ModelSettings(model="m", base_url=llm.base_url, api_key="sk-model-key-000")
        redactor = Redactor(["server-token-123456"])
        sample = model_sampler(lambda: settings, llm.http_client(), lambda _: None, redactor)
        messages: list[Message] = [
            SystemMessage(role="system", content="You hold server-token-123456."),
            UserMessage(role="user", content="Repeat server-token-123456 back."),
        ]
        answer = await sample(messages, 10)
    assert answer.text == "ok"
    assert llm.requests[0]["messages"] == [
        {"role": "system", "content": "You hold [REDACTED]."},
        {"role": "user", "content": "Repeat [REDACTED] back."},
    ]


async def test_what_the_user_types_into_a_secret_field_is_learned_and_nothing_else(
    tmp_path: Path,
) -> None:
    """A server that echoes the typed password into a tool result must not hand it to the
    model: the value joins the run's redactor as the form is sent."""
    learned: list[str] = []

    async def elicit(request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer("accept", {"user": "ada-lovelace", "password": "typed-pass-123"})

    server, _ = asks(tmp_path, elicit=elicit, learn_secrets=learned.extend)
    schema = {
        "type": "object",
        "properties": {"user": {"type": "string"}, "password": {"type": "string"}},
    }
    result = await server.handlers("srv").answer(
        "elicitation/create", {"message": "log in", "requestedSchema": schema}
    )
    assert result["content"] == {"user": "ada-lovelace", "password": "typed-pass-123"}
    assert learned == ["typed-pass-123"]
