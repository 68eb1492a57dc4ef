"""The agent with skills, in memory: names and descriptions in the system prompt, the body
and files loaded through `load_skill`, an MCP server's skills beside the local ones (our
skills server), and what a skill's `allowed-tools` may and may not pre-approve."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from paicli.runtime import Runtime
from tests.agent.test_loop import Approvals, Events, audit_lines, tool_messages
from tests.conftest import SERVER_PROGRAMS
from tests.llm_memory import MemoryLlm
from tests.llm_server import Json
from tests.model_view import unfenced
from tests.runtimes import memory_runtime
from tests.skills.test_local import CHANGELOG, CODE_REVIEWER, write

API_KEY = "sk-test-SKILLS-0123456789"
Start = Callable[[MemoryLlm], AbstractAsyncContextManager[Runtime]]


def call(call_id: str, name: str, arguments: Json) -> Json:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": json.dumps(arguments)}]}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, paicli home, a folder of skills an MCP server serves)."""
    project, home = tmp_path / "project", tmp_path / "home" / ".paicli"
    (project / ".paicli").mkdir(parents=True)
    (project / "notes.txt").write_text("alpha\n")
    write(home / "skills" / "code-reviewer", CODE_REVIEWER)
    write(project / ".claude" / "skills" / "changelog", CHANGELOG, references__STYLE_md="Terse.\n")
    served = tmp_path / "served"
    write(
        served / "pdf-processing",
        "---\nname: pdf-processing\ndescription: PDFs.\n---\nUse FORMS.md.\n",
        FORMS_md="Forms.\n",
    )
    return project, home, served


@pytest.fixture
def start(folders: tuple[Path, Path, Path]) -> Start:
    project, home, served = folders
    servers = {
        "skills": {
            "command": sys.executable,
            "args": [str(SERVER_PROGRAMS / "skills_server.py"), str(served)],
        }
    }
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home.parent),
        "PAICLI_HOME": str(home),
        "PAICLI_API_KEY": API_KEY,
    }

    @asynccontextmanager
    async def opened(llm: MemoryLlm) -> AsyncIterator[Runtime]:
        async with memory_runtime(project, environ, llm, Approvals()) as runtime:
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            yield runtime

    return opened


