"""The user's and the project's custom slash commands in an editor: offered as ACP's
`available_commands_update` when a session opens, and a prompt that starts with `/NAME` runs
that command's turn (its body, grants and model, as under `-p`: `runtime.custom_turn`)."""

from __future__ import annotations

from acp.helpers import update_available_commands
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from paicli.acp.updates import Update
from paicli.runtime import Runtime
from paicli.runtime.custom_turn import CommandTurn, custom_commands, prompt_command

__all__ = ["command_of", "offered_commands"]

# What an editor lists of a description: one line.
DESCRIPTION_CHARS = 200


def offered_commands(runtime: Runtime) -> Update:
    """The custom commands as the editor lists them."""
    commands = custom_commands(runtime, ())
    offered = [
        AvailableCommand(
            name=command.name,
            description=" ".join(command.description.split())[:DESCRIPTION_CHARS]
            or f"custom command ({command.where})",
            input=AvailableCommandInput(UnstructuredCommandInput(hint=command.argument_hint))
            if command.argument_hint
            else None,
        )
        for command in commands.sorted()
    ]
    return update_available_commands(offered)


def command_of(runtime: Runtime, text: str) -> tuple[CommandTurn | None, tuple[str, ...]]:
    """The custom command the prompt `text` runs (None: none), and lines for the user (the
    command files' problems, the command's notes)."""
    turn, problems = prompt_command(runtime, text, ())
    return turn, (*problems, *(turn.notes if turn is not None else ()))
