"""The `Agent` tool (Claude Code's, formerly `Task`): the model hands a self-contained task to
a sub-agent, which works in a conversation of its own, with its own system prompt, on a part
of the main agent's tools, and answers with one report: the tool's result.

A sub-agent calls its tools through the run's whole toolbox (audit, redaction, approval,
sandbox: whatever wraps the main agent's calls wraps its calls), with `tools.base.SUBAGENT`
set, so that the approval question and the audit record name it and the approving wrapper
refuses a tool it was not given. It is offered only tools its definition allows among the
main agent's own, never `Agent` itself (one level of sub-agents), and works in the run's
permission mode. It runs inside the call's own task: cancelling the turn (Ctrl+C) cancels it
and its tool calls, and nothing of it outlives the call. Its events reach the UI wrapped in
`SubAgentEvent`s of the call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

from paicli.agent.events import CALL_EVENTS, AgentEvent, SubAgentEvent, ToolStarted, TurnEnded
from paicli.agent.loop import DEFAULT_MAX_STEPS, Agent, ModelClient
from paicli.llm.errors import LlmError
from paicli.subagents.definitions import (
    AGENT_TOOL,
    DEFAULT_AGENT,
    AgentCatalog,
    AgentDefinition,
)
from paicli.tools.base import (
    PROGRESS,
    SUBAGENT,
    ProgressUpdate,
    SubAgentScope,
    Toolbox,
    ToolboxWrapper,
    ToolOutcome,
    ToolSpec,
)

__all__ = ["AGENT_TOOL", "SubAgentHost", "SubAgentToolbox"]

# The report is read by the main agent's model: as much as a long tool result, no more.
MAX_REPORT_CHARS = 30_000
# Each agent's description in the tool's own: enough for Claude Code's long ones with examples.
MAX_DESCRIPTION_CHARS = 1_000

_NOTE = """You are the sub-agent "{name}" of paicli, working in {root}. The main agent gave you \
the task in the user's message. It sees nothing of your work but your final answer: end with \
a complete, self-contained report of what you found or did (files, commands, results). You \
cannot ask the user anything; say in your report what remains unclear."""


class SubAgentHost(Protocol):
    """What a sub-agent needs of the run: the model it runs on (`model_for(None)`: the main
    agent's; a name: that model or provider preset, opened for the one call), the context the
    system prompt adds (memory, servers' instructions, the mode's note), the step limit, and
    where its token counts are added."""

    root: Path

    def model_for(self, name: str | None) -> AbstractAsyncContextManager[tuple[ModelClient, int]]:
        """The client and its context window; `LlmError` when the model cannot be used."""
        ...

    def context(self) -> str: ...

    def max_steps(self) -> int | None: ...

    def add_usage(self, usage: Mapping[str, int]) -> None: ...

    def withheld(self, spec: ToolSpec) -> bool:
        """Whether the run's rules deny every call of `spec`: no sub-agent is offered it."""
        ...


class SubAgentToolbox:
    """The `Agent` tool over the sub-agents of `catalog`; it has no tool to offer until
    `serve` gives it the run's toolbox."""

    def __init__(self, catalog: AgentCatalog, host: SubAgentHost) -> None:
        self.catalog = catalog
        self._host = host
        self._tools: Toolbox | None = None
        self._spec = _spec(catalog)

    def serve(self, toolbox: Toolbox) -> None:
        """Let sub-agents call through `toolbox`: the run's whole stack, this tool inside it."""
        self._tools = toolbox

    def specs(self) -> list[ToolSpec]:
        return [] if self._tools is None else [self._spec]

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        if SUBAGENT.get() is not None:
            return ToolOutcome.refused("A sub-agent cannot start another sub-agent.")
        prompt, kind = arguments.get("prompt"), arguments.get("subagent_type")
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolOutcome.refused("Give the sub-agent its task in `prompt`.")
        if kind is not None and kind not in self.catalog.agents:
            names = ", ".join(self.catalog.agents)
            return ToolOutcome.refused(f"There is no agent {kind!r}; the agents are: {names}.")
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        refused = self.precheck(spec, arguments)
        if refused is not None or self._tools is None:
            return refused or ToolOutcome("Error: sub-agents are not available.", True)
        kind = arguments.get("subagent_type")
        definition = self.catalog.agents[kind if isinstance(kind, str) else DEFAULT_AGENT]
        tools = _Given(self._tools, definition, self._host.withheld)
        if definition.tools is not None and not tools.specs():
            wanted = ", ".join(definition.tools) or "none"
            return ToolOutcome(
                f"Error: the agent {definition.name} was given none of the tools it lists "
                f"({wanted}) that are available here.",
                True,
            )
        token = SUBAGENT.set(SubAgentScope(definition.name, definition.allows))
        try:
            ended = await self._run(definition, tools, str(arguments["prompt"]))
        except LlmError as exc:
            return ToolOutcome(f"Error: the agent {definition.name} could not run: {exc}", True)
        finally:
            SUBAGENT.reset(token)
        self._host.add_usage(ended.usage)
        return _report(definition, ended)

    async def _run(self, definition: AgentDefinition, tools: Toolbox, prompt: str) -> TurnEnded:
        host = self._host
        system = "\n\n".join(
            part
            for part in (definition.prompt, _NOTE.format(name=definition.name, root=host.root))
            if part
        )
        emit = _forward(definition.name)
        async with host.model_for(definition.model) as (llm, window):
            agent = Agent(
                llm,
                tools,
                system_prompt=system,
                context_window=window,
                max_steps=definition.max_steps or host.max_steps() or DEFAULT_MAX_STEPS,
                context=host.context,
            )
            return await agent.run(prompt, emit)


