"""The JSON-RPC 2.0 wire rules shared by every transport and the engine.

One parser for every message, whatever its size: orjson, whose limits (nesting deeper than
1024, a number beyond a double) hold for a 100-byte line and a 50 MB body alike; a text it
refuses is skipped with a warning and never raises. An array (a batch) is only a message
list where the agreed protocol has batches (2025-03-26); the transports learn the version
through `Transport.negotiated`. `envelope_problem` says why a message is not JSON-RPC 2.0
(no `"jsonrpc": "2.0"`, both or neither of result and error, an id that is not a string or
an integer); the engine drops such messages, so they never answer a request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeGuard

import orjson

from ._transport import Era, JsonObject, RequestId

# How much of a text that is not a message a warning quotes; the characters of keys and tokens
# (base64, URL-safe, JWT), which a cut must not split.
_HEAD_LENGTH = 200
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~%")

__all__ = [
    "BATCH_VERSIONS",
    "batches_allowed",
    "envelope_problem",
    "is_request_id",
    "parse",
    "same_id",
]

log = logging.getLogger("paicli.mcp.rpc")

# JSON-RPC batches exist in this revision only (added in 2025-03-26, removed in 2025-06-18).
BATCH_VERSIONS = frozenset({"2025-03-26"})


def batches_allowed(era: Era, version: str) -> bool:
    """Whether a session that agreed on `version` may receive JSON-RPC batches."""
    return era == "legacy" and version in BATCH_VERSIONS


def parse(
    data: bytes | bytearray | memoryview | str,
    *,
    batches: bool,
    where: str,
    skipped: Callable[[str], None] | None = None,
) -> list[JsonObject]:
    """The messages in one JSON text: an object, or (if `batches`) an array of objects.

    Anything else (not JSON, too deep, a number out of range, a scalar, a batch where none
    is allowed) gives no message: why, with `where` (the server, and what was read), goes
    to `skipped`, or is logged as a warning when there is none.
    """
    skip = skipped or _warn
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if _blank(data):
            return []
        if (read := _salvaged(data, str(exc), where)) is not None:
            return [read]
        skip(f"{where}: skipping text that is not valid JSON ({exc}): {_head(data)}")
        return []
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        if not batches:
            skip(
                f"{where}: dropping a JSON-RPC batch of {len(value)} messages: batches exist "
                "only in protocol 2025-03-26"
            )
            return []
        members = [member for member in value if isinstance(member, dict)]
        if len(members) < len(value):
            skip(f"{where}: skipping batch members that are not JSON objects")
        return members
    skip(f"{where}: skipping JSON that is not a message object: {_head(data)}")
    return []


def _salvaged(
    data: bytes | bytearray | memoryview | str, reason: str, where: str
) -> JsonObject | None:
    """An answer that parses only in part (`_salvage`): what can be read of it."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if not raw.lstrip().startswith(b"{"):
        return None
    from ._salvage import salvage  # noqa: PLC0415 - only for answers that fail to parse

    message = salvage(raw, reason)
    if message is not None:
        log.warning(
            "%s: an answer did not parse whole (%s); read what could be read of it", where, reason
        )
    return message


def _warn(text: str) -> None:
    log.warning("%s", text)


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """Whether `value` may be a JSON-RPC id: a string or an integer. A bool is neither
    (though Python's `True == 1`), and 1.0 is a number, not the integer 1."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def same_id(value: object, request_id: RequestId) -> bool:
    """Whether `value` is the id `request_id`: same type (exactly: a bool is no integer)
    and same value."""
    kind = type(value)
    return kind is type(request_id) and (kind is int or kind is str) and value == request_id


def envelope_problem(message: JsonObject) -> str | None:
    """Why `message` is not a valid JSON-RPC 2.0 message, or None if it is."""
    if "jsonrpc" not in message:
        return 'no "jsonrpc": "2.0"'
    if message["jsonrpc"] != "2.0":
        return f'"jsonrpc" is {message["jsonrpc"]!r:.20}, not "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "its method is not a string"
        if "id" in message and not is_request_id(message["id"]):
            return f"request id {message['id']!r:.40} is neither a string nor an integer"
        if "result" in message or "error" in message:
            return "a request or notification carrying a result or an error"
        return None
    has_result, has_error = "result" in message, "error" in message
    if has_result and has_error:
        return "a response with both a result and an error"
    if not has_result and not has_error:
        return "a response with neither a result nor an error"
    response_id = message.get("id")
    kind = type(response_id)
    if kind is int or kind is str:
        return None  # every answer to one of our requests: checked first
    if response_id is None:
        # Only an error may lack an id: the peer could not read the request's.
        return "a result without an id" if has_result else None
    if not is_request_id(response_id):
        return f"response id {response_id!r:.40} is neither a string nor an integer"
    return None


def _blank(data: bytes | bytearray | memoryview | str) -> bool:
    # Only a short text can be blank worth ignoring; never copy a large one to find out.
    if len(data) > 64:
        return False
    return not (data.strip() if isinstance(data, str) else bytes(data).strip())


def _head(data: bytes | bytearray | memoryview | str) -> str:
    """The start of `data` for a message, at most `_HEAD_LENGTH` long, never ending inside a
    word: a secret cut in half would no longer be recognised by an application's redactor
    (which knows the whole value), so the word the cut falls in is left out."""
    head = data[:_HEAD_LENGTH]
    text = head if isinstance(head, str) else bytes(head)
    if len(data) > _HEAD_LENGTH and _in_word(data[_HEAD_LENGTH]):
        end = len(text)
        while end and _in_word(text[end - 1]):
            end -= 1
        text = text[:end]
    return repr(text)


def _in_word(unit: int | str) -> bool:
    return (chr(unit) if isinstance(unit, int) else unit) in _WORD
