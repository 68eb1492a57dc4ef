"""A custom slash command made into a turn, for the REPL and `-p` alike.

The command's body, with the arguments put in, is the user's prompt. Its `model` is used for
that turn only (the model in use before comes back after it). Its `allowed-tools` (Claude
Code's names read as paicli's: `Bash(git diff:*)` is `execute_command(git diff:*)`) let those
calls run unasked during the turn, but only for the user's own commands: a project's command
is repository content, so its list grants nothing and each call is asked (or denied under
`-p`) as usual, and its `model` may name a model of the current provider only (a preset
would send the conversation elsewhere); one line says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from paicli.custom_commands.expand import expand
from paicli.custom_commands.files import CommandSet, CustomCommand, load_commands
from paicli.escape import one_line
from paicli.llm.presets import PRESETS
from paicli.permissions.rules import RuleError, parse_rule
from paicli.runtime.run import Runtime
from paicli.tools.claude_names import paicli_rule

__all__ = ["CommandTurn", "command_turn", "custom_commands", "prompt_command", "running"]


@dataclass(frozen=True)
class CommandTurn:
    """What running a command sends and changes: the prompt, the rules it grants for the
    turn, the model for the turn, and lines for the user."""

    command: CustomCommand
    text: str
    grants: tuple[str, ...] = ()
    model: str | None = None
    notes: tuple[str, ...] = ()


def custom_commands(runtime: Runtime, reserved: tuple[str, ...]) -> CommandSet:
    """The user's and the project's command files, paicli's own names (`reserved`) kept."""
    return load_commands(
        runtime.home.root, runtime.project, reserved=reserved, plugins=runtime.run.plugins
    )


def command_turn(runtime: Runtime, command: CustomCommand, arguments: str) -> CommandTurn:
    """The turn `/name arguments` runs."""
    text = expand(command.body, arguments, project=runtime.project)
    notes: list[str] = []
    grants: list[str] = []
    if command.allowed_tools and command.from_project:
        listed = one_line(", ".join(command.allowed_tools), 160)
        notes.append(
            f"/{command.name} is a project command: its allowed-tools ({listed}) grant "
            "nothing; each call is approved as usual"
        )
    elif command.allowed_tools:
        for tool in command.allowed_tools:
            rule = paicli_rule(tool)
            try:
                parse_rule(rule)
            except RuleError as exc:
                notes.append(f"{command.path}: allowed-tools {one_line(tool, 80)}: {exc}")
                continue
            grants.append(rule)
    model = command.model
    if model is not None and command.from_project and model in PRESETS:
        # A preset switches provider (and key): a repository must not send the conversation
        # to another provider than the user's choice.
        notes.append(
            f"/{command.name} is a project command: its model {model!r} would switch the "
            "provider; the current model answers"
        )
        model = None
    if model is not None:
        notes.append(f"/{command.name} uses the model {one_line(model, 80)} for this turn")
    return CommandTurn(command, text, tuple(grants), model, tuple(notes))


def prompt_command(
    runtime: Runtime, prompt: str, reserved: tuple[str, ...]
) -> tuple[CommandTurn | None, tuple[str, ...]]:
    """`-p "/name args"`: the turn of the custom command a prompt starts with (None: the
    prompt is sent as it is), and the problems met reading the command files."""
    if not prompt.startswith("/"):
        return None, ()
    name, _, arguments = prompt.partition(" ")
    commands = custom_commands(runtime, reserved)
    command = commands.find(name.strip())
    if command is None:
        return None, commands.problems
    return command_turn(runtime, command, arguments.strip()), commands.problems


@contextlib.asynccontextmanager
async def running(
    runtime: Runtime, turn: CommandTurn | None, say: Callable[[str], None]
) -> AsyncIterator[None]:
    """The command's model and grants in force for the block; `say` gets what went wrong
    (a model that cannot be used: the current one answers). No turn: nothing changes."""
    if turn is None:
        yield
        return
    before = runtime.settings
    switched = False
    if turn.model is not None:
        settings = await runtime.set_model(turn.model)
        if settings.configured:
            switched = True
        else:
            say(f"/{turn.command.name}: {settings.why_not_configured()}; using the current model")
    try:
        with runtime.approvals.granting(turn.grants):
            yield
    finally:
        if switched and before.configured:
            await runtime.use_model(before)
