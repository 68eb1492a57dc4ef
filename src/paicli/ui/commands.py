"""The slash commands: one record per command (name, usage, help, argument completion and
handler), the one table behind the REPL's dispatch, `/help`, Tab completion and `paicli --help`.

`paicli --help` reads this table, so it imports no rich and no runtime: handlers get what they
need through `SlashContext`, and most hand it to their view (`mcp_view`, `audit_view`,
`context_view`, ...), imported when the command runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from paicli.escape import one_line
from paicli.llm.presets import PRESETS
from paicli.ui.mcp_actions import MCP_ACTIONS

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.custom_commands.files import CommandSet
    from paicli.llm.messages import Message
    from paicli.runtime import Runtime
    from paicli.servers.prompts import PromptIndex


class Ask(Protocol):
    def __call__(self, text: str, prior: Sequence[Message] = ()) -> None: ...


def _no_ask(text: str, prior: Sequence[Message] = ()) -> None:
    return None


@dataclass(frozen=True)
class SlashContext:
    """What a handler acts on: the session's runtime and console, and a way to end the REPL."""

    runtime: Runtime
    console: Console
    leave: Callable[[], None]
    # Hands the REPL a prompt to run as the next turn, as if the user had typed it (after
    # `prior` messages: an MCP prompt's earlier ones).
    ask: Ask = _no_ask
    # The MCP prompts of the ready servers (`/mcp__SERVER__PROMPT`), when the REPL has them.
    prompts: PromptIndex | None = None
    # The custom commands (Markdown files), when the REPL has them.
    custom: CommandSet | None = None
    # Puts text in the next prompt's line, to be sent again or edited (/rewind).
    prefill: Callable[[str], None] = lambda text: None


Handler = Callable[[SlashContext, list[str]], Awaitable[None]]
ServerNames = Callable[[], list[str]]
# (the arguments typed before the one being completed, the configured servers' names)
#   -> candidates for that argument
ArgumentCompleter = Callable[[Sequence[str], ServerNames], Sequence[str]]


def no_arguments(earlier: Sequence[str], servers: ServerNames) -> Sequence[str]:
    return ()


@dataclass(frozen=True)
class SlashCommand:
    name: str
    usage: str
    help: str
    run: Handler
    arguments: ArgumentCompleter = no_arguments
    aliases: tuple[str, ...] = ()


# -- handlers -------------------------------------------------------------------------------


async def _help(context: SlashContext, words: list[str]) -> None:
    from rich.text import Text  # noqa: PLC0415 - rich stays out of `paicli --help`

    context.console.print(help_text())
    if context.custom is not None:
        for line in custom_help(context.custom):
            context.console.print(Text(line))
    if context.prompts is not None:
        from paicli.servers.prompts import HELP_WAIT  # noqa: PLC0415 - loaded with the index

        await context.prompts.settled(HELP_WAIT)
        for line in prompt_help(context.prompts):
            context.console.print(Text(line))


def custom_help(commands: CommandSet) -> list[str]:
    """One line per custom command: its usage, what it does and where it comes from (all
    of it from files, a repository's too: escaped)."""
    found = commands.sorted()
    lines = ["", "  Custom commands (Markdown files):"] if found else []
    for command in found:
        usage = one_line(f"/{command.name} {command.argument_hint}".strip(), 40)
        about = one_line(command.description, 60)
        lines.append(f"  {usage:<16}  {about}  ({one_line(command.where, 40)})")
    return lines


def prompt_help(prompts: PromptIndex) -> list[str]:
    """One line per MCP prompt command, then one per prompt whose name cannot be typed
    (everything a server named is escaped)."""
    commands = prompts.commands()
    lines = ["", "  MCP prompts (arguments in order, or name=value):"] if commands else []
    for command in commands:
        about = command.prompt.title or command.prompt.description or ""
        lines.append(f"  {one_line(command.usage(), 60)}  {one_line(about, 56)}".rstrip())
    for server, names in prompts.untypable.items():
        for name in names:
            what = f"{one_line(server, 30)}: prompt {one_line(repr(name), 40)}"
            lines.append(f"  ({what} has a name that cannot be typed)")
    return lines


async def _clear(context: SlashContext, words: list[str]) -> None:
    hooks = context.runtime.hooks  # as Claude Code: the session ends and starts anew
    if hooks is not None:
        await hooks.session_end("clear")
    context.runtime.new_conversation()
    if hooks is not None:
        await hooks.session_start("clear")
    context.console.clear()
    context.console.print("Started a new conversation.", style="dim")


