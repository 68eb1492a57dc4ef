"""`paicli -p` with skills, end to end: the real CLI, the scripted model on 127.0.0.1, a
project skill written as Claude Code's documentation shows one, and our skills server as a
real process; the model loads both through `load_skill`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import Json, ScriptedLlm
from tests.model_view import unfenced
from tests.skills.test_local import CHANGELOG, write

pytestmark = pytest.mark.real


def load(call_id: str, **arguments: str) -> Json:
    return {"id": call_id, "name": "load_skill", "arguments": json.dumps(arguments)}


async def test_the_model_loads_a_project_skill_and_a_servers_skill(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / ".claude" / "skills" / "changelog", CHANGELOG, references__STYLE_md="Terse.")
    served = project / "served"  # the project's server runs sandboxed: a private /tmp
    write(served / "pdf-processing", "---\nname: pdf-processing\ndescription: PDFs.\n---\nGo.\n")
    reads = project / "reads"
    args = [str(SERVER_PROGRAMS / "skills_server.py"), str(served), "--reads", str(reads)]
    servers = {"skills": {"command": sys.executable, "args": args}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    script: list[Json] = [
        {"tool_calls": [load("a", name="changelog"), load("b", name="skills:pdf-processing")]},
        {"tool_calls": [load("c", name="changelog", file="references/STYLE.md")]},
        {"text": "Notes written."},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "-p", "release notes", "--trust-project", llm=llm)
    assert run.code == 0, run.stderr
    assert run.stdout == "Notes written.\n", run.stderr
    system = llm.requests[0]["messages"][0]["content"]
    assert "- changelog (project skill): Write a CHANGELOG entry" in system
    assert "- skills:pdf-processing (MCP server skills): PDFs." in system, run.stderr
    first = [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert "Run `git diff --staged`" in first[0]
    assert unfenced(first[1]).endswith("\n\nGo.\n")
    style = [m["content"] for m in llm.requests[2]["messages"] if m["role"] == "tool"][-1]
    assert style == "Terse."
    # Listing read nothing; the server saw exactly the one SKILL.md the model loaded.
    assert reads.read_text().splitlines() == ["skill://pdf-processing/SKILL.md"]
