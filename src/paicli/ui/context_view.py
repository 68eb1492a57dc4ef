"""`/context` and `/cost`: what fills the model's context window, by part (estimated), and
the tokens this session has used (as the provider reported them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paicli.agent.context import estimate_tokens

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.agent.loop import Agent
    from paicli.runtime import Runtime

__all__ = ["context_command", "context_lines", "cost_command"]


async def cost_command(runtime: Runtime, console: Console) -> None:
    used = runtime.usage
    if not used:
        console.print("No tokens used yet in this session.")
        return
    prompt, completion = used.get("prompt_tokens", 0), used.get("completion_tokens", 0)
    console.print(
        f"This session: {prompt:,} prompt + {completion:,} completion = "
        f"{prompt + completion:,} tokens (as the provider reported them)"
    )


async def context_command(runtime: Runtime, console: Console) -> None:
    agent = runtime.agent
    if agent is None:
        console.print("No model configured.", style="yellow")
        return
    for line in context_lines(agent, runtime):
        console.print(line)


def context_lines(agent: Agent, runtime: Runtime) -> list[str]:
    """What fills the model's context window, by part, as `/context` shows it."""
    system = agent.messages[:1]
    history = agent.messages[1:]
    tools = [spec.openai_tool() for spec in runtime.toolbox.specs()]
    memory = runtime.memory.text() if runtime.memory is not None else ""
    parts = {
        "system prompt": estimate_tokens(system) - len(memory) // 4,
        "project memory": len(memory) // 4,
        f"tool definitions ({len(tools)})": estimate_tokens([], tools),
        f"conversation ({sum(1 for m in history if m['role'] == 'user')} turns)": (
            estimate_tokens(history)
        ),
    }
    total = sum(parts.values())
    window = agent.context_window
    lines = [f"Context: about {total:,} of {window:,} tokens ({100 * total // window}%)"]
    lines += [f"  {name:<28} {tokens:>9,}" for name, tokens in parts.items()]
    used = runtime.usage
    if used:
        lines.append(
            f"Usage so far: {used.get('prompt_tokens', 0):,} prompt and "
            f"{used.get('completion_tokens', 0):,} completion tokens"
        )
    return lines
