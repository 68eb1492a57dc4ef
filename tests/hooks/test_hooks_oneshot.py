"""Hooks through `paicli -p` for real: hook commands (tests/hooks/hook_program.py) configured
in settings files written the way Claude Code's documentation shows them, the scripted model
on 127.0.0.1 calling tools, and what the model, the files, stderr and the audit log show."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.hooks.approval import HookApprovals
from paicli.hooks.settings import load_hooks
from paicli.mcp import Sandbox, check_sandbox
from tests.audit_records import audit_records
from tests.cli.test_oneshot import paicli
from tests.in_process import Run
from tests.llm_server import ScriptedLlm
from tests.processes import processes_with

pytestmark = pytest.mark.real

HOOK = Path(__file__).with_name("hook_program.py")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def home(project: Path) -> Path:
    return project.parent / "home" / ".paicli"


def command(mode: str, *more: str) -> str:
    return " ".join([f'"{sys.executable}"', f'"{HOOK}"', mode, *more])


def settings(path: Path, event: str, mode: str, *more: str, **group: Any) -> None:
    """A settings file with one hook, as Claude Code's hooks reference writes it."""
    handler: dict[str, Any] = {"type": "command", "command": command(mode, *more)}
    if "timeout" in group:
        handler["timeout"] = group.pop("timeout")
    document = {"hooks": {event: [{**group, "hooks": [handler]}]}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2))


def write_call(content: str = "hello\n") -> dict[str, Any]:
    arguments = json.dumps({"path": "notes.txt", "content": content})
    return {"tool_calls": [{"id": "call_1", "name": "write_file", "arguments": arguments}]}


def logged(project: Path) -> list[dict[str, Any]]:
    path = project / "hook-log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def audit(project: Path) -> list[dict[str, Any]]:
    return audit_records(home(project) / "audit")


def tool_result(llm: ScriptedLlm, request: int = 1) -> str:
    message = llm.requests[request]["messages"][-1]
    assert message["role"] == "tool"
    return str(message["content"])


async def write_with(
    project: Path, *flags: str, content: str = "hello\n"
) -> tuple[Run, ScriptedLlm]:
    async with ScriptedLlm([write_call(content), {"text": "Done."}]) as llm:
        run = await paicli(project, "-p", "write the notes", *flags, llm=llm)
    assert run.code == 0, run.stderr
    return run, llm


async def test_exit_2_blocks_the_call_and_the_model_reads_stderr(project: Path) -> None:
    settings(home(project) / "settings.json", "PreToolUse", "block", matcher="Write|Edit")
    _, llm = await write_with(project, "--yes")
    assert not (project / "notes.txt").exists()
    assert "no writes in this project" in tool_result(llm)
    [event] = logged(project)
    assert event["hook_event_name"] == "PreToolUse"
    assert event["tool_name"] == "write_file"
    assert event["tool_input"] == {"path": "notes.txt", "content": "hello\n"}
    assert event["cwd"] == str(project)
    hooks = [r for r in audit(project) if r.get("event") == "hook"]
    assert [(r["hook_event"], r["outcome"], r["exit_code"]) for r in hooks] == [
        ("PreToolUse", "blocked", 2)
    ]
    calls = [r for r in audit(project) if r.get("event") != "hook"]
    assert [(r["tool"], r["decision"], r["decided_by"]) for r in calls] == [
        ("write_file", "denied", "hook")
    ]


async def test_json_deny_blocks_with_its_reason(project: Path) -> None:
    settings(home(project) / "settings.json", "PreToolUse", "deny", matcher="write_file")
    _, llm = await write_with(project, "--yes")
    assert not (project / "notes.txt").exists()
    assert "denied by the policy hook" in tool_result(llm)


async def test_json_allow_runs_the_call_without_asking(project: Path) -> None:
    settings(home(project) / "settings.json", "PreToolUse", "allow", matcher="Write")
    await write_with(project)  # no --yes: -p would deny it
    assert (project / "notes.txt").read_text() == "hello\n"
    calls = [r for r in audit(project) if r.get("event") != "hook"]
    assert [(r["tool"], r["decided_by"]) for r in calls] == [("write_file", "hook")]


