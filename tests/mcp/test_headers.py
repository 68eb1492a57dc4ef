"""2026 request headers: value encoding and `x-mcp-header` validation."""

from __future__ import annotations

import pytest

from paicli.mcp._headers import encode_value, header_params, request_headers


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("us-west1", "us-west1"),
        ("has inner spaces", "has inner spaces"),
        ("", ""),
        ("file:///path/to/file%20name.txt", "file:///path/to/file%20name.txt"),
        ("héllo", "=?base64?aMOpbGxv?="),
        (" edge", "=?base64?IGVkZ2U=?="),
        ("tab\there", "=?base64?dGFiCWhlcmU=?="),
        ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
    ],
)
def test_values_are_sent_verbatim_only_when_plain_ascii(value: str, sent: str) -> None:
    assert encode_value(value) == sent


def test_annotated_arguments_become_mcp_param_headers() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "retries": {"type": "integer", "x-mcp-header": "Retries"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "nested": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
            "query": {"type": "string"},
        },
    }
    params = {"t": header_params(schema)}
    message = {
        "method": "tools/call",
        "params": {
            "name": "t",
            "arguments": {"region": "eu", "retries": 3, "dry": False, "query": "q", "nested": {}},
        },
    }
    assert request_headers(message, params) == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "t",
        "Mcp-Param-Region": "eu",
        "Mcp-Param-Retries": "3",
        "Mcp-Param-Dry": "false",
    }


@pytest.mark.parametrize(
    "bad",
    [
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Has Space"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Colon:"}}},
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": ["string", "null"], "x-mcp-header": "A"}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Dup"},
                "b": {"type": "string", "x-mcp-header": "dup"},
            }
        },
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}},
        {"$defs": {"d": {"type": "string", "x-mcp-header": "D"}}},
    ],
)
def test_invalid_annotations_disqualify_the_tool(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="x-mcp-header"):
        header_params({"type": "object", **bad})


def test_a_task_request_names_its_task_in_mcp_name() -> None:
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        message = {"method": method, "params": {"taskId": "t-9f2c"}}
        assert request_headers(message, {}) == {"Mcp-Method": method, "Mcp-Name": "t-9f2c"}
