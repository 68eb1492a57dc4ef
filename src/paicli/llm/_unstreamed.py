"""An endpoint that ignores `stream: true` and answers one JSON `chat.completion`: its body
becomes the one chunk that would have streamed the same answer, so the usual assembly reads
it; a body that is no completion is a one-line reason (never an empty answer)."""

from __future__ import annotations

import json
from typing import Any

from paicli.llm.errors import LlmError

# A whole answer held in memory at once; far above any real completion's size.
BODY_LIMIT = 16 * 1024 * 1024


class NotACompletion(LlmError):
    """The body is no chat completion; `str()` says why, in a few words (the client makes
    it the one-line error that names the endpoint)."""


def as_chunk(body: bytes, model: str) -> dict[str, Any]:
    """The `chat.completion.chunk` carrying all of the completion `body`."""
    try:
        data = json.loads(body)
    except ValueError:
        raise NotACompletion("a body that is not JSON") from None
    if not isinstance(data, dict):
        raise NotACompletion("JSON that is no chat completion")
    error = data.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise NotACompletion(f"an error: {' '.join(str(message).split())[:300]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise NotACompletion("JSON without a completion (no choices)")
    first = choices[0]
    message = first.get("message")
    delta = dict(message) if isinstance(message, dict) else {}
    calls = delta.get("tool_calls")
    if isinstance(calls, list):  # a chunk's calls are numbered; a message's are in order
        delta["tool_calls"] = [
            {**call, "index": index} for index, call in enumerate(calls) if isinstance(call, dict)
        ]
    return {
        "id": str(data.get("id") or "unstreamed"),
        "object": "chat.completion.chunk",
        "created": data.get("created") if isinstance(data.get("created"), int) else 0,
        "model": str(data.get("model") or model),
        "choices": [
            {"index": 0, "delta": delta, "finish_reason": first.get("finish_reason") or "stop"}
        ],
        "usage": data.get("usage") if isinstance(data.get("usage"), dict) else None,
    }
