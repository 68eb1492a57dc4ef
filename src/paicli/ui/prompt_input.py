"""What the REPL does with a prompt before the model sees it: `!command` lines run (their
output shown and put into the conversation), `@server:uri` resources and `@path` files,
folders and images attached, each with a dim line (problems in yellow)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from paicli.escape import terminal_safe
from paicli.llm.messages import ImagePart
from paicli.runtime import Runtime
from paicli.runtime.prompt_paths import attach_paths
from paicli.runtime.shell_lines import ShellLine, run_shell_line, split_shell_lines
from paicli.servers.mentions import expand_mentions, starting_mentioned

__all__ = ["prepare_prompt", "show_shell_line"]

# Lines of a `!` command's output shown on screen (all of it goes to the conversation, cut).
SHOWN_LINES = 40


async def prepare_prompt(
    console: Console, runtime: Runtime, text: str, *, mentions: bool, typed: bool
) -> tuple[str, list[ImagePart]] | None:
    """The prompt to send and its images; None when nothing is left for the model (the
    prompt was `!` lines only). `mentions`: the user's own words (an MCP prompt's text is
    sent as the server wrote it); `typed`: typed at the prompt (only then do `!` lines run,
    not from a custom command's file)."""
    if not mentions:
        return text, []
    commands, text = split_shell_lines(text) if typed else ([], text)
    for command in commands:
        line = await run_shell_line(runtime, command)
        show_shell_line(console, line)
        if runtime.agent is not None:
            runtime.agent.messages.append(line.message())
    if not text:
        return None
    attached = await attach_paths(runtime, text)  # the user's words only
    if names := starting_mentioned(runtime.manager, text):
        shown = terminal_safe(", ".join(names))
        with console.status(Text(f"waiting for MCP servers you mentioned: {shown}…")):
            expansion = await expand_mentions(runtime.manager, text)
    else:
        expansion = await expand_mentions(runtime.manager, text)
    for mention in expansion.attached:
        console.print(Text(f"  attached @{terminal_safe(mention)}", "dim"))
    for note in attached.notes:
        console.print(Text(f"  {terminal_safe(note)}", "dim"))
    for problem in [*expansion.problems, *attached.problems]:
        console.print(Text(terminal_safe(problem), "yellow"))
    return attached.prompt(expansion.text), attached.images


def show_shell_line(console: Console, line: ShellLine) -> None:
    """`! command` and its output (the last lines of a long one), escaped."""
    outcome = line.outcome
    console.print(Text("! ", "bold magenta").append(terminal_safe(line.command)))
    lines = outcome.text.rstrip("\n").split("\n")
    if len(lines) > SHOWN_LINES:
        console.print(Text(f"  … {len(lines) - SHOWN_LINES} lines above", "dim"))
        lines = lines[-SHOWN_LINES:]
    style = "yellow" if outcome.is_error else ""
    for shown in lines:
        console.print(Text("  " + terminal_safe(shown), style))
