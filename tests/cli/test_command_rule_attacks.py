"""Command rules against the attacks that got through them, in a real `paicli -p` run: an allow
rule for a reading command used to write or read outside the project, and a deny rule dodged
by another spelling of the same command (issue 24). The commands really run (git, a bare
remote on disk), so each test fails when the rule lets the call through."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.llm_server import Json, ScriptedLlm

pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nNOT-A-REAL-KEY-0123456789\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    done = subprocess.run(
        ["git", *args], check=False, cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with an uncommitted change, a remote with one commit, and a home
    folder with a startup file and a private key."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".bashrc").write_text("export KEEP=1\n")
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    remote, root = tmp_path / "remote.git", tmp_path / "project"
    root.mkdir()
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("committed\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "one")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    (root / "README.md").write_text("uncommitted work\n")
    git(root, "commit", "-q", "-am", "two")  # a commit the remote must never get
    (root / "README.md").write_text("uncommitted work, still\n")
    return root


def calls(*commands: str) -> list[Json]:
    return [
        {"id": f"c{index}", "name": "execute_command", "arguments": json.dumps({"command": c})}
        for index, c in enumerate(commands)
    ]


def tool_results(llm: ScriptedLlm) -> list[str]:
    return [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]


async def test_an_allow_rule_for_git_diff_never_covers_writing_or_reading_outside(
    project: Path,
) -> None:
    home = project.parent / "home"
    script: list[Json] = [
        {
            "tool_calls": calls(
                "git diff --output=README.md",
                "git diff --no-index --output=$HOME/.bashrc README.md README.md",
                "git diff --no-index ~/.ssh/id_ed25519 /dev/null",
                "git diff --stat",
            )
        },
        {"text": "done"},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "-p", "go", "--allow", "execute_command(git diff:*)", llm=llm)
    assert run.code == 0, run.stderr
    output, bashrc, key, stat = tool_results(llm)
    assert (project / "README.md").read_text() == "uncommitted work, still\n"
    assert (home / ".bashrc").read_text() == "export KEEP=1\n"
    for refused in (output, bashrc, key):
        assert "no permission rule covers this call" in refused
    assert "`--output`: it names a file to write" in output
    assert "NOT-A-REAL-KEY" not in json.dumps(llm.requests)
    assert "README.md" in stat and "was not run" not in stat  # the rule still covers reads


async def test_a_deny_rule_catches_every_spelling_of_the_command_even_with_yes(
    project: Path,
) -> None:
    git_path = shutil.which("git")
    assert git_path is not None
    spellings = (
        "git push origin main",
        "git -C . push origin main",
        "env git push origin main",
        f"{git_path} push origin main",
        "sh -c 'git push origin main'",
        "nice -n 5 timeout 30 git -c push.default=simple push origin main",
        "echo start && command git push origin main",
    )
    before = git(project.parent / "remote.git", "rev-parse", "main")
    script: list[Json] = [{"tool_calls": calls(*spellings)}, {"text": "done"}]
    async with ScriptedLlm(script) as llm:
        run = await paicli(
            project, "-p", "go", "--yes", "--deny", "execute_command(git push:*)", llm=llm
        )
    assert run.code == 0, run.stderr
    for spelling, result in zip(spellings, tool_results(llm), strict=True):
        assert "denied by --deny" in result, spelling
    assert git(project.parent / "remote.git", "rev-parse", "main") == before