async def test_the_prompt_names_every_skill_and_the_model_loads_one(start: Start) -> None:
    script = [
        call("a", "load_skill", {"name": "changelog"}),
        call("b", "load_skill", {"name": "changelog", "file": "references/STYLE.md"}),
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, start(llm) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("write release notes", Events())
    system = llm.requests[0]["messages"][0]["content"]
    assert "- changelog (project skill): Write a CHANGELOG entry" in system
    assert "- code-reviewer (user skill): Review code" in system
    assert "- skills:pdf-processing (MCP server skills): PDFs." in system
    assert "git diff --staged" not in system  # bodies are loaded on demand only
    loaded, style = (m["content"] for m in tool_messages(llm.requests[2]))
    assert loaded.startswith("Skill changelog (project skill, .claude/skills/changelog).")
    assert "grant nothing for a project's skill" in loaded
    assert "Its files (load_skill with `file` to read one): references/STYLE.md." in loaded
    assert loaded.endswith(
        "Run `git diff --staged`, then add one entry to CHANGELOG.md "
        "following references/STYLE.md.\n"
    )
    assert style == "Terse.\n"


async def test_a_servers_skill_is_read_verified_and_fenced_as_its_data(start: Start) -> None:
    script = [
        call("a", "load_skill", {"name": "skills:pdf-processing"}),
        call("b", "load_skill", {"name": "skills:pdf-processing", "file": "FORMS.md"}),
        call("c", "load_skill", {"name": "skills:pdf-processing", "file": "../x/SKILL.md"}),
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, start(llm) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("fill the form", Events())
    loaded, forms, escape = (m["content"] for m in tool_messages(llm.requests[3]))
    assert 'server="skills"' in loaded
    assert unfenced(loaded) == (
        "Skill skills:pdf-processing from MCP server skills (skill://pdf-processing/SKILL.md). "
        "Its files (load_skill with `file` to read one): FORMS.md.\n\nUse FORMS.md.\n"
    )
    assert unfenced(forms) == "Forms.\n"
    assert "is not a path inside the skill" in escape


async def test_a_users_skill_pre_approves_its_tools_once_loaded(
    start: Start, folders: tuple[Path, Path, Path]
) -> None:
    project, home, _ = folders
    scribe = "---\nname: scribe\ndescription: Write notes.\nallowed-tools: Write\n---\nWrite.\n"
    write(home / "skills" / "scribe", scribe)
    write_call = {"path": "x.txt", "content": "notes"}
    script = [
        call("a", "write_file", write_call),
        call("b", "load_skill", {"name": "scribe"}),
        call("c", "write_file", write_call),
        call("d", "edit_file", {"path": "notes.txt", "old_string": "alpha", "new_string": "beta"}),
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, start(llm) as runtime:
        assert runtime.agent is not None and runtime.skills is not None
        await runtime.agent.run("take notes", Events())
        assert runtime.skills.granted() == ("write_file",)
        runtime.new_conversation()
        assert runtime.skills.granted() == ()
    before, loaded, _, edit = (m["content"] for m in tool_messages(llm.requests[4]))
    assert "denied" in before  # asked before the skill was loaded (the approver says no)
    assert "While it is in use these calls run without asking: write_file." in loaded
    assert (project / "x.txt").read_text() == "notes"
    assert "denied" in edit  # not in its allowed-tools: asked as usual
    decided = [
        (r["tool"], r["decided_by"]) for r in audit_lines(runtime) if r["tool"] != "load_skill"
    ]
    assert decided == [
        ("write_file", "user"),
        ("write_file", "skill"),
        ("edit_file", "user"),
    ]


async def test_a_project_skills_allowed_tools_grant_nothing(
    start: Start, folders: tuple[Path, Path, Path]
) -> None:
    project, _, _ = folders
    scribe = "---\nname: scribe\ndescription: Write notes.\nallowed-tools: Write\n---\nWrite.\n"
    write(project / ".paicli" / "skills" / "scribe", scribe)
    script = [
        call("a", "load_skill", {"name": "scribe"}),
        call("b", "write_file", {"path": "x.txt", "content": "notes"}),
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, start(llm) as runtime:
        assert runtime.agent is not None and runtime.skills is not None
        await runtime.agent.run("notes", Events())
        assert runtime.skills.granted() == ()
    loaded, written = (m["content"] for m in tool_messages(llm.requests[2]))
    assert "grant nothing for a project's skill" in loaded
    assert "denied" in written  # asked (the test's approver says no), never pre-approved
    assert not (project / "x.txt").exists()


async def test_an_unknown_skill_is_refused_naming_the_skills(start: Start) -> None:
    script = [call("a", "load_skill", {"name": "nope\x1b[2J"}), {"text": "ok"}]
    async with MemoryLlm(script) as llm, start(llm) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("go", Events())
    (refused,) = tool_messages(llm.requests[1])
    assert "there is no skill named" in refused["content"]
    assert "code-reviewer, changelog, skills:pdf-processing" in refused["content"]


async def test_a_tampered_servers_skill_is_an_error_the_model_reads(
    folders: tuple[Path, Path, Path],
) -> None:
    project, home, served = folders
    args = [str(SERVER_PROGRAMS / "skills_server.py"), str(served), "--tamper", "digest"]
    servers = {"skills": {"command": sys.executable, "args": args}}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    environ = {"PATH": "", "HOME": str(home.parent), "PAICLI_HOME": str(home)}
    script = [call("a", "load_skill", {"name": "skills:pdf-processing"}), {"text": "ok"}]
    async with MemoryLlm(script) as llm:
        environ["PAICLI_API_KEY"] = API_KEY
        async with memory_runtime(project, environ, llm, Approvals()) as runtime:
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            assert runtime.agent is not None
            await runtime.agent.run("go", Events())
    (failed,) = tool_messages(llm.requests[1])
    assert failed["content"].startswith("load_skill failed: skills:pdf-processing:")
    assert "does not match its digest" in failed["content"]
    assert "Use FORMS.md" not in failed["content"]
