"""`paicli -p` records checkpoints and `paicli rewind` brings files and the conversation
back, end to end: the real openai client against the scripted model, real tools (a shell
command among them), the real entry point for both commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.llm_server import Json, ScriptedLlm

pytestmark = pytest.mark.real


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    (root / "gone.txt").write_text("a command removes me\n")
    return root


def write(path: str, content: str, call: str = "w") -> Json:
    return {
        "id": call,
        "name": "write_file",
        "arguments": json.dumps({"path": path, "content": content}),
    }


def command(line: str) -> Json:
    return {"id": "c", "name": "execute_command", "arguments": json.dumps({"command": line})}


YES = ("--yes", "--sandbox", "off")


def saved(project: Path, session: str) -> list[dict[str, object]]:
    document = json.loads(
        (project.parent / "home/.paicli/sessions" / f"{session}.json").read_text()
    )
    messages: list[dict[str, object]] = document["messages"]
    return messages


async def two_turns(project: Path) -> str:
    """Turn 1 writes a.txt and runs a command; turn 2 (`-c`) writes a.txt again."""
    first: list[Json] = [
        {"tool_calls": [write("a.txt", "two\n"), command("echo made > made.txt; rm gone.txt")]},
        {"text": "done"},
    ]
    async with ScriptedLlm(first) as llm:
        run = await paicli(project, "-p", "first", "--output-format", "json", *YES, llm=llm)
    assert run.code == 0, run.stderr
    session = str(json.loads(run.stdout)["session_id"])
    async with ScriptedLlm([{"tool_calls": [write("a.txt", "three\n")]}, {"text": "ok"}]) as llm:
        run = await paicli(project, "-p", "second", "-c", *YES, llm=llm)
    assert run.code == 0, run.stderr
    assert (project / "a.txt").read_text() == "three\n"
    assert (project / "made.txt").exists() and not (project / "gone.txt").exists()
    return session


async def test_p_runs_record_turns_and_rewind_restores_files_and_conversation(
    project: Path,
) -> None:
    session = await two_turns(project)
    listed = await paicli(project, "rewind", "--session", session)
    assert listed.code == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "1. first · 3 file(s): a.txt, gone.txt, made.txt" in lines[1]
    assert "2. second · 1 file(s): a.txt" in lines[2]

    back = await paicli(project, "rewind", "--to", "2")  # (this folder's latest conversation)
    assert back.code == 0, back.stderr
    assert (project / "a.txt").read_text() == "two\n"
    assert "Restored 1 file(s) to before turn 2: a.txt" in back.stdout
    assert [m["content"] for m in saved(project, session) if m["role"] == "user"] == ["first"]

    back = await paicli(project, "rewind", "--session", session, "--to", "1")
    assert back.code == 0, back.stderr
    assert (project / "a.txt").read_text() == "one\n"
    assert (project / "gone.txt").read_text() == "a command removes me\n"
    assert not (project / "made.txt").exists()
    assert "Not undone: turn 1 ran commands (`echo made > made.txt; rm gone.txt`)" in back.stdout
    assert saved(project, session) == []
    listed = await paicli(project, "rewind", "--session", session)
    assert "has no turns recorded" in listed.stdout


async def test_a_file_the_user_changed_since_stops_the_rewind_unless_forced(
    project: Path,
) -> None:
    session = await two_turns(project)
    (project / "a.txt").write_text("my own edit\n")
    refused = await paicli(project, "rewind", "--session", session, "--to", "1", "--code-only")
    assert refused.code == 1
    assert (
        "1 file(s) changed since paicli last changed them; nothing was restored" in refused.stderr
    )
    assert "a.txt" in refused.stderr
    assert (project / "a.txt").read_text() == "my own edit\n"
    assert (project / "made.txt").exists()  # nothing at all was restored
    forced = await paicli(
        project, "rewind", "--session", session, "--to", "1", "--code-only", "--force"
    )
    assert forced.code == 0, forced.stderr
    assert (project / "a.txt").read_text() == "one\n"
    # --code-only keeps the conversation, and its turns stay listed
    assert [m["content"] for m in saved(project, session) if m["role"] == "user"] == [
        "first",
        "second",
    ]


async def test_rewind_elsewhere_or_of_nothing_says_so_in_one_line(
    project: Path, tmp_path: Path
) -> None:
    session = await two_turns(project)
    other = tmp_path / "other"
    other.mkdir()
    run = await paicli(other, "rewind", "--session", session, "--to", "1")
    assert run.code == 2
    assert f"rewind it there: paicli -C {project} rewind --session {session}" in run.stderr
    assert (project / "a.txt").read_text() == "three\n"
    nothing = await paicli(other, "rewind")
    assert nothing.code == 2 and "no saved conversation in this folder" in nothing.stderr
    for args, said in (
        (("--session", "../../etc/passwd"), "no saved conversation '../../etc/passwd'"),
        (("--session", session, "--to", "9"), "has no turn 9 (turns 1-2)"),
    ):
        run = await paicli(project, "rewind", *args)
        assert run.code == 2
        assert run.stderr.startswith("paicli rewind: ") and run.stderr.count("\n") == 1
        assert said in run.stderr


async def test_a_hostile_prompt_is_listed_escaped(project: Path) -> None:
    async with ScriptedLlm([{"text": "ok"}]) as llm:
        run = await paicli(
            project, "-p", "look\x1b]0;owned\x07 here", "--output-format", "json", llm=llm
        )
    assert run.code == 0, run.stderr
    session = str(json.loads(run.stdout)["session_id"])
    listed = await paicli(project, "rewind", "--session", session)
    assert r"1. look\x1b]0;owned\x07 here · no file changes" in listed.stdout
    assert "\x1b" not in listed.stdout
