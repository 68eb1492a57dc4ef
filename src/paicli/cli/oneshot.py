"""`paicli -p PROMPT`: answer once and exit, for scripts and pipelines.

Never prompts: tools that would ask run only when `--allow PATTERN` or `--yes` says so, or
the MCP tool `--permission-prompt-tool` names decides they may, and anything else is denied
with a message the model and the user can read. The answer goes to stdout (text, or Claude
Code's headless messages: `json`, `stream-json`, see `paicli.headless`); everything else
goes to stderr. Every run is saved as a conversation (`-c`, `--resume ID` carry it on;
`--no-session-persistence` does not save it); `--input-format stream-json` runs one turn per
stdin line (`stream_input`).

Exit codes: 0 answered; 1 the model endpoint failed; 2 usage or setup problem (no model
configured, empty prompt); 3 the step budget ran out; 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import stat
import sys
from pathlib import Path

from paicli.cli.errors import UsageError
from paicli.cli.prompt_headless import prepare_headless
from paicli.cli.stream_input import stream_turns
from paicli.headless.facts import run_facts
from paicli.headless.prompt_tool import PromptTool, PromptToolError
from paicli.llm.messages import ImagePart
from paicli.permissions.approval import YOLO_WARNING, Mode
from paicli.run_settings import RunIO, load_run_settings, start_options
from paicli.runtime import Runtime, open_runtime
from paicli.runtime.custom_turn import prompt_command, running
from paicli.servers.trust import TrustStore, skip_lines
from paicli.ui.commands import BY_NAME
from paicli.ui.oneshot import Printer, ServerLines, installing_progress, printer_for
from paicli.ui.output import err
from paicli.ui.screen_secrets import redacting

EXIT_CODES = {"done": 0, "error": 1, "step_budget": 3, "cancelled": 130}


# Piped input goes into the prompt whole, so it is bounded: a larger file is a mistake (or
# `yes |`), and the model's window is far smaller anyway.
STDIN_LIMIT = 4 * 1024 * 1024


def read_prompt(options: argparse.Namespace) -> str | None:
    """The prompt, read before the event loop starts when it comes from stdin (a blocking
    read inside the loop would keep SIGTERM from being handled until stdin ends). With
    `-p -` stdin is the prompt; with `-p PROMPT` and a pipe or file on stdin (`git diff |
    paicli -p "review this"`), its text follows the prompt as a delimited block."""
    prompt: str = options.print
    if options.input_format == "stream-json":
        return prompt  # the turns come from stdin, as JSON lines, once the run is ready
    if prompt == "" and not _stdin_is_piped():
        return None  # `-p` alone on a terminal: there is nothing to read
    if prompt in ("", "-"):
        prompt = _read_stdin()
    elif _stdin_is_piped():
        piped = _read_stdin()
        if piped.strip():
            prompt = with_piped_text(prompt, piped)
    return prompt if prompt.strip() else None


def with_piped_text(prompt: str, piped: str) -> str:
    """`prompt`, then `piped` between tags the text itself does not contain, so nothing in
    it can close the block early."""
    tag, number = "stdin", 1
    while f"</{tag}>" in piped:
        number += 1
        tag = f"stdin-{number}"
    body = piped if piped.endswith("\n") else piped + "\n"
    return f"{prompt}\n\n<{tag}>\n{body}</{tag}>"


def _stdin_is_piped() -> bool:
    """A pipe or a regular file: a terminal is the user, /dev/null and sockets have
    nothing meant for the prompt."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _read_stdin() -> str:
    data = sys.stdin.buffer.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        raise UsageError(f"stdin is larger than {STDIN_LIMIT // (1024 * 1024)} MiB")
    # Bytes that are not UTF-8 (a binary diff) must not cost the run: shown as U+FFFD.
    return data.decode("utf-8", errors="replace")


async def run_once(options: argparse.Namespace, flags: dict[str, str | None], prompt: str) -> int:
    printer = printer_for(options.output_format, partial=options.include_partial_messages)
    try:
        return await _answer(options, flags, prompt, printer)
    except asyncio.CancelledError:
        printer.interrupted()
        raise


def no_prompt(options: argparse.Namespace, error: str, code: int) -> int:
    """The prompt could not be read: `error` on stderr, and the one JSON object or the
    end event when one was asked for."""
    printer_for(options.output_format).failed(f"paicli -p: {error}")
    return code


async def _answer(
    options: argparse.Namespace,
    flags: dict[str, str | None],
    prompt: str,
    printer: Printer,
) -> int:
    # The servers start at the first wait for them, or at the model's answer.
    settings = load_run_settings(Path.cwd(), start_options(options, flags, hold_servers=True))
    prompt_tool = PromptTool(options.permission_prompt_tool or "")
    approver = prompt_tool if options.permission_prompt_tool else None
    lines = ServerLines()
    async with open_runtime(settings, RunIO(on_server_change=lines, approver=approver)) as runtime:
        with redacting(runtime.redactor):
            problem = _resume(runtime, options)
            if problem is None and approver is not None:
                problem = await _check(prompt_tool, runtime)
            if problem is not None:
                printer.failed(f"paicli -p: {problem}")
                return 2
            code = await _start(runtime, printer, lines, accept_changes=options.accept_tool_changes)
            if code is not None:
                return code
            saving = not options.no_session_persistence
            # Servers still installing (npx & co.) say how long, every few seconds. (Not in a
            # TaskGroup: a BrokenPipeError must reach main() as itself, not in a group.)
            progress = asyncio.create_task(installing_progress(runtime.manager.servers))
            try:
                if options.input_format == "stream-json":
                    code = await stream_turns(
                        runtime,
                        prompt,
                        printer,
                        one_turn,
                        saving=saving,
                        replay=options.replay_user_messages,
                    )
                else:
                    code = await one_turn(runtime, prompt, printer, saving=saving)
            finally:
                progress.cancel()
                await asyncio.wait([progress])
            # Servers that came up during the run (their tools were offered from the
            # catalogue) may have changed a tool too: such a tool was never called.
            tool_changes(runtime, accept=options.accept_tool_changes)
            return code