async def _model(context: SlashContext, words: list[str]) -> None:
    runtime, console = context.runtime, context.console
    if not words:
        from paicli.ui.session_commands import choose_model  # noqa: PLC0415 - rich

        chosen = await choose_model(runtime, console)
        if chosen is None:
            return
        words = [chosen]
    settings = await runtime.set_model(words[0])
    if not settings.configured:
        console.print(settings.why_not_configured(), style="yellow")
        current = runtime.settings
        kept = current.describe() if current.configured else "no model"
        console.print(f"Still using: {kept}", style="dim")
        return
    settings = runtime.settings
    console.print(f"Model: {settings.describe() if settings.configured else 'none'}")


async def _resume(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.session_commands import resume  # noqa: PLC0415 - rich, prompt_toolkit

    await resume(context.runtime, context.console, words)


async def _doctor(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.session_commands import doctor  # noqa: PLC0415 - the doctor, rich

    await doctor(context.runtime, context.console, words)


MODE_HELP = {
    "default": "asks before edits, commands and third-party tools",
    "accept-edits": "file edits in the project run without asking",
    "plan": "read-only tools only: the model explores and proposes a plan",
    "yolo": "everything runs without asking (but deny rules and protected paths)",
}


async def _mode(context: SlashContext, words: list[str]) -> None:
    from paicli.permissions.approval import Mode  # noqa: PLC0415

    approvals = context.runtime.approvals
    if approvals is None:
        return
    if words:
        try:
            approvals.switch(Mode.parse(words[0]))
        except ValueError as exc:
            context.console.print(one_line(str(exc), 200), style="yellow")
            return
    mode = approvals.mode.value
    context.console.print(f"Permission mode: {mode} ({MODE_HELP[mode]})")
    if not words:
        context.console.print(
            "Modes: " + ", ".join(m for m in MODE_HELP if m != "yolo") + "  (/mode NAME, or "
            "Shift+Tab at the prompt)",
            style="dim",
        )


def _mode_arguments(earlier: Sequence[str], servers: ServerNames) -> Sequence[str]:
    return [m for m in MODE_HELP if m != "yolo"] if not earlier else ()


async def _permissions(context: SlashContext, words: list[str]) -> None:
    approvals = context.runtime.approvals
    if approvals is None:
        return
    mode = approvals.mode.value
    context.console.print(f"Permission mode: {mode} ({MODE_HELP[mode]})")
    for where, rules in approvals.rules().items():
        if rules:
            context.console.print(f"{where}:")
            for rule in rules:
                context.console.print(f"  {one_line(rule, 200)}")
    context.console.print(
        "Rules: TOOL, TOOL(ARGS) e.g. execute_command(git diff:*), write_file(src/**), "
        "mcp__SERVER; set in config.toml [permissions], .paicli/settings.json, --allow/--deny",
        style="dim",
    )


async def _skills(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.skills_view import skills_command  # noqa: PLC0415 - rich stays out of --help

    await skills_command(context.runtime, context.console)


def _model_arguments(earlier: Sequence[str], servers: ServerNames) -> Sequence[str]:
    return list(PRESETS) if not earlier else ()


async def _mcp(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.mcp_view import mcp_command  # noqa: PLC0415 - rich stays out of `paicli --help`

    await mcp_command(context.runtime, context.console, words)


def _mcp_arguments(earlier: Sequence[str], servers: ServerNames) -> Sequence[str]:
    if not earlier:
        return MCP_ACTIONS
    if len(earlier) == 1 and earlier[0] in MCP_ACTIONS:
        return servers()
    return ()


async def _audit(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.audit_view import audit_command  # noqa: PLC0415 - keep `paicli --help` light

    await audit_command(context.runtime, context.console, words)


async def _jobs(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.jobs_view import jobs_command  # noqa: PLC0415 - rich stays out of --help

    await jobs_command(context.runtime, context.console, words)


async def _agents(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.plan_view import print_agents  # noqa: PLC0415 - rich stays out of `paicli --help`

    print_agents(context.console, context.runtime.run.agents)


async def _compact(context: SlashContext, words: list[str]) -> None:
    agent = context.runtime.agent
    if agent is None:
        context.console.print("No model configured.", style="yellow")
        return
    from paicli.agent.events import Notice  # noqa: PLC0415 - keep `paicli --help` light

    def say(event: object) -> None:
        if isinstance(event, Notice):
            context.console.print(one_line(event.text, 300), style="dim")

    with context.console.status("Summarising the conversation…"):
        compacted = await agent.compact(" ".join(words), say)
    if compacted:
        await asyncio.to_thread(context.runtime.save_session)


async def _cost(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.context_view import cost_command  # noqa: PLC0415 - keep `paicli --help` light

    await cost_command(context.runtime, context.console)


async def _context(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.context_view import context_command  # noqa: PLC0415 - the agent's estimates

    await context_command(context.runtime, context.console)


INIT_PROMPT = """Write PAICLI.md, the project memory file paicli reads into every \
conversation in this repository, at the project root. First look around: the README, the \
build and package files, the test setup, the source layout. Then write, concisely: what the \
project is; the commands to set up, build, run, test and lint it; how the code is laid out; \
the conventions a contributor must follow; anything surprising. Facts you found in the \
repository only, no guesses; under 80 lines. If PAICLI.md exists, improve it instead of \
starting over.{extra}"""


async def _rewind(context: SlashContext, words: list[str]) -> None:
    from paicli.ui.rewind_view import rewind  # noqa: PLC0415 - rich, prompt_toolkit

    await rewind(context.runtime, context.console, words, context.prefill)


async def _init(context: SlashContext, words: list[str]) -> None:
    extra = f"\n\nThe user adds: {' '.join(words)}" if words else ""
    context.console.print("Asking the model to draft PAICLI.md…", style="dim")
    context.ask(INIT_PROMPT.format(extra=extra))


async def _exit(context: SlashContext, words: list[str]) -> None:
    context.leave()


COMMANDS = (
    SlashCommand("/help", "", "show the commands", _help),
    SlashCommand("/clear", "", "start a new conversation", _clear),
    SlashCommand(
        "/model",
        "[NAME]",
        "the model and the presets (pick one), or switch to a model or provider preset",
        _model,
        _model_arguments,
    ),
    SlashCommand(
        "/mcp",
        "[" + "|".join(MCP_ACTIONS) + " NAME]",
        "MCP servers: the status table, or act on one server (disable/enable: this session)",
        _mcp,
        _mcp_arguments,
    ),
    SlashCommand(
        "/mode",
        "[NAME]",
        "the permission mode, or switch to default, accept-edits or plan (also Shift+Tab)",
        _mode,
        _mode_arguments,
    ),
    SlashCommand("/permissions", "", "the permission mode and the rules in force", _permissions),
    SlashCommand(
        "/skills", "", "the skills the model can load, and where each comes from", _skills
    ),
    SlashCommand("/jobs", "[cancel N]", "background jobs (MCP tasks); cancel one", _jobs),
    SlashCommand("/audit", "[N]", "the last N tool calls from the audit log (default 10)", _audit),
    SlashCommand(
        "/agents", "", "the sub-agents the model can hand tasks to, and their files", _agents
    ),
    SlashCommand(
        "/compact",
        "[INSTRUCTIONS]",
        "summarise the conversation so far into one message (what to keep: INSTRUCTIONS)",
        _compact,
    ),
    SlashCommand(
        "/context", "", "what fills the model's context window, and the tokens used", _context
    ),
    SlashCommand(
        "/cost", "", "the tokens this session has used so far", _cost, aliases=("/usage",)
    ),
    SlashCommand("/resume", "[ID]", "carry on a saved conversation of this folder", _resume),
    SlashCommand("/rewind", "[N [ACTION]]", "restore files and/or conversation (Esc Esc)", _rewind),
    SlashCommand("/doctor", "[NAME...]", "examine each MCP server alone, and the model", _doctor),
    SlashCommand(
        "/init",
        "[NOTES]",
        "have the model draft PAICLI.md, the project memory every conversation here reads",
        _init,
    ),
    SlashCommand(
        "/exit",
        "",
        "leave paicli (also Ctrl+D, or Ctrl+C twice at an empty prompt)",
        _exit,
        aliases=("/quit",),
    ),
)

BY_NAME = {name: command for command in COMMANDS for name in (command.name, *command.aliases)}


def help_text() -> str:
    width = 16  # a longer usage puts its help on the next line
    lines = []
    for c in COMMANDS:
        usage = f"{c.name} {c.usage}".strip()
        if len(usage) <= width:
            lines.append(f"  {usage:<{width}}  {c.help}")
        else:
            lines += [f"  {usage}", f"  {'':<{width}}  {c.help}"]
    lines.append("")
    lines.append("  @server:uri in a prompt attaches that MCP resource (Tab completes).")
    lines.append("  @path attaches a file, a folder's listing or an image (Tab completes, fuzzy).")
    lines.append("  !command at the start of a line runs it; its output joins the conversation.")
    lines.append("  Enter sends; Alt+Enter or Ctrl+J adds a line; Ctrl+C cancels a running turn;")
    lines.append("  Shift+Tab cycles the permission mode (default, accept-edits, plan).")
    return "\n".join(lines)
