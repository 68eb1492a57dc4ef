"""An endpoint that ignores `stream: true` (issue 27): its one JSON completion is the answer,
tool calls and usage included; a body that is no completion, or a stream of nothing, is an
error naming the endpoint, never an empty answer. In memory and on 127.0.0.1 alike."""

from __future__ import annotations

import pytest

from paicli.llm import ServiceUnavailable, TextDelta, ToolCallRequest, Usage
from tests.llm.test_client import Scripted, collect, completion_of, scripted, settings_for

__all__ = ["scripted"]  # the fixture, shared with test_client.py


async def test_a_plain_json_completion_is_used_as_the_answer(scripted: Scripted) -> None:
    reply = {
        "unstreamed": True,
        "text": "Four.",
        "tool_calls": [{"name": "read_file", "arguments": '{"path": "a.txt"}', "id": "c1"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }
    async with scripted([reply]) as llm:
        events = await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert [event.text for event in events if isinstance(event, TextDelta)] == ["Four."]
    completion = completion_of(events)
    assert completion.text == "Four."
    assert completion.tool_calls == (ToolCallRequest("c1", "read_file", '{"path": "a.txt"}'),)
    assert completion.finish_reason == "tool_calls"
    assert completion.usage == Usage(prompt_tokens=7, completion_tokens=3)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ({"unstreamed": {"object": "chat.completion", "choices": []}}, "no choices"),
        ({"unstreamed": {"error": {"message": "overloaded\\nnow"}}}, "an error: overloaded"),
        ({"empty": True}, "sent an empty answer (no chunks)"),
    ],
)
async def test_an_answer_with_nothing_in_it_is_an_error(
    scripted: Scripted, reply: dict[str, object], why: str
) -> None:
    async with scripted([reply]) as llm:
        with pytest.raises(ServiceUnavailable) as failed:
            await collect(settings_for(llm.base_url), http_client=llm.http_client())
    assert why in str(failed.value)
    assert llm.base_url.split("/")[2] in str(failed.value)  # the endpoint is named
