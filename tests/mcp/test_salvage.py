"""Answers the parser refuses as a whole (nesting over 1024 levels, a number out of range):
what `_jsonrpc.parse` still reads of them, through the same call every transport makes."""

from __future__ import annotations

import json

import pytest

from paicli.mcp import Tool
from paicli.mcp._jsonrpc import parse

DEEP = b'{"type":"object","properties":{"x":' * 5000 + b"{}" + b"}}" * 5000


def tool(name: str) -> bytes:
    return json.dumps({"name": name, "inputSchema": {"type": "object"}}).encode()


def read(line: bytes) -> list[dict[str, object]]:
    return parse(line, batches=False, where="srv: stdout")


def test_a_tools_page_keeps_every_readable_tool_and_a_stand_in_for_the_deep_one() -> None:
    deep = b'{"description": "a \\" [ { tricky", "name": "deep", "inputSchema": ' + DEEP + b"}"
    page = b'{"tools": [' + tool("a") + b", " + deep + b"," + tool("b") + b'], "nextCursor": "c2"}'
    (message,) = read(b'{"jsonrpc": "2.0", "id": 7, "result": ' + page + b"}")
    assert message["id"] == 7
    result = message["result"]
    assert isinstance(result, dict) and result["nextCursor"] == "c2"
    tools = [Tool.from_wire(t) for t in result["tools"]]
    assert [(t.name, t.unreadable) for t in tools] == [
        ("a", None),
        ("deep", "its definition could not be read (depth limit exceeded)"),
        ("b", None),
    ]
    assert tools[1].input_schema == {"type": "object"}


def test_a_stand_in_whose_name_cannot_be_read_is_numbered() -> None:
    nameless = b'{"inputSchema": ' + DEEP + b"}"
    (message,) = read(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[' + nameless + b"]}}")
    (stand_in,) = message["result"]["tools"]  # type: ignore[index]
    assert stand_in["name"] == "unreadable-tool-1"


@pytest.mark.parametrize(
    ("value", "reason"),
    [(b"[" * 3000 + b"]" * 3000, "depth limit exceeded"), (b"9" * 5000, "number is infinity")],
)
def test_any_other_answer_becomes_an_error_for_its_request(value: bytes, reason: str) -> None:
    (message,) = read(b'{"jsonrpc": "2.0", "id": "r-1", "result": {"v": ' + value + b"}}")
    assert message["id"] == "r-1" and "result" not in message
    error = message["error"]
    assert isinstance(error, dict) and error["code"] == -32700
    assert f"the server's answer could not be read ({reason}" in str(error["message"])


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/message", "params": ' + DEEP + b"}",
        b'{"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": ' + DEEP + b"}",
        b'{"jsonrpc": "2.0", "id": 3, "result": {"tools": []}',  # cut short: unbalanced
        b'{"jsonrpc": "2.0", "id": true, "result": ' + DEEP + b"}",  # no valid id
        b'{"jsonrpc": "2.0", "id": 3 "result": ' + DEEP + b"}",  # no comma: no members
        b"[" + DEEP + b"]",
    ],
)
def test_what_has_no_request_to_answer_is_still_skipped(line: bytes) -> None:
    assert read(line) == []
