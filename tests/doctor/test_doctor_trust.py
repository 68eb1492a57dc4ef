"""The doctor's own fix for an unapproved project server, `--trust-project`, is accepted
wherever a user puts it: after the server names, and before `mcp` (issue 27)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import zygote_process
from tests.doctor.test_doctor import BROKEN, findings, paicli

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    server = {"command": sys.executable, "args": [str(BROKEN / "healthy.py")]}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"repo": server}}))
    return project


def test_the_flag_the_finding_names_is_accepted_after_the_server_name(project: Path) -> None:
    home = project.parent / "home"
    refused = paicli("--json", "repo", cwd=project, home=home)
    assert "pass --trust-project" in findings(json.loads(refused.stdout))["not-approved"]["message"]
    done = paicli("repo", "--trust-project", "--json", "--slow", "30", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["servers"][0]["healthy"] is True


def test_the_flag_given_before_the_command_is_kept(project: Path) -> None:
    done = zygote_process.run(
        [sys.executable, "-m", "paicli.cli", "--trust-project", "mcp", "doctor", "--json"],
        cwd=project,
        env={**os.environ, "PAICLI_HOME": str(project.parent / "home")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    report = json.loads(done.stdout)
    assert "not-approved" not in findings(report), done.stdout
