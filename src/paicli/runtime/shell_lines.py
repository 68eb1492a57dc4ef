"""`!command` lines: the user runs a shell command from the prompt, as in Claude Code's bash
mode, and its output joins the conversation for the model's next request.

The command goes through the run's toolbox as an `execute_command` call (audit, hooks, the
redactor, the OS sandbox and its limits all apply). The user typed it, so it is not asked
about: it runs with a grant for this one call, the way a user's custom command grants its
`allowed-tools`. What no grant overrides still holds: deny rules (config, project, `--deny`),
the list of refused commands, plan mode, and a command no sandbox here can contain (asked in
the REPL, denied under `-p`).
"""

from __future__ import annotations

from dataclasses import dataclass

from paicli.llm.messages import UserMessage
from paicli.permissions.rules import COMMAND_TOOL
from paicli.runtime.run import Runtime
from paicli.tools.base import ToolOutcome

__all__ = ["MAX_SHARED_CHARS", "ShellLine", "run_shell_line", "split_shell_lines"]

# The output the model is shown of one command (the tool's own cap is larger): head and tail.
MAX_SHARED_CHARS = 20_000


@dataclass(frozen=True)
class ShellLine:
    command: str
    outcome: ToolOutcome

    def message(self) -> UserMessage:
        """The command and its output as the model reads them next."""
        output = self.outcome.text
        if len(output) > MAX_SHARED_CHARS:
            half = MAX_SHARED_CHARS // 2
            cut = len(output) - 2 * half
            output = f"{output[:half]}\n[... {cut:,} characters cut ...]\n{output[-half:]}"
        tag, number = "shell-output", 1
        while f"</{tag}>" in output:
            number += 1
            tag = f"shell-output-{number}"
        verdict = "refused or failed" if self.outcome.is_error else "ran"
        text = (
            f"The user ran a shell command themselves ({verdict}):\n"
            f"<shell-command>{self.command}</shell-command>\n<{tag}>\n{output}\n</{tag}>"
        )
        return UserMessage(role="user", content=text)


def split_shell_lines(text: str) -> tuple[list[str], str]:
    """The `!` lines of `text` (their commands) and the rest, the prompt for the model
    (`text` itself when it has none)."""
    if not any(line.lstrip().startswith("!") for line in text.split("\n")):
        return [], text
    commands: list[str] = []
    rest: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith("!"):
            command = line.lstrip()[1:].strip()
            if command:
                commands.append(command)
        else:
            rest.append(line)
    return commands, "\n".join(rest).strip()


async def run_shell_line(runtime: Runtime, command: str) -> ShellLine:
    """Run `command` through the toolbox, granted for this call (see the module's doc)."""
    spec = next(spec for spec in runtime.toolbox.specs() if spec.name == COMMAND_TOOL)
    # (Nothing else runs meanwhile: the line runs between turns, before the model is asked.)
    with runtime.approvals.granting((COMMAND_TOOL,)):
        outcome = await runtime.toolbox.call(spec, {"command": command})
    return ShellLine(command, outcome)
