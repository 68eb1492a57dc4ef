"""paicli.mcp with message tracing on, as `paicli --trace FILE` runs it: every message
recorded to a file through the audit redactor (bench/run.py reports its cost against plain
paicli in the same run)."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from paicli.observe.tracing import recording

from . import paicli_client
from .paicli_client import PaicliSession


@asynccontextmanager
async def connect(command: str, args: Sequence[str]) -> AsyncIterator[PaicliSession]:
    with tempfile.TemporaryDirectory() as folder, recording(Path(folder) / "trace.jsonl"):
        async with paicli_client.connect(command, args) as session:
            yield session


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[PaicliSession]:
    with tempfile.TemporaryDirectory() as folder, recording(Path(folder) / "trace.jsonl"):
        async with paicli_client.connect_http(url) as session:
            yield session
