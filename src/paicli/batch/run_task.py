"""One task run inside a worker: what `paicli -p PROMPT --output-format json` does (the
settings loaded from the folder, flags and config files, the full runtime with its rules,
approvals, audit and hooks; the answer; the session saved), in the task's own copy of its
folder, with the servers lent by the worker's `WarmServers`. The run's `result` message,
its diff and the task make the result line.

Differences from `-p`, by design: the prompt goes to the model as written (no `!` lines,
`@file` mentions or /commands: a task file is data), and nothing is printed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from paicli.batch.defaults import Defaults
from paicli.batch.results import failure, success_of, with_task
from paicli.batch.tasks import Task
from paicli.batch.warm import WarmServers
from paicli.batch.workspace import Workspace, WorkspaceError, diff, prepare, remove, scratch_of
from paicli.headless.facts import run_facts
from paicli.headless.transcript import Message, Transcript
from paicli.permissions.request import Mode
from paicli.run_settings import RunIO, StartOptions, load_run_settings
from paicli.runtime import Runtime, open_runtime
from paicli.servers.config import read_servers_file

__all__ = ["run_task"]


async def run_task(task: Task, defaults: Defaults, scratch: Path, warm: WarmServers) -> Message:
    """The result line of `task`, run in its own copy under `scratch` (removed after)."""
    try:
        workspace = await asyncio.to_thread(prepare, task, scratch)
    except (WorkspaceError, OSError) as exc:
        await asyncio.to_thread(remove, task, scratch)
        return failure(task, str(exc))
    try:
        options, problem = _options(task, defaults, scratch)
        if problem is not None:
            return failure(task, problem)
        return await _run(task, workspace, options, warm, _servers_file(task, scratch))
    finally:
        await asyncio.to_thread(remove, task, scratch)


async def _run(
    task: Task, workspace: Workspace, options: StartOptions, warm: WarmServers, own: Path
) -> Message:
    settings = await asyncio.to_thread(load_run_settings, workspace.folder, options)
    async with open_runtime(settings, RunIO(), connector=warm) as runtime:
        if runtime.agent is None:
            return failure(task, f"paicli: {runtime.settings.why_not_configured()}")
        transcript = Transcript(runtime.conversation_id())
        await _servers_ready(runtime)
        servers, warnings = _notes(runtime, transcript.init(run_facts(runtime)), own)
        runtime.load_model()
        runtime.mcp.jobs.wait_at_turn_end = True  # the answer waits for its background jobs
        ended = await runtime.agent.run(task.prompt, lambda event: _ignore(transcript.on(event)))
        await asyncio.to_thread(runtime.save_session)
        result = transcript.result(ended, _problems(runtime.problems, ended.error))
        # The secrets the run knows (its key, values its tools met) stay out of the answer
        # and the errors, as on `-p`'s stdout; the diff is the folder's, as it is.
        result = runtime.redactor.redact_known_in(result)
    changes = await asyncio.to_thread(diff, workspace)
    line = with_task(task, success_of(result), result, changes)
    return {**line, "mcp_servers": servers, "warnings": warnings}


def _notes(runtime: Runtime, init: Message, own: Path) -> tuple[list[Message], list[str]]:
    """Each MCP server of the run with its status as `init` says it, and what `-p` would
    have said on stderr: the config's problems, each failed server's error (a task with a
    broken `mcpServers` entry ran without it, and nothing said so). The task's own servers
    file is named as the task names it."""
    failed = [s["name"] for s in init["mcp_servers"] if s["status"] == "failed"]
    said = [*runtime.problems]
    for name in failed:
        said.append(f"MCP server {name!r} failed: {runtime.manager.get(name).failure()}")
    redact = runtime.redactor.redact_known
    return list(init["mcp_servers"]), [
        redact(line.replace(str(own), "mcpServers")) for line in said
    ]


def _servers_file(task: Task, scratch: Path) -> Path:
    """Where a task's `mcpServers` are written for the run to read as a config file."""
    return scratch_of(scratch, task) / "mcp.json"


async def _servers_ready(runtime: Runtime) -> None:
    """The servers worth waiting for, waited for within the run's start budget (as `-p`)."""
    starting = runtime.manager.starting(without_catalogue=True)
    if starting:
        runtime.load_model()
        await runtime.manager.wait_ready(starting, timeout=runtime.run.calls.start_budget)


def _ignore(messages: object) -> None:
    """The run's messages are not printed: only its `result` is kept."""


def _problems(problems: Sequence[str], error: str | None) -> list[str]:
    return [*([error] if error else []), *problems]


def _options(task: Task, defaults: Defaults, scratch: Path) -> tuple[StartOptions, str | None]:
    """The run's options: the command line's, then the task's own fields."""
    files = tuple(Path(name) for name in defaults.mcp_config)
    if task.servers:
        own = _servers_file(task, scratch)
        own.write_text(json.dumps({"mcpServers": dict(task.servers)}), encoding="utf-8")
        problem = read_servers_file(own)
        if problem is not None:
            return StartOptions(), problem.replace(str(own), "mcpServers", 1)
        files += (own,)
    flags = dict(defaults.flags)
    if task.model is not None:
        flags["model"] = task.model
    mode = task.permission_mode or defaults.mode
    options = StartOptions(
        flags=flags,
        allow=(*defaults.allow, *task.allow),
        deny=(*defaults.deny, *task.deny),
        mode=Mode(mode) if mode is not None else None,
        max_steps=task.max_turns or defaults.max_steps,
        mcp_config=files,
        strict_mcp_config=defaults.strict_mcp_config or bool(task.servers),
        sandbox=defaults.sandbox,  # type: ignore[arg-type]  # checked by the command line
    )
    return options, None
