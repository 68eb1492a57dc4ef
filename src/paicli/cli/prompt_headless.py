"""`paicli -p`'s prompt before the model sees it, as the REPL's (`paicli.ui.prompt_input`):
`!` lines run (their output on stderr and in the conversation), `@server:uri` resources
(servers still starting waited for) and `@path` files, folders and images attached; a line
on stderr for each."""

from __future__ import annotations

from paicli.llm.messages import ImagePart
from paicli.runtime import Runtime
from paicli.runtime.prompt_paths import attach_paths
from paicli.runtime.shell_lines import run_shell_line, split_shell_lines
from paicli.servers.mentions import expand_mentions
from paicli.ui.output import err

__all__ = ["prepare_headless"]

# Lines of a `!` command's output shown on stderr (the conversation gets it all, cut).
SHOWN_LINES = 20


async def prepare_headless(runtime: Runtime, prompt: str) -> tuple[str, list[ImagePart]] | None:
    """The prompt to send and its images; None when only `!` lines were given (then none
    of them runs: the run fails before doing anything)."""
    commands, text = split_shell_lines(prompt)
    if not text:
        return None
    for command in commands:
        line = await run_shell_line(runtime, command)
        status = "failed" if line.outcome.is_error else "ran"
        err(f"paicli: ! {command} ({status})")
        for shown in line.outcome.text.rstrip("\n").split("\n")[-SHOWN_LINES:]:
            err(f"  {shown}")
        if runtime.agent is not None:
            runtime.agent.messages.append(line.message())
    attached = await attach_paths(runtime, text)  # the user's words only
    expansion = await expand_mentions(runtime.manager, text)
    for note in [*(f"attached @{name}" for name in expansion.attached), *attached.notes]:
        err(f"paicli: {note}")
    for problem in [*expansion.problems, *attached.problems]:
        err(f"paicli: {problem}")
    return attached.prompt(expansion.text), attached.images
