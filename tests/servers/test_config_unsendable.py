"""What an operating system or an HTTP client cannot take is a config error naming the file,
the server and the field, found when the file is read: a NUL in a command line, a variable
name with `=`, a header that would break the request, a URL that does not parse. Before,
each was an "internal error" at start-up (and a URL that did not parse left an HTTP session
open). A value is never quoted: it may be a secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import HttpServer, ServerConfigError
from paicli.servers.config import load_config

SECRET = "sk-live-4f9a8b7c6d5e"
URL = "http://127.0.0.1:9/mcp"


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ({"command": "echo\0x"}, "'command' cannot contain a NUL character"),
        ({"command": "echo", "args": [f"{SECRET}\0"]}, "'args' cannot contain a NUL character"),
        ({"command": "echo", "cwd": "/tmp\0x"}, "'cwd' cannot contain a NUL character"),
        ({"command": "echo", "env": {"K": f"{SECRET}\0"}}, "'env' cannot contain a NUL character"),
        ({"command": "echo", "env": {"A=B": "v"}}, "'env' has 'A=B', which is not a variable name"),
        ({"command": "echo", "env": {"": "v"}}, "'env' has '', which is not a variable name"),
        (
            {"url": URL, "headers": {"X-A": f"{SECRET}\r\nInjected: 1"}},
            "header 'X-A' has a control character (CR, LF, NUL...) in its value",
        ),
        (
            {"url": URL, "headers": {"X-A": f"{SECRET}\0"}},
            "header 'X-A' has a control character (CR, LF, NUL...) in its value",
        ),
        (
            {"url": URL, "headers": {"X-A\r\nX-Evil: 1\r\nX": "v"}},
            "'headers' has 'X-A\\r\\nX-Evil: 1\\r\\nX', not a header name",
        ),
        (
            {"url": URL, "headers": {"Has space": "v"}},
            "'headers' has 'Has space', not a header name",
        ),
        (
            {"url": f"http://me:{SECRET}@[::1/mcp"},
            "'url' is not a valid URL (Invalid IPv6 URL)",
        ),
        (
            {"url": f"http://me:{SECRET}@127.0.0.1:99999/mcp"},
            "'url' is not a valid URL (Port out of range 0-65535)",
        ),
        ({"url": "http:///mcp"}, "'url' has no host"),
    ],
)
def test_what_cannot_be_sent_is_a_config_error_naming_the_field_not_the_value(
    tmp_path: Path, entry: dict[str, Any], error: str
) -> None:
    home = tmp_path / "home"
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"s": entry}}))
    [loaded] = load_config(None, environ={"HOME": str(home)}).servers.values()
    assert loaded.spec is None
    assert loaded.error == f"~/.paicli/mcp.json: server 's': {error}"
    assert SECRET not in loaded.error


def test_headers_are_checked_however_the_library_is_used() -> None:
    with pytest.raises(ServerConfigError, match="header 'X' has a control character"):
        HttpServer(URL, headers={"X": "a\nb"})
    # Tab is allowed in a header value, as are printable characters beyond ASCII.
    assert HttpServer(URL, headers={"X": "a\tb é"}).headers == {"X": "a\tb é"}