async def _check(prompt_tool: PromptTool, runtime: Runtime) -> str | None:
    try:
        await prompt_tool.check(runtime.manager)
    except PromptToolError as exc:
        return str(exc)
    return None


def _resume(runtime: Runtime, options: argparse.Namespace) -> str | None:
    """`-c`/`-r ID` with `-p`: the saved conversation the answer carries on (and is saved
    back to); why not, when it cannot be."""
    store = runtime.sessions
    if store is None or (not options.continue_session and options.resume is None):
        return None
    if options.continue_session:
        session = store.latest()
        if session is None:
            return None  # nothing to continue: a new conversation, saved like one
    elif not options.resume:
        return "--resume needs an ID with -p (paicli --resume, in a terminal, lists them)"
    else:
        session = store.load(options.resume)
        if session is None:
            return f"no saved conversation {options.resume!r}"
        if (elsewhere := store.elsewhere(session)) is not None:
            return elsewhere
    runtime.resume(session)
    return None


async def _start(
    runtime: Runtime, printer: Printer, lines: ServerLines, *, accept_changes: bool
) -> int | None:
    """What comes before the first turn: problems and skipped servers said, the servers
    worth waiting for waited for (within the start budget: the request goes without the
    rest, and `lines` says so), the `init` message; an exit code when no turn can run."""
    for problem in runtime.problems:
        err(f"paicli: {problem}")
    if runtime.approvals is not None and runtime.approvals.mode is Mode.YOLO:
        err(f"paicli: {YOLO_WARNING}")
    store = TrustStore(runtime.home.trust_store)
    skipped = [runtime.config.servers[name] for name in runtime.skipped]
    for line in skip_lines(skipped, runtime.project or runtime.root, store):
        err(f"paicli: {line}")
    if runtime.agent is None:
        printer.failed(f"paicli: {runtime.settings.why_not_configured()}")
        return 2
    # Servers whose tools the catalogue knows are not waited for: a call waits instead.
    manager = runtime.manager
    starting = manager.starting(without_catalogue=True)
    if starting:
        gc.enable()  # a wait of seconds with servers talking: collect as usual
        runtime.load_model()  # in the background, while cold servers are waited for
        budget = runtime.run.calls.start_budget
        if not await manager.wait_ready(starting, timeout=budget):
            late = manager.starting(without_catalogue=True)
            lines.went_without([manager.get(name) for name in late], budget)
    tool_changes(runtime, accept=accept_changes)
    printer.begin(runtime.conversation_id(), run_facts(runtime))
    # With nothing to wait for, the init message goes first: loading the model client (the
    # openai SDK, in a thread) would hold the interpreter while it is written. The turn
    # starts once it has loaded, so this thread imports nothing while that one does
    # (gh-91351); the servers still starting imported their modules with the manager.
    await runtime.model_loaded()
    gc.enable()  # off since launch (`paicli.cli`): the start's objects are made
    return None


async def one_turn(runtime: Runtime, prompt: str, printer: Printer, *, saving: bool) -> int:
    """One prompt answered and the conversation saved (`saving`); the exit code."""
    assert runtime.agent is not None
    # A prompt that starts with /NAME runs that custom command (its grants and model for
    # this turn only).
    command, problems = prompt_command(runtime, prompt, tuple(BY_NAME))
    for line in [*problems, *(command.notes if command else ())]:
        err(f"paicli: {line}")
    images: list[ImagePart] = []
    if saving:  # what the turn changes is recorded (paicli rewind)
        await asyncio.to_thread(runtime.begin_turn, prompt)
    if command is None:
        prepared = await prepare_headless(runtime, prompt)
        if prepared is None:
            if saving:  # what its `!` lines changed stays recorded
                await asyncio.to_thread(runtime.end_turn)
            printer.failed("paicli -p: the prompt has only `!` lines: add what to ask the model")
            return 2
        prompt, images = prepared
    runtime.mcp.jobs.wait_at_turn_end = True  # the answer waits for its background jobs
    try:
        async with running(runtime, command, err):
            text = command.text if command else prompt
            ended = await runtime.agent.run(text, printer, images=images)
    except asyncio.CancelledError:
        if saving:  # the conversation as the agent settled it; the loop is stopping anyway
            runtime.end_turn()
            runtime.save_session()
        raise
    if saving:
        await asyncio.to_thread(runtime.end_turn)
        await asyncio.to_thread(runtime.save_session)
    printer.finish(ended)
    return EXIT_CODES[ended.reason]


def tool_changes(runtime: Runtime, *, accept: bool) -> None:
    """Tools redefined since they were pinned: one line each, and left out of the run unless
    `--accept-tool-changes` (a change left out is declined, so it is said once)."""
    runtime.mcp.specs()
    for notice in runtime.mcp.notices:
        err(f"paicli: {notice}")
    runtime.mcp.notices.clear()
    changes = list(runtime.mcp.pending)
    if accept:
        runtime.mcp.accept(changes, decided_by="flag")
    for change in changes:
        if not accept:
            runtime.mcp.decline(change, decided_by="policy")
        what = change.lines()[0]
        verdict = "accepted (--accept-tool-changes)" if accept else "left out"
        err(
            f"paicli: {change.server}: tool {change.tool.name!r} changed since it was pinned "
            f"({what}); {verdict}" + ("" if accept else f"; see paicli mcp lock {change.server}")
        )
