"""The REPL run inside the test process, for its logic: keys go in through prompt_toolkit's
pipe input, and everything drawn (the prompt through a VT100 output, the console, stdout and
stderr) lands on one `Screen` that the test reads as `tests/ui/terminal.py` reads a pty.

No pseudo-terminal, process or socket: the runtime is the one the REPL uses, opened with
the test servers in memory (tests/memory_connect.py) and the scripted model in memory
(tests/llm_memory.py). What only a real terminal shows (raw mode, signals, the import
order of a start) stays in the pty tests of test_repl.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application, get_app_session
from prompt_toolkit.application.current import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from paicli.permissions.approval import Mode
from paicli.runtime import Runtime
from paicli.ui.console import SafeConsole
from paicli.ui.repl import Repl
from tests.llm_memory import MemoryLlm
from tests.memory_connect import memory_connector
from tests.runtimes import runtime_for
from tests.ui.terminal import COLUMNS, KEYS, ROWS, strip_ansi

__all__ = ["ReplInProcess", "Screen", "repl_in_process"]

EXPECT_TIMEOUT = 10.0  # nothing here waits on a process: generous all the same


class Screen(io.StringIO):
    """Everything written to the screen; `expect` waits for text in what came after its last
    match, with escape sequences removed."""

    def __init__(self) -> None:
        super().__init__()
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._arrived = asyncio.Event()
        self._seen = 0

    def write(self, text: str) -> int:
        written = super().write(text)
        if threading.get_ident() == self._loop_thread:
            self._arrived.set()
        else:
            self._loop.call_soon_threadsafe(self._arrived.set)
        return written

    @property
    def text(self) -> str:
        return strip_ansi(self.getvalue())

    async def next_write(self) -> None:
        self._arrived.clear()
        await self._arrived.wait()

    async def expect(self, pattern: str | re.Pattern[str]) -> re.Match[str]:
        wanted = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        try:
            async with asyncio.timeout(EXPECT_TIMEOUT):
                while True:
                    self._arrived.clear()
                    found = wanted.search(self.text, self._seen)
                    if found is not None:
                        self._seen = found.end()
                        return found
                    await self._arrived.wait()
        except TimeoutError as exc:
            raise AssertionError(
                f"{wanted.pattern!r} did not appear; new output:\n{self.text[self._seen :]}"
            ) from exc


class ReplInProcess:
    """A running in-process REPL: type with `send`/`send_keys`/`line`, read `screen`."""

    def __init__(
        self,
        screen: Screen,
        keys: PipeInput,
        task: asyncio.Task[int],
        llm: MemoryLlm | None = None,
    ) -> None:
        self.screen = screen
        self._keys = keys
        self.task = task
        self.llm = llm  # the scripted model (its `requests`), when there is one
        self.runtime: Runtime | None = None  # the REPL's runtime (what it holds: jobs, say)

    def send(self, text: str) -> None:
        self._keys.send_text(text)

    def send_keys(self, *keys: str) -> None:
        """Named keys: ctrl-c, ctrl-d, tab, shift-tab, enter (as tests/ui/terminal.py)."""
        self.send("".join(KEYS[key] for key in keys))

    def line(self, text: str) -> None:
        self.send(text + KEYS["enter"])

    def paste_line(self, text: str) -> None:
        """`text` pasted (a bracketed paste: one insertion, as a terminal pastes, where typing
        it would cost a key's work per character), then Enter."""
        self.send(f"\x1b[200~{text}\x1b[201~" + KEYS["enter"])

    async def expect(self, pattern: str | re.Pattern[str]) -> re.Match[str]:
        return await self.screen.expect(pattern)

    async def line_reads(self, text: str) -> None:
        """Wait until the prompt is up and its input line reads `text` (a completion is
        inserted by a task of its own, after the key that asked for it). Once the prompt is
        up its history is loaded too: the first frame starts the loading, which reads the
        file at once."""
        app = await self._prompt()
        drawn = asyncio.Event()

        def note(_: object) -> None:
            drawn.set()

        app.after_render += note
        try:
            async with asyncio.timeout(EXPECT_TIMEOUT):
                while app.current_buffer.text != text:  # each key is followed by a frame
                    drawn.clear()
                    await drawn.wait()
        finally:
            app.after_render -= note

    async def exit_code(self) -> int:
        async with asyncio.timeout(EXPECT_TIMEOUT):
            return await self.task

    async def _prompt(self) -> Application[Any]:
        """The prompt's application, once it runs and has drawn its first frame."""
        async with asyncio.timeout(EXPECT_TIMEOUT):
            while (app := get_app_session().app) is None or not app.is_running:
                await self.screen.next_write()  # (a prompt draws its first frame at once)
        return app


@asynccontextmanager
async def repl_in_process(
    project: Path,
    home: Path,
    *,
    servers: Mapping[str, Mapping[str, Any]] | None = None,
    script: Sequence[Mapping[str, Any]] | None = None,
    mode: Mode | None = None,
) -> AsyncIterator[ReplInProcess]:
    """`paicli` (the REPL) in `project`, its PAICLI_HOME under `home`: `servers` as the
    project's `.paicli/mcp.json` (trusted), `script` the model's replies (None: no model)."""
    if servers is not None:
        (project / ".paicli").mkdir(exist_ok=True)
        (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    environ = {"HOME": str(home), "PAICLI_HOME": str(home / ".paicli")}
    screen = Screen()
    output = Vt100_Output(
        screen, lambda: Size(rows=ROWS, columns=COLUMNS), term="xterm", enable_cpr=False
    )
    saved = sys.stdin, sys.stdout, sys.stderr
    async with AsyncExitStack() as stack:
        llm = None if script is None else await stack.enter_async_context(MemoryLlm(script))
        keys = stack.enter_context(create_pipe_input())
        stack.enter_context(create_app_session(input=keys, output=output))
        # A terminal-less stdin (the REPL leaves its modes alone) and the screen for the rest.
        # (Closed by the exit stack; opening /dev/null does not block.)
        sys.stdin = stack.enter_context(open(os.devnull))  # noqa: SIM115, ASYNC230
        sys.stdout = sys.stderr = screen
        try:
            repl = Repl(SafeConsole(width=COLUMNS), interactive=True)
            flags: dict[str, str | None] = {"model": None, "base_url": None, "provider": None}
            if llm is not None:
                flags.update(model="scripted", base_url=llm.base_url)
                environ["PAICLI_API_KEY"] = "scripted-key"
            runtime = await stack.enter_async_context(
                runtime_for(
                    root=project,
                    flags=flags,
                    approver=repl.approve,
                    hold_servers=True,
                    mode=mode,
                    trust_project=True,
                    environ=environ,
                    connector=memory_connector,
                    on_server_change=repl.server_changed,
                    http_client=None if llm is None else llm.http_client(),
                    elicit=repl.elicit,
                    approve_sampling=repl.approve_sampling,
                    review_sample=repl.review_sample,
                )
            )
            task = asyncio.ensure_future(repl.run(runtime))
            try:
                running = ReplInProcess(screen, keys, task, llm)
                running.runtime = runtime
                yield running
            finally:
                if not task.done():
                    task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
