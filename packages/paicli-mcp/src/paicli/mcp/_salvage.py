"""What can still be read of a JSON-RPC answer the parser refused as a whole.

orjson refuses a whole text for one part it cannot take: nesting over 1024 levels, or a number
out of range. Skipping such an answer leaves its request waiting until its deadline, and for
`tools/list` it loses every tool of the server for one bad definition. So, for a line that
refuses to parse, this finds the structure by its strings and brackets alone (no values are
built, so depth costs nothing) and returns:

- for a `tools/list` page: the tools that parse, and in place of each one that does not, a
  stand-in with no parameters whose `_meta` holds the reason (`Tool.unreadable`), under its name
  when that can be read: clients leave it out and say why;
- for any other answer whose `id` can be read: an error answer to that id, so the request
  fails at once with the reason instead of timing out;
- for anything else: nothing (the line stays skipped).

The scan is a regular expression over the bytes, so a hostile multi-megabyte line costs a few
passes in C, not a Python loop per byte.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from .types import UNREADABLE_META

__all__ = ["salvage"]
# What JSON-RPC's spec reserves for "invalid JSON was received".
PARSE_ERROR = -32700

# A JSON string (escapes included) or one structural character: what a scan has to see.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]', re.DOTALL)
_WHITESPACE = b" \t\r\n"
_OPEN, _CLOSE = b"{[", b"}]"
_QUOTE, _COLON, _COMMA = ord('"'), ord(":"), ord(",")
Span = tuple[int, int]


def salvage(data: bytes, reason: str) -> dict[str, Any] | None:
    """The message that can be read of `data` (a line orjson refused for `reason`)."""
    whole = _strip(data, 0, len(data))
    top = _members(data, whole)
    if top is None or "id" not in top:
        return None
    request_id = _value(data, top["id"])
    if not (isinstance(request_id, str) or type(request_id) is int):
        return None
    if "result" in top:
        tools = _tools_page(data, top["result"], reason)
        if tools is not None:
            return {"jsonrpc": "2.0", "id": request_id, "result": tools}
    elif "error" not in top:
        return None  # a request or notification of the server's: nothing to answer
    why = _short(reason)
    error = {
        "code": PARSE_ERROR,
        "message": f"the server's answer could not be read ({why})",
        "data": {UNREADABLE_META: why},  # paicli's own error, not the server's
    }
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _tools_page(data: bytes, span: Span, reason: str) -> dict[str, Any] | None:
    """A `tools/list` result with each unreadable tool replaced by a stand-in."""
    members = _members(data, span)
    if members is None or "tools" not in members:
        return None
    elements = _elements(data, members["tools"])
    if elements is None:
        return None
    tools: list[Any] = []
    for index, element in enumerate(elements):
        try:
            tools.append(orjson.loads(data[element[0] : element[1]]))
        except orjson.JSONDecodeError as exc:
            tools.append(_stand_in(data, element, index, str(exc) or reason))
    page: dict[str, Any] = {"tools": tools}
    if "nextCursor" in members:
        cursor = _value(data, members["nextCursor"])
        if isinstance(cursor, str):
            page["nextCursor"] = cursor
    return page


def _stand_in(data: bytes, span: Span, index: int, reason: str) -> dict[str, Any]:
    fields = _members(data, span) or {}
    name = _value(data, fields["name"]) if "name" in fields else None
    if not isinstance(name, str):
        name = f"unreadable-tool-{index + 1}"
    why = f"its definition could not be read ({_short(reason)})"
    return {"name": name, "inputSchema": {"type": "object"}, "_meta": {UNREADABLE_META: why}}


def _short(reason: str) -> str:
    """orjson's reason without its position ("depth limit exceeded")."""
    return reason.split(": line ", 1)[0]


def _value(data: bytes, span: Span) -> Any:
    """A small member's value (an id, a name, a cursor), or None when it does not parse."""
    start, end = span
    if end - start > 4096:
        return None
    try:
        return orjson.loads(data[start:end])
    except orjson.JSONDecodeError:
        return None


def _members(data: bytes, span: Span) -> dict[str, Span] | None:
    """The spans of the members' values of the object at `span`, by key; None when it is
    not an object whose keys can be read."""
    start, end = span
    if end - start < 2 or data[start] != ord("{") or data[end - 1] != ord("}"):
        return None
    members: dict[str, Span] = {}
    depth, state, key, value_start = 0, "key", "", 0
    for match in _TOKEN.finditer(data, start + 1, end - 1):
        first = data[match.start()]
        if depth:
            depth += (first in _OPEN) - (first in _CLOSE)
            continue
        if state == "key":
            if first != _QUOTE:
                return None
            decoded = _value(data, match.span())
            if not isinstance(decoded, str):
                return None
            key, state = decoded, "colon"
        elif state == "colon":
            if first != _COLON:
                return None
            value_start, state = match.end(), "value"
        elif first == _COMMA:
            members[key] = _strip(data, value_start, match.start())
            state = "key"
        elif first in _OPEN:
            depth = 1
        elif first in _CLOSE:
            return None
    if depth:
        return None
    if state == "value":
        members[key] = _strip(data, value_start, end - 1)
        return members
    return members if state == "key" and not members else None  # `{}`, not a trailing comma


def _elements(data: bytes, span: Span) -> list[Span] | None:
    """The spans of the elements of the array at `span`; None when it is not an array."""
    start, end = span
    if end - start < 2 or data[start] != ord("[") or data[end - 1] != ord("]"):
        return None
    elements: list[Span] = []
    depth, element_start = 0, start + 1
    for match in _TOKEN.finditer(data, start + 1, end - 1):
        first = data[match.start()]
        if first in _OPEN:
            depth += 1
        elif first in _CLOSE:
            depth -= 1
        elif first == _COMMA and depth == 0:
            elements.append(_strip(data, element_start, match.start()))
            element_start = match.end()
    if depth:
        return None
    last = _strip(data, element_start, end - 1)
    if last[0] < last[1]:
        elements.append(last)
    return elements


def _strip(data: bytes, start: int, end: int) -> Span:
    while start < end and data[start] in _WHITESPACE:
        start += 1
    while end > start and data[end - 1] in _WHITESPACE:
        end -= 1
    return start, end
