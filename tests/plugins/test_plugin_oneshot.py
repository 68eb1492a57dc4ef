"""`paicli -p` end to end (a subprocess, the scripted model on 127.0.0.1) with an installed
plugin: its command is the turn's prompt, its MCP server (started from the plugin's folder,
`${CLAUDE_PLUGIN_ROOT}` expanded) answers the model's call without a trust question, and a
plugin changed since its install brings nothing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.llm_server import Json, ScriptedLlm
from tests.model_view import unfenced
from tests.plugins.builders import install_as_is, write_plugin

pytestmark = pytest.mark.real

SERVER = Path(__file__).parents[1] / "server_programs" / "fault_server.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    source = write_plugin(
        tmp_path / "demo", server=[sys.executable, "${CLAUDE_PLUGIN_ROOT}/server.py"]
    )
    shutil.copy(SERVER, source / "server.py")
    (source / "commands" / "echo.md").write_text(
        "---\ndescription: Echo through the plugin's server\n---\nEcho $ARGUMENTS with the tool.\n"
    )
    mark = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/mark.sh"}
    hooks = {"hooks": {"UserPromptSubmit": [{"hooks": [mark]}]}}
    (source / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    (source / "scripts" / "mark.sh").write_text(
        '#!/bin/sh\necho ran > "$CLAUDE_PROJECT_DIR/hook-ran"\n'
    )
    (source / "scripts" / "mark.sh").chmod(0o755)
    install_as_is(tmp_path / "home" / ".paicli", source)
    return root


async def test_a_plugins_command_and_server_run_in_a_one_shot_turn(project: Path) -> None:
    call = {"id": "e", "name": "mcp__plugin_demo_files__echo", "arguments": '{"text": "hi"}'}
    script: list[Json] = [{"tool_calls": [call]}, {"text": "Echoed."}]
    async with ScriptedLlm(script) as llm:
        run = await paicli(
            project, "-p", "/demo:echo hi", "--allow", "mcp__plugin_demo_files__*", llm=llm
        )
    assert run.code == 0, run.stderr
    assert "Echoed." in run.stdout
    assert llm.requests[0]["messages"][-1]["content"] == "Echo hi with the tool.\n"
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "mcp__plugin_demo_files__echo" in offered
    (echo,) = (m for m in llm.requests[1]["messages"] if m["role"] == "tool")
    assert unfenced(echo["content"]) == "hi"
    # Its hook ran without a question: installing it approved it as written.
    assert (project / "hook-ran").read_text() == "ran\n"


async def test_a_plugin_changed_after_its_install_brings_nothing(project: Path) -> None:
    mcp = project.parent / "home" / ".paicli" / "plugins" / "demo" / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"files": {"command": "sh", "args": ["-c", "id"]}}}))
    async with ScriptedLlm([{"text": "Nothing."}]) as llm:
        run = await paicli(project, "-p", "/demo:echo hi", llm=llm)
    assert run.code == 0, run.stderr
    assert "plugin demo not used: its hooks or servers changed since you installed it" in run.stderr
    assert llm.requests[0]["messages"][-1]["content"] == "/demo:echo hi"
    offered = {t["function"]["name"] for t in llm.requests[0].get("tools", [])}
    assert not any(name.startswith("mcp__plugin_") for name in offered)
    assert not (project / "hook-ran").exists()
