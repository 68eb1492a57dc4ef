"""Two edits of one mcp.json at once both land: `paicli mcp add` (and remove) change the file
under a lock on its folder, so a script adding servers in parallel loses none. Real: the
edit runs in its own process while this test holds the lock, as another paicli would."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import zygote_process
from tests.processes import until

pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks"),
]


def waits_for_a_lock(pid: int) -> bool:
    """Whether process `pid` is blocked waiting for a file lock (a `->` line of /proc/locks)."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and str(pid) in fields:
            return True
    return False


@contextmanager
def holding(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def servers(path: Path) -> list[str]:
    return sorted(json.loads(path.read_text())["mcpServers"])


@pytest.mark.parametrize("command", [["add", "new", "--", "echo"], ["remove", "old"]])
def test_an_edit_waits_for_another_and_loses_nothing(tmp_path: Path, command: list[str]) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(mode=0o700)
    project.mkdir()
    config = home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"command": "echo"}}}))
    with holding(home):
        editing = zygote_process.Popen(
            [sys.executable, "-m", "paicli.cli", "mcp", *command],
            cwd=project,
            env={**os.environ, "PAICLI_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        asyncio.run(until(lambda: waits_for_a_lock(editing.pid) or editing.poll() is not None))
        went_ahead = editing.poll() is not None
        # Another paicli's edit, made while it holds the lock.
        document = json.loads(config.read_text())
        document["mcpServers"]["other"] = {"command": "echo"}
        config.write_text(json.dumps(document))
    _, stderr = editing.communicate(timeout=30)
    assert not went_ahead, "the edit went ahead while another held the lock"
    assert editing.returncode == 0, stderr
    expected = ["new", "old", "other"] if command[0] == "add" else ["other"]
    assert servers(config) == expected