async def test_updated_input_replaces_the_call_and_must_fit_the_schema(project: Path) -> None:
    settings(home(project) / "settings.json", "PreToolUse", "update", matcher="Write")
    await write_with(project)
    assert (project / "notes.txt").read_text() == "changed by the hook\n"
    (project / "notes.txt").unlink()
    settings(home(project) / "settings.json", "PreToolUse", "bad-update", matcher="Write")
    _, llm = await write_with(project, "--yes")
    assert not (project / "notes.txt").exists()
    assert "input schema refuses" in tool_result(llm)


async def test_a_hook_past_its_timeout_is_killed_with_its_children_and_said(
    project: Path,
) -> None:
    marker = f"paicli-hook-test-{os.getpid()}-{project.parent.name}"
    settings(
        home(project) / "settings.json", "PreToolUse", "hang", marker, matcher="Write", timeout=1
    )
    run, _ = await write_with(project, "--yes")
    # A timed-out hook decides nothing: the call goes on as the flags say.
    assert (project / "notes.txt").read_text() == "hello\n"
    assert "timed out after 1 s and was stopped" in run.stderr
    assert processes_with(marker) == []
    [record] = [r for r in audit(project) if r.get("event") == "hook"]
    assert record["outcome"] == "timeout"


async def test_a_session_end_hook_holds_the_exit_for_claude_codes_budget_only(
    project: Path,
) -> None:
    marker = f"paicli-hook-test-{os.getpid()}-{project.parent.name}"
    settings(home(project) / "settings.json", "SessionEnd", "hang", marker)
    async with asyncio.timeout(30):  # (the 60 s of other hooks would end it past this)
        run, _ = await write_with(project, "--yes")
    assert "hook SessionEnd" in run.stderr
    assert "timed out after 1.5 s and was stopped" in run.stderr
    assert processes_with(marker) == []
    found = load_hooks(home(project), project)
    settings(home(project) / "settings.json", "SessionEnd", "hang", marker, timeout=600)
    longer = load_hooks(home(project), project)
    assert [h.timeout for h in (*found.handlers, *longer.handlers)] == [1.5, 60.0]


async def test_a_hook_runs_in_the_command_sandbox(project: Path) -> None:
    if check_sandbox().mechanism(Sandbox.for_project(project)) is None:
        pytest.skip("no sandbox works here")
    outside = project.parent / "outside.txt"
    settings(home(project) / "settings.json", "PreToolUse", "escape", str(outside))
    await write_with(project, "--yes", "--sandbox", "off")
    assert outside.read_text() == "written from a hook\n"  # the attack works unsandboxed
    outside.unlink()
    await write_with(project, "--yes")
    assert not outside.exists()
    assert len(logged(project)) == 2  # (it ran both times, in the project it may write)


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("bad-json", "answered with JSON that does not parse; its answer is ignored"),
        ("fail", "failed (exit 1): the hook broke"),
        ("flood", "wrote more than its output may hold; its answer is ignored"),
    ],
)
async def test_a_failing_hook_is_one_line_and_decides_nothing(
    project: Path, mode: str, said: str
) -> None:
    settings(home(project) / "settings.json", "PreToolUse", mode, matcher="Write")
    run, _ = await write_with(project, "--yes")
    assert (project / "notes.txt").read_text() == "hello\n"
    lines = [line for line in run.stderr.splitlines() if "hook" in line]
    assert len(lines) == 1 and said in lines[0], run.stderr
    assert "second line" not in run.stderr
    assert "\x1b[2J" not in run.stderr  # the hook's words are escaped
    assert len(run.stderr) < 10_000  # and bounded


async def test_the_project_folder_s_name_is_never_read_by_the_hook_s_shell(
    tmp_path: Path,
) -> None:
    # A folder `git clone` named after a hostile URL, and the user's own hook, quoted as
    # Claude Code's reference advises: the name was put into the shell line as text.
    project = tmp_path / "clone$(touch PWNED)"
    (project / ".git").mkdir(parents=True)
    line = 'printf %s "${CLAUDE_PROJECT_DIR}" > "$CLAUDE_PROJECT_DIR/seen"'
    document = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": line}]}]}}
    home(project).mkdir(parents=True)
    (home(project) / "settings.json").write_text(json.dumps(document))
    async with ScriptedLlm([{"text": "Done."}]) as llm:
        run = await paicli(project, "-p", "hi", llm=llm)
    assert run.code == 0, run.stderr
    assert (project / "seen").read_text() == str(project)
    assert not (project / "PWNED").exists()


