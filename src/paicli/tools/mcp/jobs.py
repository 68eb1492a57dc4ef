"""Background jobs: MCP tool calls the server runs as tasks (`paicli.mcp.tasks`).

When a server answers a tool call with a task, the model's tool result says a job started
(its number and the task's id) and the turn goes on; a job of ours waits for the task (the
handle polls, a status notification wakes it), bounded by the call's maximum time, and when
it ends its result (rendered and capped like any tool result) waits here until the agent
hands it to the model at the next request (`deliver`). A job still running when the model
ends its answer is either waited for (`-p`: `wait_at_turn_end`) or left running (the REPL).
A job past its deadline is cancelled on the server (`tasks/cancel`); `/jobs cancel N`, the
turn's Ctrl+C and the end of the session cancel the same way. Nothing is left behind: each
job's waiting task ends, and the board forgets finished jobs beyond the last `KEPT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from paicli.llm.messages import Message, UserMessage
from paicli.mcp import McpError, TaskFailed, TaskTimeout
from paicli.tools.base import ToolOutcome
from paicli.tools.mcp.results import for_model

if TYPE_CHECKING:
    from paicli.mcp import CallToolResult, TaskHandle

__all__ = ["Job", "JobBoard"]

log = logging.getLogger("paicli.tools.mcp")

JobState = Literal["running", "completed", "failed", "cancelled", "timed out"]
# How long a cancel may take on the server before the job is dropped all the same.
CANCEL_SECONDS: Final = 5.0
# Finished jobs shown by /jobs, at most.
KEPT: Final = 20
Render: TypeAlias = "Callable[[CallToolResult], Awaitable[ToolOutcome]]"


@dataclass(eq=False)
class Job:
    number: int
    server: str
    tool: str
    task_id: str
    handle: TaskHandle = field(repr=False)
    started: float = field(default_factory=time.monotonic)
    state: JobState = "running"
    # The tool message the model gets (fenced like any MCP output), once the job ended.
    outcome: ToolOutcome | None = None
    delivered: bool = False
    waiter: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def message(self) -> str:
        assert self.outcome is not None
        head = (
            f"Background job {self.number} ({self.server}/{self.tool}, MCP task "
            f"{self.task_id!r:.120}) ended: {self.state}."
        )
        return f"{head}\n{for_model(self.outcome)}"


class JobBoard:
    """The session's background jobs, numbered from 1."""

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._next = 1
        self._cancels: set[asyncio.Task[None]] = set()
        #: `-p`: a turn does not end while jobs run; their results go to the model first.
        self.wait_at_turn_end = False

    def start(
        self, handle: TaskHandle, server: str, tool: str, limit: float, render: Render
    ) -> Job:
        """Watch `handle` (a task not done yet) as job N, for at most `limit` seconds."""
        assert handle.task_id is not None
        job = Job(self._next, server, tool, handle.task_id, handle)
        self._next += 1
        self._jobs[job.number] = job
        job.waiter = asyncio.get_running_loop().create_task(self._watch(job, limit, render))
        self._forget_old()
        return job

    async def _watch(self, job: Job, limit: float, render: Render) -> None:
        try:
            result = await job.handle.result(timeout=limit)
            job.outcome = await render(result)
            job.state = "completed"
        except TaskTimeout:
            await self._cancel_on_server(job)
            job.state = "timed out"
            job.outcome = ToolOutcome(
                f"Error: the job did not finish within {limit:g}s; it was cancelled.", True
            )
        except TaskFailed as exc:
            job.state = "cancelled" if exc.status == "cancelled" else "failed"
            job.outcome = ToolOutcome(f"Error: {exc}", True)
        except McpError as exc:
            job.state = "failed"
            job.outcome = ToolOutcome(f"Error: MCP server {job.server!r}: {exc}", True)
        except asyncio.CancelledError:
            job.state = "cancelled"
            job.outcome = ToolOutcome("Error: the job was cancelled by the user.", True)
            await self._cancel_on_server(job)
        finally:
            job.handle.close()

    async def _cancel_on_server(self, job: Job) -> None:
        try:
            async with asyncio.timeout(CANCEL_SECONDS):
                await job.handle.cancel()
        except (McpError, TimeoutError) as exc:
            log.warning("job %d: tasks/cancel failed: %s", job.number, exc)

    def jobs(self) -> list[Job]:
        return sorted(self._jobs.values(), key=lambda job: job.number)

    def running(self) -> list[Job]:
        return [job for job in self.jobs() if job.state == "running"]

    def mark(self) -> int:
        """The number the next job will get (see `cancel_since`)."""
        return self._next

    async def cancel(self, number: int) -> Job | None:
        """Cancel job `number` (a running one); the job, or None when there is none."""
        job = self._jobs.get(number)
        if job is None or job.waiter is None:
            return None
        if job.state == "running":
            job.waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job.waiter
        return job

    def cancel_since(self, mark: int) -> None:
        """Cancel, in the background, the running jobs numbered `mark` and up (a turn that
        Ctrl+C interrupted started them)."""
        for job in self.running():
            if job.number >= mark:
                task = asyncio.get_running_loop().create_task(self._cancel_quietly(job.number))
                self._cancels.add(task)
                task.add_done_callback(self._cancels.discard)

    async def _cancel_quietly(self, number: int) -> None:
        await self.cancel(number)

    def deliver(self, messages: list[Message]) -> int:
        """Append each ended job's result not yet given to the model; how many."""
        count = 0
        for job in self.jobs():
            if job.state != "running" and not job.delivered and job.outcome is not None:
                job.delivered = True
                messages.append(UserMessage(role="user", content=job.message()))
                count += 1
        return count

    async def settle(self, messages: list[Message]) -> bool:
        """At the end of the model's answer: wait for running jobs when `wait_at_turn_end`,
        then deliver what ended; True when the model has results to read (the turn goes on)."""
        if self.wait_at_turn_end:
            waiters = [job.waiter for job in self.running() if job.waiter is not None]
            if waiters:
                await asyncio.wait(waiters)
        return self.deliver(messages) > 0

    async def aclose(self) -> None:
        """Cancel every running job (the session ends) and wait for the cancels."""
        for job in self.running():
            await self.cancel(job.number)
        if self._cancels:
            await asyncio.wait(list(self._cancels))

    def _forget_old(self) -> None:
        ended = [job for job in self.jobs() if job.state != "running" and job.delivered]
        for job in ended[:-KEPT]:
            del self._jobs[job.number]
