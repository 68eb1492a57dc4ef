"""Providers' prompt caches hit only on a byte-identical prefix: the system prompt (with the
servers' instructions) and the tool definitions paicli sends must not change from one
request to the next, nor across runs, while nothing changed. Two real `paicli -p` runs (the
second carries the conversation on, and finds the servers in the catalogue) against the
scripted model server, which records every request."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import Json, ScriptedLlm

pytestmark = pytest.mark.real

FAULT = str(SERVER_PROGRAMS / "fault_server.py")


def prefix(request: Json) -> tuple[str, str]:
    """The system message and the tools, as the request's JSON renders them (key order
    kept: the bytes a provider's cache compares)."""
    return json.dumps(request["messages"][0]), json.dumps(request.get("tools"))


async def test_the_prompt_prefix_is_the_same_across_requests_and_runs(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".paicli").mkdir(parents=True)
    # alpha starts late and is listed last; zeta has instructions for the system prompt.
    servers = {
        "zeta": {
            "command": sys.executable,
            "args": [FAULT, "--instructions-from-env", "ZETA_NOTE"],
            "env": {"ZETA_NOTE": "some-note-for-the-model"},
        },
        "alpha": {"command": sys.executable, "args": [FAULT, "--start-delay", "1"]},
    }
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    first: list[Json] = [
        {"tool_calls": [{"id": "c", "name": "list_dir", "arguments": "{}"}]},
        {"text": "one"},
    ]
    async with ScriptedLlm(first) as llm:
        run = await paicli(root, "-p", "first", "--trust-project", llm=llm)
        assert run.code == 0, run.stderr
        requests = list(llm.requests)
    async with ScriptedLlm([{"text": "two"}]) as llm:
        run = await paicli(root, "-p", "second", "--continue", "--trust-project", llm=llm)
        assert run.code == 0, run.stderr
        requests += llm.requests
    assert len(requests) == 3
    assert requests[0]["tools"], "the servers' tools are offered"
    assert len({prefix(request) for request in requests}) == 1