async def test_post_tool_use_exit_2_puts_stderr_before_the_model(project: Path) -> None:
    settings(home(project) / "settings.json", "PostToolUse", "post-block", matcher="Write")
    _, llm = await write_with(project, "--yes")
    assert (project / "notes.txt").exists()
    result = tool_result(llm)
    assert "A PostToolUse hook says: the result looks wrong" in result
    event = logged(project)[0]
    assert event["tool_response"]["is_error"] is False


async def test_prompt_and_session_hooks_add_context_stop_sends_the_model_on(
    project: Path,
) -> None:
    path = home(project) / "settings.json"
    path.parent.mkdir(parents=True)
    hooks = {
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": command("context", "SESSION-NOTE")}],
            }
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": command("context", "PROMPT-NOTE")}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": command("stop-once")}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": command("log")}]}],
    }
    path.write_text(json.dumps({"hooks": hooks}))
    async with ScriptedLlm([{"text": "First."}, {"text": "Tests pass."}]) as llm:
        run = await paicli(project, "-p", "do it", llm=llm)
    assert run.code == 0, run.stderr
    assert run.stdout.endswith("Tests pass.\n")  # (the first answer streamed before it)
    first = llm.requests[0]["messages"]
    assert "SESSION-NOTE" in first[0]["content"]  # the system prompt
    assert first[-1]["content"].startswith("do it\n\n<user-prompt-submit-hook>\nPROMPT-NOTE")
    assert (
        llm.requests[1]["messages"][-1]["content"] == "<stop-hook>\nrun the tests too\n</stop-hook>"
    )
    events = [e["hook_event_name"] for e in logged(project)]
    assert events == ["SessionStart", "UserPromptSubmit", "Stop", "Stop", "SessionEnd"]


async def test_a_blocked_prompt_never_reaches_the_model(project: Path) -> None:
    settings(home(project) / "settings.json", "UserPromptSubmit", "prompt-block")
    async with ScriptedLlm([{"text": "never"}]) as llm:
        run = await paicli(project, "-p", "tell me the secrets", llm=llm)
    assert run.code == 1
    assert "prompts about secrets are not allowed" in run.stderr
    assert llm.requests == []


async def test_a_prompt_blocked_with_lines_of_its_own_is_said_in_one_line_each_time(
    project: Path,
) -> None:
    settings(home(project) / "settings.json", "UserPromptSubmit", "prompt-block-lines")
    async with ScriptedLlm([{"text": "never"}]) as llm:
        run = await paicli(project, "-p", "go", llm=llm)
    assert run.code == 1
    assert llm.requests == []
    shown = "blocked paicli: \\x1b[32m✓ all tests passed\\x1b[0m x x x"
    said = run.stderr.splitlines()
    assert len(said) == 2, said  # (the hook's 502 lines were as many lines on the screen)
    assert said[0].startswith(f"paicli: A UserPromptSubmit hook blocked the prompt: {shown}")
    assert said[1].startswith(f"paicli: blocked by a hook: {shown}")
    assert all(line.endswith("x…") and len(line) < 300 for line in said), said


async def test_project_hooks_run_only_once_approved_and_are_asked_again_on_change(
    project: Path,
) -> None:
    claude = project / ".claude" / "settings.json"
    settings(claude, "PreToolUse", "block", matcher="Bash|Write")
    run, _ = await write_with(project, "--yes", "--trust-project")
    assert (project / "notes.txt").exists()  # not approved: not run, --trust-project or not
    assert logged(project) == []
    assert "the project's 1 hooks (.claude/settings.json) do not run: not approved" in run.stderr
    (project / "notes.txt").unlink()
    # The user approves exactly these (as the REPL's question keeps the answer).
    store = HookApprovals(home(project) / "approved-hooks.json")
    store.keep(project, load_hooks(home(project), project).digest, approved=True)
    assert oct((home(project) / "approved-hooks.json").stat().st_mode & 0o777) == "0o600"
    _, llm = await write_with(project, "--yes")
    assert not (project / "notes.txt").exists()
    assert "no writes in this project" in tool_result(llm)
    # Changed: asked again, so not run meanwhile.
    settings(claude, "PreToolUse", "allow", matcher="Write")
    run, _ = await write_with(project, "--yes")
    assert (project / "notes.txt").exists()
    assert len(logged(project)) == 1
    assert "do not run: not approved" in run.stderr
