"""Slash commands that become the next turn: an MCP prompt (`/mcp__SERVER__PROMPT ARGS`: the
server's prompt, its earlier messages before it) and a custom command (`/name ARGS`: its
body, with its model and grants for that turn). What they say on the way is printed here."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from paicli.custom_commands.files import CustomCommand
from paicli.escape import one_line
from paicli.llm.messages import AssistantMessage, Message, UserMessage
from paicli.runtime import Runtime
from paicli.runtime.custom_turn import CommandTurn, command_turn
from paicli.servers.prompts import PromptIndex, PromptProblem, split_command

__all__ = ["custom_command_turn", "mcp_prompt_turn", "warn"]


def warn(console: Console, line: str) -> None:
    console.print(Text(one_line(line, 300), "yellow"))


async def mcp_prompt_turn(
    prompts: PromptIndex, console: Console, text: str
) -> tuple[str, list[Message]] | None:
    """The question and earlier messages of the MCP prompt `text` calls (None: said why
    not)."""
    try:
        name, words = split_command(text)
        command = prompts.find(name)
        if command is None:  # its server may be just ready, its listing under way
            await prompts.settled()
            command = prompts.find(name)
        if command is None:
            raise PromptProblem(f"no MCP prompt {name} (/help lists them)")
        arguments = prompts.arguments(command, words)
        with console.status(Text(f"getting the prompt {command.name}…")):
            turn = await prompts.get(command, arguments)
    except PromptProblem as exc:
        warn(console, str(exc))
        return None
    for what in turn.left_out:
        console.print(Text(one_line(f"  left out: {what} (text only)", 160), "dim"))
    console.print(Text(f"  sending the prompt {command.name}", "dim"))
    prior: list[Message] = [
        UserMessage(role="user", content=said)
        if role == "user"
        else AssistantMessage(role="assistant", content=said)
        for role, said in turn.prior
    ]
    return turn.question, prior


def custom_command_turn(
    runtime: Runtime, console: Console, command: CustomCommand, arguments: str
) -> CommandTurn:
    """The turn `/name arguments` runs, its notes (grants refused, the model) said."""
    turn = command_turn(runtime, command, arguments.strip())
    for note in turn.notes:
        warn(console, note)
    return turn
