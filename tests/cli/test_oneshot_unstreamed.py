"""`paicli -p` against an endpoint that ignores streaming (issue 27): the answer it sent as
one JSON completion is printed; one that holds no answer fails with one line, not exit 0
and silence. A real process and the scripted model on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.llm_server import ScriptedLlm

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real


async def test_the_unstreamed_answer_is_printed(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    async with ScriptedLlm([{"unstreamed": True, "text": "Four."}]) as llm:
        run = await paicli(tmp_path / "project", "-p", "2+2?", llm=llm)
    assert (run.code, run.stdout) == (0, "Four.\n"), run.stderr
    assert llm.requests[0]["stream"] is True


async def test_an_answer_with_no_completion_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    async with ScriptedLlm([{"unstreamed": {"object": "chat.completion"}}]) as llm:
        run = await paicli(tmp_path / "project", "-p", "2+2?", llm=llm)
    assert run.code != 0
    assert run.stdout == ""
    assert "ignored streaming and sent JSON without a completion" in run.stderr
    assert len(run.stderr.splitlines()) == 1, run.stderr
