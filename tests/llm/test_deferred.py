"""The model client loaded on first use: one build however many ask for it, a build that
fails is a model error for the turn (never a crash), and closing waits for a build under way."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncGenerator, Sequence

import pytest

from paicli.llm.deferred import DeferredClient, StreamingClient
from paicli.llm.errors import LlmError
from paicli.llm.messages import Message, ToolDefinition


class Echo:
    """A streaming client that yields the number of messages it was given."""

    def __init__(self) -> None:
        self.closed = False

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncGenerator[object, None]:
        yield len(messages)

    async def aclose(self) -> None:
        self.closed = True


class Builds:
    def __init__(self, fail: Exception | None = None) -> None:
        self.made: list[Echo] = []
        self.fail = fail

    def __call__(self) -> StreamingClient:
        if self.fail is not None:
            raise self.fail
        self.made.append(Echo())
        return self.made[-1]


async def events(client: DeferredClient) -> list[object]:
    return [e async for e in client.stream([{"role": "user", "content": "hi"}], [])]


async def test_nothing_is_built_until_a_request_or_load() -> None:
    builds = Builds()
    client = DeferredClient(builds)
    assert not client.loaded
    await client.aclose()
    assert builds.made == []


async def test_concurrent_requests_after_load_share_one_build() -> None:
    builds = Builds()
    client = DeferredClient(builds)
    async with asyncio.timeout(30):
        client.load()
        client.load()
        both = await asyncio.gather(events(client), events(client))
        assert list(both) == [[1], [1]]
        await client.aclose()
    assert len(builds.made) == 1
    assert builds.made[0].closed


async def test_a_build_the_sdk_refuses_is_a_model_error_for_the_turn() -> None:
    client = DeferredClient(Builds(ValueError("Invalid port: ':1'")))
    async with asyncio.timeout(30):
        with pytest.raises(LlmError, match="could not be set up: Invalid port"):
            await events(client)
        await client.aclose()


class FailsOnce(Builds):
    """A build whose first import fails as Python 3.11's import locks can (gh-91351)."""

    def __call__(self) -> StreamingClient:
        fail, self.fail = self.fail, None
        if fail is not None:
            raise fail
        return super().__call__()


async def test_an_import_race_in_the_build_is_tried_once_more() -> None:
    builds = FailsOnce(RuntimeError("release unlocked lock"))
    client = DeferredClient(builds)
    async with asyncio.timeout(30):
        assert await events(client) == [1]
        await client.aclose()
    assert len(builds.made) == 1


async def test_a_build_that_fails_twice_is_a_model_error() -> None:
    client = DeferredClient(Builds(RuntimeError("release unlocked lock")))
    async with asyncio.timeout(30):
        with pytest.raises(LlmError, match="could not be set up: release unlocked lock"):
            await events(client)
        await client.aclose()


async def test_closing_waits_for_a_build_under_way_and_closes_what_it_made() -> None:
    builds = Builds()
    client = DeferredClient(builds)
    async with asyncio.timeout(30):
        client.load()
        await client.aclose()
    assert len(builds.made) == 1
    assert builds.made[0].closed


OPEN_RUNTIME = """
import asyncio, sys, tempfile
from pathlib import Path
from tests.runtimes import runtime_for

async def main():
    with tempfile.TemporaryDirectory() as home:
        env = {"PAICLI_HOME": home, "HOME": home, "PAICLI_API_KEY": "sk-dummy"}
        flags = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
        async with runtime_for(
            root=Path(home), flags=flags, approver=None, environ=env, hold_servers=True
        ) as runtime:
            assert runtime.agent is not None
            assert "openai" not in sys.modules, "openai loaded with the runtime"
            await runtime.agent.llm.client()
            assert "openai" in sys.modules, "the first request's client did not load it"

asyncio.run(main())
"""


@pytest.mark.real
def test_opening_a_runtime_with_a_model_does_not_load_the_openai_sdk() -> None:
    subprocess.run([sys.executable, "-c", OPEN_RUNTIME], check=True, timeout=60)
