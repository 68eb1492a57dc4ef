"""`paicli --add-dir DIR -p ...` end to end (issue 27): a command in the OS sandbox may
write the added folder (and without the flag may not), the file tools reach it, and a
folder that does not exist is one line and exit 2. A real process, the scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.mcp import Sandbox, check_sandbox
from tests.cli.test_oneshot import paicli
from tests.llm_server import ScriptedLlm

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real


def call(name: str, **arguments: str) -> dict[str, object]:
    return {"tool_calls": [{"id": "c1", "name": name, "arguments": json.dumps(arguments)}]}


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, added = tmp_path / "project", tmp_path / "added"
    project.mkdir()
    added.mkdir()
    return project, added


async def test_a_sandboxed_command_writes_the_added_folder_only_with_the_flag(
    places: tuple[Path, Path],
) -> None:
    project, added = places
    if check_sandbox().mechanism(Sandbox.for_project(project)) is None:
        pytest.skip("no OS sandbox here")
    target = added / "out.txt"
    script: list[dict[str, object]] = [
        call("execute_command", command=f"echo hi > {target}"),
        {"text": "Done."},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "--yes", "-p", "write it", llm=llm)
    assert run.code == 0, run.stderr
    assert not target.exists()  # the sandbox kept the folder read-only
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "--add-dir", str(added), "--yes", "-p", "write it", llm=llm)
    assert run.code == 0, run.stderr
    assert target.read_text() == "hi\n"


async def test_the_file_tools_reach_an_added_folder(places: tuple[Path, Path]) -> None:
    project, added = places
    (added / "notes.txt").write_text("pelican\n")
    script: list[dict[str, object]] = [
        call("read_file", path=str(added / "notes.txt")),
        {"text": "Read it."},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "--add-dir", str(added), "-p", "read it", llm=llm)
    assert run.code == 0, run.stderr
    assert "pelican" in llm.requests[1]["messages"][-1]["content"]
    system = llm.requests[0]["messages"][0]["content"]
    assert f"these folders to read and change, besides the project: {added}" in system


async def test_a_missing_folder_is_one_line_and_exit_2(places: tuple[Path, Path]) -> None:
    project, _ = places
    run = await paicli(project, "--add-dir", "nowhere", "-p", "hi")
    assert run.code == 2
    assert run.stderr == "paicli: --add-dir nowhere: no such folder\n"
