"""Building the agent for a run: its system prompt from the project folder, its limits from
the model settings and the command line (`build_agent`, used by the REPL, `-p` and `/model`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from paicli.agent.loop import DEFAULT_MAX_STEPS, Agent, ModelClient, TurnHooks
from paicli.agent.prompt import system_prompt
from paicli.tools.base import Toolbox
from paicli.tools.search.offer import ToolOffer

__all__ = ["build_agent"]


def build_agent(
    llm: ModelClient,
    toolbox: Toolbox,
    *,
    root: Path,
    context_window: int,
    max_steps: int | None,
    offer: ToolOffer | None,
    context: Callable[[], str] | None = None,
    prompt: str | None = None,
    append: str | None = None,
    prepare: Callable[[], Awaitable[None]] | None = None,
    hooks: TurnHooks | None = None,
) -> Agent:
    """The agent working in `root` through `toolbox`; `max_steps` None is the default.
    `prompt` replaces paicli's own system prompt (`--system-prompt-file`), `append` is added
    after it (`--append-system-prompt`); the context (memory, servers' instructions) is
    added before each request either way, after `prepare` is awaited."""
    base = prompt if prompt is not None else system_prompt(root)
    return Agent(
        llm,
        toolbox,
        system_prompt="\n\n".join(part for part in (base.rstrip(), append) if part),
        context_window=context_window,
        max_steps=max_steps or DEFAULT_MAX_STEPS,
        offer=offer,
        context=context,
        prepare=prepare,
        hooks=hooks,
    )