class _Given(ToolboxWrapper):
    """The run's toolbox as a sub-agent sees it: only the tools its definition allows and
    the run's rules do not deny outright (the approving wrapper refuses a call of any
    other, or denies it)."""

    def __init__(
        self, inner: Toolbox, definition: AgentDefinition, withheld: Callable[[ToolSpec], bool]
    ) -> None:
        super().__init__(inner)
        self._definition = definition
        self._withheld = withheld

    def specs(self) -> list[ToolSpec]:
        return [
            spec
            for spec in self._inner.specs()
            if self._definition.allows(spec.name) and not self._withheld(spec)
        ]


def _forward(name: str) -> Callable[[AgentEvent], None]:
    """The sub-agent's event sink: each event goes to the main agent's call, wrapped, and
    each tool it starts to the call's progress line."""
    events, progress = CALL_EVENTS.get(), PROGRESS.get()

    def emit(event: AgentEvent) -> None:
        if events is not None:
            events.emit(SubAgentEvent(events.call_id, name, event))
        if progress is not None and isinstance(event, ToolStarted):
            progress(ProgressUpdate(message=f"{name}: {event.name}"))

    return emit


def _report(definition: AgentDefinition, ended: TurnEnded) -> ToolOutcome:
    name = definition.name
    if ended.reason == "error":
        return ToolOutcome(f"Error: the agent {name} failed: {ended.error}", True)
    text = ended.text.strip() or f"(The agent {name} finished without a report.)"
    if ended.reason == "step_budget":
        text += f"\n\n[The agent {name} stopped after {ended.steps} steps, its step limit.]"
    if len(text) > MAX_REPORT_CHARS:
        cut = len(text) - MAX_REPORT_CHARS
        text = f"{text[:MAX_REPORT_CHARS]}\n\n[The report was cut: {cut:,} more characters.]"
        return dataclasses.replace(ToolOutcome(text), truncated=True)
    return ToolOutcome(text)


def _spec(catalog: AgentCatalog) -> ToolSpec:
    listed = "\n".join(
        f"- {name}: {_cut(agent.description)}" for name, agent in catalog.agents.items()
    )
    return ToolSpec(
        name=AGENT_TOOL,
        description=(
            "Hand a self-contained task to a sub-agent. It works in a fresh conversation of "
            "its own, with its own instructions and a set of your tools, and answers with one "
            "report, the only part of its work you see. Give it everything it needs in "
            "`prompt` (it does not see this conversation) and say what to report. Use it for "
            "searches and side tasks whose details would crowd your own context, or when an "
            "agent below fits the task. Run several at once by calling it several times in "
            f"one reply.\n\nAgents (subagent_type):\n{listed}"
        ),
        parameters={
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "A short (3-5 word) label of the task.",
                },
                "prompt": {"type": "string", "description": "The task, in full."},
                "subagent_type": {
                    "type": "string",
                    "enum": list(catalog.agents),
                    "description": f"Which agent does it (default {DEFAULT_AGENT}).",
                },
            },
            "required": ["description", "prompt"],
            "additionalProperties": False,
        },
        kind="read",  # it changes nothing itself: each call of its sub-agent is approved
    )


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_DESCRIPTION_CHARS else flat[: MAX_DESCRIPTION_CHARS - 1] + "…"
