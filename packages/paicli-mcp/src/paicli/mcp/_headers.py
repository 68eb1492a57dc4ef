"""2026-07-28 HTTP request headers: `Mcp-Method`, `Mcp-Name`, and tool arguments mirrored
as `Mcp-Param-*` where a tool's input schema marks them with `x-mcp-header`.

An annotation is valid only as a non-empty RFC 9110 token, unique (case-insensitively) in
its schema, on a `string`, `integer` or `boolean` property reached from the root through
`properties` alone. A tool with any invalid annotation is not offered at all.
"""

from __future__ import annotations

import base64
import re
from typing import Any

__all__ = ["HeaderParam", "encode_value", "header_params", "request_headers"]

HeaderParam = tuple[tuple[str, ...], str]
ANNOTATION = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")
_HEADER_TYPES = ("string", "integer", "boolean")
# Integers outside this range do not survive a round trip through JSON numbers elsewhere.
_MAX_SAFE_INTEGER = 2**53 - 1


def encode_value(value: str) -> str:
    """A header value: verbatim when it is plain visible ASCII, else Base64-wrapped."""
    plain = (
        all(0x20 <= ord(c) <= 0x7E for c in value)
        and value == value.strip(" ")
        and not _SENTINEL.fullmatch(value)
    )
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode("ascii") + "?="


def header_params(schema: Any) -> list[HeaderParam]:
    """The (argument path, header name) pairs a tool's schema declares.

    Raises ValueError naming the problem when any annotation is invalid.
    """
    found: list[HeaderParam] = []
    _collect(schema, (), found)
    total = _count_annotations(schema)
    if total != len(found):
        raise ValueError(f"{ANNOTATION} outside a plain chain of 'properties'")
    seen: set[str] = set()
    for _, name in found:
        if name.lower() in seen:
            raise ValueError(f"duplicate {ANNOTATION} {name!r}")
        seen.add(name.lower())
    return found


def _collect(node: Any, path: tuple[str, ...], found: list[HeaderParam]) -> None:
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return
    for key, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        if ANNOTATION in sub:
            name = sub[ANNOTATION]
            if not isinstance(name, str) or not _TOKEN.fullmatch(name):
                raise ValueError(f"{ANNOTATION} {name!r} on {key!r} is not a valid header name")
            if sub.get("type") not in _HEADER_TYPES:
                raise ValueError(f"{ANNOTATION} on {key!r} needs a string, integer or boolean")
            found.append(((*path, key), name))
        _collect(sub, (*path, key), found)


def _count_annotations(node: Any) -> int:
    if isinstance(node, dict):
        own = 1 if ANNOTATION in node else 0
        return own + sum(_count_annotations(v) for v in node.values())
    if isinstance(node, list):
        return sum(_count_annotations(v) for v in node)
    return 0


def request_headers(
    message: dict[str, Any], params_for_tool: dict[str, list[HeaderParam]]
) -> dict[str, str]:
    """The 2026 headers of one request: method, name, and mirrored tool arguments."""
    method = message["method"]
    headers = {"Mcp-Method": method}
    params = message.get("params") or {}
    if method in ("tools/call", "prompts/get") and isinstance(params.get("name"), str):
        headers["Mcp-Name"] = encode_value(params["name"])
    elif method == "resources/read" and isinstance(params.get("uri"), str):
        headers["Mcp-Name"] = encode_value(params["uri"])
    elif method.startswith("tasks/") and isinstance(params.get("taskId"), str):
        headers["Mcp-Name"] = encode_value(params["taskId"])  # the tasks extension's
    if method == "tools/call":
        arguments = params.get("arguments")
        for path, name in params_for_tool.get(params.get("name", ""), ()):
            value = _at(arguments, path)
            text = _as_header_text(value)
            if text is not None:
                headers[f"Mcp-Param-{name}"] = encode_value(text)
    return headers


def _at(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments


def _as_header_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) <= _MAX_SAFE_INTEGER:
        return str(value)
    if isinstance(value, str):
        return value
    return None
