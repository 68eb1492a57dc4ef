"""The model client, loaded when it is first needed rather than when paicli starts.

Loading the openai SDK is most of a start's time (about 450 ms), and the REPL's prompt or a
one-shot's config checks need none of it. `DeferredClient` checks the settings at once (a
missing model is still an error at startup), then builds the real client in a worker thread
on the first request, or earlier when `load()` is called (the REPL calls it once its prompt
is drawn, so the SDK has loaded by the time the user has typed a line).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Protocol

from paicli.import_turns import importing
from paicli.llm.errors import LlmError
from paicli.llm.messages import Message, ToolDefinition

__all__ = ["DeferredClient", "StreamingClient"]


class StreamingClient(Protocol):
    """What `paicli.llm.client.LlmClient` offers (and a metered wrapper of it)."""

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncGenerator[object, None]: ...

    async def aclose(self) -> None: ...


class DeferredClient:
    """A model client whose real one (`build()`, run in a worker thread) is made on first
    use; `aclose()` when done."""

    def __init__(self, build: Callable[[], StreamingClient]) -> None:
        self._build = build
        self._client: StreamingClient | None = None
        # The build under way, owned here: `aclose()` waits for it and closes its client.
        self._loading: asyncio.Task[StreamingClient] | None = None

    @property
    def loaded(self) -> bool:
        return self._client is not None

    def load(self) -> None:
        """Start building the client in the background, if not started yet."""
        if self._client is None and self._loading is None:
            self._loading = asyncio.get_running_loop().create_task(
                self._built(), name="model client"
            )

    async def _built(self) -> StreamingClient:
        try:
            try:
                return await asyncio.to_thread(importing(self._build))
            except (RuntimeError, ImportError):
                # Python 3.11's import locks can fail an import made while the main thread
                # imports too (gh-91351, "release unlocked lock"; fixed in 3.12): the modules
                # half-imported then are there on a second try.
                return await asyncio.to_thread(importing(self._build))
        except LlmError:
            raise
        except Exception as exc:  # the SDK refusing the settings: a turn's error, no crash
            raise LlmError(f"the model client could not be set up: {exc}") from exc

    async def client(self) -> StreamingClient:
        """The real client, built now if need be (raises `LlmError` when it cannot be)."""
        if self._client is None:
            self.load()
            assert self._loading is not None
            # Shielded: a cancelled turn must not cancel a build the next turn will need.
            client = await asyncio.shield(self._loading)
            self._client = client
        return self._client

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncGenerator[object, None]:
        client = await self.client()
        async with contextlib.aclosing(client.stream(messages, tools)) as events:
            async for event in events:
                yield event

    async def aclose(self) -> None:
        loading, self._loading = self._loading, None
        if loading is not None and self._client is None:
            with contextlib.suppress(Exception):
                self._client = await loading  # a thread cannot be stopped: let it finish
        if self._client is not None:
            await self._client.aclose()
