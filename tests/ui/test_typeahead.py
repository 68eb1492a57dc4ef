"""Keys typed before a question appears are not its answer (issue 27): a line typed while
paicli starts must not decline the project's server for good. A real terminal: the keys wait
in the pty's input queue, as they do when a user types ahead."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from paicli._version import __version__
from paicli.ui.prompt_line import PROMPT
from tests.conftest import SERVER_PROGRAMS

from .terminal import Terminal

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "PAICLI_HOME": str(tmp_path / "home" / ".paicli"),
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


async def with_a_project_server(tmp_path: Path) -> Terminal:
    """`paicli` started in a project whose server it asks about."""
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    server = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"fault": server}}))
    return await Terminal.spawn(
        [sys.executable, "-m", "paicli.cli"], cwd=project, env=environment(tmp_path)
    )


async def test_a_line_typed_ahead_does_not_answer_the_project_server_question(
    tmp_path: Path,
) -> None:
    term = await with_a_project_server(tmp_path)
    try:
        term.line("summarise the repo")  # typed before paicli has drawn anything
        await term.expect("Allow it? [y/N]")
        term.line("y")
        await term.expect("✓ fault")
        await term.expect(PROMPT.strip())
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    finally:
        await term.aclose()
    trust = json.loads((tmp_path / "home" / ".paicli" / "trusted-servers.json").read_text())
    assert not trust["declined"]


async def test_a_line_typed_after_the_question_is_answered_waits_for_the_prompt(
    tmp_path: Path,
) -> None:
    """Typed while paicli goes on starting (the banner shows, the prompt is not up yet): it
    is neither echoed nor turned into a new line of the prompt (Ctrl+J); it is sent."""
    term = await with_a_project_server(tmp_path)
    try:
        await term.expect("Allow it? [y/N]")
        term.line("y")
        await term.expect(f"paicli {__version__}")  # the banner: the prompt comes after it
        term.line("/jobs")
        await term.expect(re.compile(re.escape(f"{PROMPT}/jobs") + r"\r*\n"))
        await term.expect("No background jobs.")
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    finally:
        await term.aclose()
