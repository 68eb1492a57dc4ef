"""The interactive REPL: `paicli` with no command.

prompt_toolkit reads input (history, multi-line, completion); rich renders the output. A
turn runs as a task owned here: Ctrl+C while it runs cancels it (in-flight MCP calls send
`notifications/cancelled`) and returns to the prompt; Ctrl+D, or Ctrl+C twice, at an empty
prompt exits, and leaving the runtime's context stops every server.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine, Sequence
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from rich.console import Console
from rich.text import Text

from paicli.agent.loop import Agent
from paicli.asks.server_asks import ElicitAnswer, ElicitationRequest, SamplingRequest
from paicli.custom_commands.files import CommandSet
from paicli.escape import one_line, terminal_safe
from paicli.llm.messages import Message
from paicli.permissions.approval import Answer, ApprovalRequest
from paicli.runtime import Runtime
from paicli.runtime.custom_turn import CommandTurn, custom_commands, running
from paicli.servers.manager import ManagedServer, ServerState
from paicli.servers.mentions import ResourceIndex
from paicli.servers.prompts import PREFIX, PromptIndex
from paicli.ui.approval_prompt import TerminalApprover
from paicli.ui.commands import BY_NAME, SlashContext
from paicli.ui.completion import ReplCompleter
from paicli.ui.line_input import LineInput, PipeInput, TerminalInput
from paicli.ui.mcp_view import server_change_line
from paicli.ui.path_completion import PathIndex
from paicli.ui.prompt_input import prepare_prompt
from paicli.ui.prompt_line import (
    PROMPT,
    ArmExit,
    LineState,
    LiveLine,
    holding_keys,
    prompt_session,
    read_line,
)
from paicli.ui.render import TurnRenderer
from paicli.ui.repl_banner import print_banner
from paicli.ui.server_asks_prompt import TerminalAsks
from paicli.ui.slash_turns import custom_command_turn, mcp_prompt_turn, warn


class Repl:
    def __init__(
        self, console: Console, *, interactive: bool = True, line: LiveLine | None = None
    ) -> None:
        self.console = console
        self._line = line  # a prompt already drawn, with the task reading its first line
        self._state = LineState() if line is None else line.state
        # Not a terminal: one prompt (or approval answer) per line of stdin.
        self.interactive = interactive
        self._lines: LineInput = TerminalInput() if interactive else PipeInput()
        self.runtime: Runtime | None = None
        self.resources: ResourceIndex | None = None
        self.prompts: PromptIndex | None = None
        self.custom = CommandSet({})  # custom slash commands (Markdown files)
        self._turn: asyncio.Task[object] | None = None
        self._renderer = TurnRenderer(console)
        asking = asyncio.Lock()  # one question to the user at a time, whoever asks
        self._approver = TerminalApprover(
            console,
            before_prompt=self._pause_rendering,
            on_interrupt=self._interrupt,
            lines=self._lines,
            lock=asking,
        )
        self._asks = TerminalAsks(
            console,
            lines=self._lines,
            lock=asking,
            before_prompt=self._pause_rendering,
            busy=lambda: self._turn is not None,
        )
        self._background: set[asyncio.Task[None]] = set()
        self._banner_shown = False
        self._waited: set[str] = set()  # servers a turn waited for (never again: too late)
        self._leaving = False  # /exit was given
        # A prompt a slash command handed over (/init, an MCP prompt), with earlier messages.
        # (and whether `@server:uri` mentions in it are expanded: the user's words only; the
        # custom command whose turn it is).
        self._asked: tuple[str, Sequence[Message], bool, CommandTurn | None] | None = None
        self._quit = False  # the second Ctrl+C came as a signal between two prompts
        self._prefill = ""  # the next prompt's line starts with this (/rewind's prompt)

    # -- callbacks from the runtime ----------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> Answer:
        return await self._approver(request)

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return await self._asks.elicit(request)

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        return await self._asks.approve_sampling(request)

    async def review_sample(self, request: SamplingRequest, answer: str) -> bool:
        return await self._asks.review_sample(request, answer)

    def server_changed(self, server: ManagedServer) -> None:
        if server.state is ServerState.READY and self.resources is not None:
            tasks = [asyncio.get_running_loop().create_task(self.resources.refresh(server.name))]
            if self.prompts is not None:  # `/help` and a prompt typed at once wait for it
                tasks.append(self.prompts.refresh_soon(server.name))
            for task in tasks:
                self._background.add(task)
                task.add_done_callback(self._background.discard)
        if self._banner_shown:
            line = server_change_line(server)
            if line is not None:
                self.console.print(line)

    # -- the loop ----------------------------------------------------------------------------

    async def run(self, runtime: Runtime) -> int:
        # From the first prompt to the last, keys typed while no prompt or question reads
        # them (a turn, a slash command, the moments in between) wait for the next one.
        with holding_keys(self.interactive):
            return await self._run(runtime)

    async def _run(self, runtime: Runtime) -> int:
        self.runtime = runtime
        self.resources = ResourceIndex(runtime.manager)
        self.prompts = PromptIndex(runtime.manager)
        self.custom = custom_commands(runtime, tuple(BY_NAME))
        for server in runtime.manager.servers():
            if server.state is ServerState.READY:
                self.server_changed(server)
        state = self._state
        state.take(runtime.approvals)
        state.completer = self._completer(runtime, self.resources)
        self._banner(runtime)
        if self._line is not None:
            self._line.session.app.invalidate()  # the prompt mark shows the permission mode
        session: PromptSession[str] | None = None
        if self._line is not None:
            session = self._line.session
        elif self.interactive:
            session = prompt_session(state, runtime.home.history_file)
        if session is None or self._line is not None:  # (a quick start's prompt is drawn)
            runtime.start_background()
        else:
            # Servers and the model SDK load once the prompt is on the screen, not before
            # (start_background is idempotent: every later redraw is a no-op).
            def drawn(_: object) -> None:
                runtime.start_background()

            session.app.after_render += drawn
        first = None if self._line is None else await self._first_line(self._line)
        loop = asyncio.get_running_loop()
        # Only the main thread handles signals (elsewhere, as embedded, Ctrl+C is its owner's).
        sigint = threading.current_thread() is threading.main_thread()
        if sigint:
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
        try:
            while not self._quit:
                await self.prompts.refresh_stale()
                try:
                    if first is not None:
                        text, first = first, None
                    elif session is None:
                        text = await self._lines.read(PROMPT)
                    else:
                        text, self._prefill = await read_line(session, self._prefill), ""
                except ArmExit:
                    self._state.exit_armed = True
                    self.console.print(Text("Press Ctrl+C again to exit.", "dim"))
                    continue
                except (EOFError, KeyboardInterrupt):
                    break
                self._state.exit_armed = False
                text = text.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    # A task like a turn, so Ctrl+C cuts short a slow /mcp restart too.
                    await self._interruptible(self._slash(runtime, text), "")
                    if self._leaving:
                        break
                    asked, self._asked = self._asked, None
                    if asked is not None:  # a command that hands the model a prompt (/init)
                        text, prior, mentions, custom = asked
                        await self._run_turn(
                            runtime, text, prior, mentions=mentions, command=custom, typed=False
                        )
                    continue
                await self._run_turn(runtime, text)
        finally:
            if sigint:
                loop.remove_signal_handler(signal.SIGINT)
            for task in self._background:
                task.cancel()
            await asyncio.gather(*self._background, return_exceptions=True)
        if self._state.exit_armed:  # left with Ctrl+C twice (the audit log's session end)
            runtime.ended_by = "interrupted"
        self.console.print(Text("Bye. Stopping MCP servers…", "dim"))
        return 0

    async def _first_line(self, line: LiveLine) -> str | None:
        """The quick start's first line, once entered, or None. A Ctrl+C pressed after it was
        entered, while paicli loaded, takes it back (as it would cancel its turn); one pressed
        after a first Ctrl+C at the empty prompt leaves."""
        line.take_over()
        try:
            text = await line.first
        except ArmExit:
            if line.release():
                self._quit = self._state.exit_armed = True
                return None
            self._state.exit_armed = True
            if not line.held:  # (said already when it came while paicli loaded)
                self.console.print(Text("Press Ctrl+C again to exit.", "dim"))
            return None
        except (EOFError, KeyboardInterrupt):
            line.release()
            self._quit = True
            return None
        if line.release():
            self.console.print(Text("⎿ Interrupted. What should paicli do instead?", "yellow"))
            return None
        return text

    def _banner(self, runtime: Runtime) -> None:
        print_banner(self.console, runtime, self.custom.problems)
        self._banner_shown = True

    def _completer(self, runtime: Runtime, resources: ResourceIndex) -> ReplCompleter:
        """Tab at the prompt: commands, server names, `@` resources and paths, prompts."""
        return ReplCompleter(
            lambda: [s.name for s in runtime.manager.servers()],
            resources.completions,
            self.prompts,
            self.custom,
            PathIndex(runtime.root, runtime.home.root),
        )

    async def _run_turn(
        self,
        runtime: Runtime,
        text: str,
        prior: Sequence[Message] = (),
        *,
        mentions: bool = True,
        command: CommandTurn | None = None,
        typed: bool = True,  # typed at the prompt: its `!` lines run
    ) -> None:
        agent = runtime.agent
        if agent is None:
            self.console.print(Text(terminal_safe(runtime.settings.why_not_configured()), "yellow"))
            return
        self._renderer = TurnRenderer(self.console)
        await asyncio.to_thread(runtime.begin_turn, text)  # (a checkpoint: /rewind)
        async with running(runtime, command, lambda line: warn(self.console, line)):
            # One task for the whole turn, so Ctrl+C also cuts short the waits before the model.
            await self._interruptible(
                self._turn_body(runtime, agent, text, prior, mentions, typed=typed),
                " What should paicli do instead?",
            )
        self.console.print()
        # Saved after every turn (an interrupted one too), so nothing said is lost.
        await asyncio.to_thread(runtime.end_turn)
        await asyncio.to_thread(runtime.save_session)

    async def _interruptible(self, work: Coroutine[Any, Any, object], hint: str) -> None:
        """Run `work` as the task Ctrl+C cancels (see `_interrupt`)."""
        task = asyncio.get_running_loop().create_task(work)
        self._turn = task
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the REPL itself is being stopped (SIGTERM), not just this task
            self._renderer.close()
            self.console.print(Text(f"⎿ Interrupted.{hint}", "yellow"))
        finally:
            self._turn = None
            self._renderer.close()

    async def _turn_body(
        self,
        runtime: Runtime,
        agent: Agent,
        text: str,
        prior: Sequence[Message],
        mentions: bool,
        *,
        typed: bool,
    ) -> None:
        # `!` lines run first; `@` mentions attach resources, files, folders and images.
        prepared = await prepare_prompt(self.console, runtime, text, mentions=mentions, typed=typed)
        if prepared is None:
            return  # only `!` lines: their output waits in the conversation
        text, images = prepared
        await self._wait_for_servers(runtime)
        await self._review_tool_changes(runtime)
        mark = runtime.mcp.jobs.mark()
        try:
            ended = await agent.run(text, self._renderer, prior=prior, images=images)
        except asyncio.CancelledError:
            runtime.mcp.jobs.cancel_since(mark)  # Ctrl+C: the jobs this turn started too
            raise
        runtime.add_usage(ended.usage)

    async def _wait_for_servers(self, runtime: Runtime) -> None:
        """Servers still starting for the first time would miss this turn: wait for them,
        once each, within the start budget (Ctrl+C skips the wait along with the turn); the
        turn goes without the rest, whose tools join when they are ready."""
        manager = runtime.manager
        # (the catalogue's tools are offered; a call to one waits)
        starting = [n for n in manager.starting(without_catalogue=True) if n not in self._waited]
        if not starting:
            return
        self._waited.update(starting)
        names = ", ".join(manager.get(n).installing_note() or n for n in starting)
        with self.console.status(Text(terminal_safe(f"waiting for MCP servers: {names}"))):
            settled = await manager.wait_ready(starting, timeout=runtime.run.calls.start_budget)
        if not settled:
            late = [n for n in manager.starting(without_catalogue=True) if n in starting]
            names = ", ".join(manager.get(n).installing_note() or n for n in late)
            line = f"MCP servers still starting ({names}); going on without their tools, "
            self.console.print(Text(terminal_safe(line + "which join when ready."), "yellow"))

    async def _review_tool_changes(self, runtime: Runtime) -> None:
        """Tools redefined since they were pinned are held back from the model: show what
        changed and ask whether to offer them (a no holds them for this session)."""
        runtime.mcp.specs()
        for notice in runtime.mcp.notices:
            self.console.print(Text(terminal_safe(notice), "yellow"))
        runtime.mcp.notices.clear()
        for change in list(runtime.mcp.pending):
            self.console.print(
                Text(
                    f"MCP server {terminal_safe(change.server)} changed its tool "
                    f"{terminal_safe(change.tool.name)} since you pinned it:",
                    "bold yellow",
                )
            )
            for line in change.lines():
                self.console.print(Text("  " + terminal_safe(line)))
            try:
                reply = await self._lines.read("Offer the changed tool to the model? [y/N] ")
            except EOFError:
                reply = ""
            if reply.strip().lower() in ("y", "yes"):
                runtime.mcp.accept([change])
            else:
                runtime.mcp.decline(change)
                self.console.print(Text("  Held back for this session.", "dim"))

    def _interrupt(self) -> None:
        """SIGINT: cancels the running turn; with none, it is a Ctrl+C that arrived between
        two prompts (the terminal was not in raw mode): like one at an empty prompt."""
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
            return
        if not self._state.exit_armed:
            self._state.exit_armed = True
            self.console.print(Text("Press Ctrl+C again to exit.", "dim"))
            return
        self._quit = True
        app = get_app_or_none()
        if app is not None and app.is_running:
            app.exit(exception=EOFError())

    def _pause_rendering(self) -> None:
        self._renderer.pause()

    # -- slash commands ----------------------------------------------------------------------

    async def _slash(self, runtime: Runtime, text: str) -> None:
        """Run a slash command; one that fails says so in one line and the prompt comes back
        (a bug in one command, or a sandbox probe that breaks, must not end the session)."""
        try:
            await self._command(runtime, text)
        except Exception as exc:  # any failure: one line, then the prompt
            name = terminal_safe(text.split(maxsplit=1)[0])
            why = one_line(f"{type(exc).__name__}: {exc}", 200)
            self.console.print(Text(f"{name} failed: {why}", "red"))

    async def _command(self, runtime: Runtime, text: str) -> None:
        name, *words = text.split()
        if name.startswith(PREFIX) and self.prompts is not None:
            await self._prompt_command(text)
            return
        command = BY_NAME.get(name)
        if command is None and (custom := self.custom.find(name)) is not None:
            turn = custom_command_turn(runtime, self.console, custom, text[len(name) :])
            self._asked = (turn.text, (), not custom.from_project, turn)
            return
        if command is None:
            shown = terminal_safe(name)
            self.console.print(Text(f"Unknown command {shown}; /help lists them.", "yellow"))
            return
        context = SlashContext(
            runtime, self.console, self._leave, self._ask, self.prompts, self.custom, self._fill
        )
        await command.run(context, words)

    async def _prompt_command(self, text: str) -> None:
        """`/mcp__SERVER__PROMPT ARGS`: the server's prompt becomes the next turn."""
        assert self.prompts is not None
        found = await mcp_prompt_turn(self.prompts, self.console, text)
        if found is not None:
            self._asked = (*found, False, None)

    def _ask(self, text: str, prior: Sequence[Message] = ()) -> None:
        self._asked = (text, prior, True, None)

    def _leave(self) -> None:
        self._leaving = True

    def _fill(self, text: str) -> None:
        self._prefill = text
