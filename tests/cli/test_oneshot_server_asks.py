"""What `paicli -p` answers when a server asks for input or for the model: it never asks, so
an elicitation is declined (or cancelled, as `[mcp] elicitation` says) and sampling refused,
each with one line on stderr naming the server, and each recorded in the audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.llm_server import Json, ScriptedLlm
from tests.model_view import unfenced

from .test_oneshot import paicli, project

pytestmark = pytest.mark.real

__all__ = ["project"]  # the fixture, used by name


def tool_call(name: str) -> list[Json]:
    call = {"id": "c", "name": f"mcp__fault__{name}", "arguments": "{}"}
    return [{"tool_calls": [call]}, {"text": "done"}]


def audit(project: Path, tool: str) -> list[dict[str, Any]]:
    files = sorted((project.parent / "home" / ".paicli" / "audit").glob("*.jsonl"))
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    return [r for r in records if r.get("tool") == tool]


def server_reply(llm: ScriptedLlm) -> Json:
    reply: Json = json.loads(unfenced(llm.requests[1]["messages"][-1]["content"]))
    return reply


@pytest.mark.parametrize(("setting", "action"), [(None, "decline"), ("cancel", "cancel")])
async def test_an_elicitation_is_answered_without_asking_with_one_notice(
    project: Path, setting: str | None, action: str
) -> None:
    if setting is not None:
        config = project.parent / "home" / ".paicli" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'[mcp]\nelicitation = "{setting}"\n')
    async with ScriptedLlm(tool_call("ask_elicitation")) as llm:
        run = await paicli(
            project, "-p", "go", "--trust-project", "--allow", "mcp__fault__*", llm=llm
        )
    assert run.code == 0, run.stderr
    assert server_reply(llm)["result"] == {"action": action}
    [notice] = [line for line in run.stderr.splitlines() if "asked for input" in line]
    verb = "declined" if action == "decline" else "cancelled"
    assert notice == (
        f"fault asked for input (name?); {verb}: paicli -p does not ask ([mcp] elicitation in "
        "config.toml)"
    )
    [record] = audit(project, "elicitation/create")
    assert record["server"] == "fault" and record["outcome"] == action
    assert record["decided_by"] == "config"


async def test_a_bad_elicitation_setting_is_one_line_and_declines(project: Path) -> None:
    config = project.parent / "home" / ".paicli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[mcp]\nelicitation = "accept"\n')
    async with ScriptedLlm(tool_call("ask_elicitation")) as llm:
        run = await paicli(
            project, "-p", "go", "--trust-project", "--allow", "mcp__fault__*", llm=llm
        )
    assert run.code == 0, run.stderr
    assert '[mcp] elicitation must be "decline" or "cancel"' in run.stderr
    assert server_reply(llm)["result"] == {"action": "decline"}


async def test_sampling_is_refused_with_the_user_rejected_error_and_one_notice(
    project: Path,
) -> None:
    async with ScriptedLlm(tool_call("ask_sampling")) as llm:
        run = await paicli(
            project, "-p", "go", "--trust-project", "--allow", "mcp__fault__*", llm=llm
        )
    assert run.code == 0, run.stderr
    assert len(llm.requests) == 2  # the model was not asked on the server's behalf
    error = server_reply(llm)["error"]
    assert error["code"] == -1 and "rejected" in error["message"]
    notices = [line for line in run.stderr.splitlines() if line.startswith("fault asked")]
    assert notices == [
        "fault asked for a completion from the model (sampling); refused: paicli -p does not ask"
    ]
    [record] = audit(project, "sampling/createMessage")
    assert record["decision"] == "denied" and record["outcome"] == "denied"
