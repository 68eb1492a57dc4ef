"""Every way a session ends writes its end record in the audit log, with real signals to a
real paicli: Ctrl+D and /exit end it ("exit"); Ctrl+C twice, SIGTERM, a closed terminal
(SIGHUP) and Ctrl+C during `-p` interrupt it ("interrupted", and the signal when one did)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

import pytest

from paicli._version import __version__
from tests import zygote_process
from tests.llm_server import ScriptedLlm
from tests.ui.terminal import Terminal
from tests.ui.test_repl import MARK, Places, paicli
from tests.ui.test_repl import places as places  # noqa: PLC0414 - the fixture

pytestmark = pytest.mark.real


def ends(places: Places) -> list[dict[str, object]]:
    """The session start and end records, in order, as (event, reason, signal)."""
    records = []
    for day in sorted((places.paicli_home / "audit").glob("*.jsonl")):
        records += [json.loads(line) for line in day.read_text().splitlines()]
    return [r for r in records if str(r.get("event", "")).startswith("session_")]


async def opened(term: Terminal) -> None:
    """Wait until the run is open (the quick start draws its prompt before that)."""
    await term.expect(f"paicli {__version__}")
    await term.expect(MARK)


def last_end(places: Places) -> tuple[object, object]:
    record = ends(places)[-1]
    assert record["event"] == "session_end"
    return record["reason"], record.get("signal")


async def test_leaving_the_repl_by_any_way_writes_the_session_end(places: Places) -> None:
    async with paicli(places) as term:  # Ctrl+C twice
        await opened(term)
        term.send_keys("ctrl-c")
        await term.expect("Press Ctrl+C again to exit.")
        await term.expect(MARK)
        term.send_keys("ctrl-c")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    assert last_end(places) == ("interrupted", None)
    async with paicli(places) as term:  # Ctrl+D
        await opened(term)
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    assert last_end(places) == ("exit", None)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        async with paicli(places) as term:
            await opened(term)
            term.process.send_signal(sig)
            await term.exit_code()
        assert last_end(places) == ("interrupted", sig.name)
    events = [r["event"] for r in ends(places)]
    assert events == ["session_start", "session_end"] * 4
    assert len({r["session"] for r in ends(places)}) == 4


async def test_ctrl_c_during_a_one_shot_answer_writes_the_session_end(places: Places) -> None:
    async with ScriptedLlm([{"text": "Half an answer", "hang": True}]) as llm:
        process = await zygote_process.create_subprocess_exec(
            sys.executable,
            *("-m", "paicli.cli", "--base-url", llm.base_url, "--model", "scripted"),
            *("-p", "hello"),
            cwd=places.project,
            env={
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(places.home),
                "PAICLI_HOME": str(places.paicli_home),
                "PAICLI_API_KEY": "sk-test-SESSION-END-0123456789",
                **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
            },
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(30):
            await llm.wait_for_requests(1)  # the answer has begun and hangs
            process.send_signal(signal.SIGINT)
            _, err = await process.communicate()
    assert process.returncode == 130, err
    assert last_end(places)[0] == "interrupted"
