"""Message tracing for a paicli run: `--trace FILE` / `PAICLI_TRACE`, and per server
`"trace": true` in `mcp.json`.

Both record with the library's `TraceRecorder`, attached through `paicli.mcp.instrument`, so
every session of the run is covered: the agent's, `paicli mcp ...`'s and the LangChain
bridge's. Everything written passes one redactor for the process (`TraceRedaction`, the
audit log's nets, tried quickly first), which learns the run's secrets (server env and header
values, the model's API key, secret-named variables) once the config is read. Per-server
traces go to `$PAICLI_HOME/traces/` (0700) in files named by time and process id, never by
anything a config says; every trace file is 0600. With no tracing asked for, nothing here is
imported and sessions are not wrapped.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from paicli.home import PaicliHome
from paicli.mcp import TraceRecorder, instrument
from paicli.private_files import make_private_dir
from paicli.redact import Redactor

__all__ = ["TraceRedaction", "configured", "recording"]


class TraceRedaction:
    """The redaction every trace of this process shares; it learns secrets as configs load."""

    def __init__(self) -> None:
        self.redactor = Redactor()

    def learn(self, secrets: Iterable[str]) -> None:
        self.redactor = self.redactor.with_secrets(secrets)

    def __call__(self, value: object) -> object:
        return self.redactor.redact_quickly(value)


_redaction = TraceRedaction()


@contextmanager
def recording(path: Path) -> Iterator[TraceRecorder]:
    """Record every session of this process to `path` (appended to, 0600) until exit.
    Raises OSError if the file cannot be opened."""
    recorder = TraceRecorder(path, redact=_redaction)
    try:
        with instrument(recorder):
            yield recorder
    finally:
        recorder.close()


@asynccontextmanager
async def configured(
    traced: Iterable[str], secrets: Iterable[str], home: PaicliHome
) -> AsyncIterator[Path | None]:
    """Teach the traces the config's `secrets`, and record the servers named in `traced`
    (those with `"trace": true`) to a new file under `home.traces_dir`, which is yielded
    (None when no server asks for a trace). Asynchronous only to sit in one `async with`
    beside the server manager, which it must precede."""
    _redaction.learn(secrets)
    names = sorted(set(traced))
    if not names:
        yield None
        return
    make_private_dir(home.traces_dir)
    os.chmod(home.traces_dir, 0o700)  # made earlier by hand, perhaps: traces stay private
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = home.traces_dir / f"{stamp}-{os.getpid()}.jsonl"
    recorder = TraceRecorder(path, redact=_redaction, servers=names)
    try:
        with instrument(recorder):
            yield path
    finally:
        recorder.close()
