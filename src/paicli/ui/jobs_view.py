"""`/jobs`: the background jobs (MCP tool calls the servers run as tasks), and
`/jobs cancel N`. A task id is the server's text: it is shown escaped, on one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from paicli.escape import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.runtime import Runtime
    from paicli.tools.mcp.jobs import Job

__all__ = ["jobs_command"]

USAGE = "Usage: /jobs [cancel N]"


def job_line(job: Job) -> str:
    what = f"{job.server}/{job.tool}"
    return one_line(
        f"{job.number:>3}  {job.state:<10} {job.seconds:6.0f}s  {what}  task {job.task_id}", 160
    )


async def jobs_command(runtime: Runtime, console: Console, words: list[str]) -> None:
    board = runtime.mcp.jobs
    if words and words[0] == "cancel":
        if len(words) != 2 or not words[1].isdigit():
            console.print(USAGE, style="yellow")
            return
        job = await board.cancel(int(words[1]))
        if job is None:
            console.print(f"No job {words[1]}.", style="yellow")
        else:
            console.print(Text(f"Job {job.number}: {job.state}."))
        return
    if words:
        console.print(USAGE, style="yellow")
        return
    jobs = board.jobs()
    if not jobs:
        console.print("No background jobs. A tool call an MCP server runs as a task is one.")
        return
    for job in jobs:
        console.print(Text(job_line(job), "bold" if job.state == "running" else "dim"))
