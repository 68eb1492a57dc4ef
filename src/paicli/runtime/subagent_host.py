"""What a run gives its sub-agents (`subagents.toolbox.SubAgentHost`): the model, the system
prompt's context, the step limit, the token count. Made before the `Runtime` it reads (the
toolbox that holds it is built first) and bound to it once it exists, before any turn runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.agent.loop import ModelClient
from paicli.llm.errors import LlmError
from paicli.llm.settings import switch_model
from paicli.runtime.model import model_client
from paicli.tools.base import ToolSpec

if TYPE_CHECKING:
    from paicli.runtime.run import Runtime

__all__ = ["RunHost"]


class RunHost:
    """The run's side of its sub-agents."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._runtime: Runtime | None = None

    def bind(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def _run(self) -> Runtime:
        if self._runtime is None:
            raise LlmError("the run is not ready for sub-agents yet")
        return self._runtime

    @contextlib.asynccontextmanager
    async def model_for(self, name: str | None) -> AsyncIterator[tuple[ModelClient, int]]:
        """The main agent's model (None), or the model or provider preset `name`, with a
        client of its own for this call (its key learnt as a secret first)."""
        runtime = self._run()
        if name is None:
            if runtime.agent is None:
                raise LlmError(runtime.settings.why_not_configured())
            yield runtime.agent.llm, runtime.agent.context_window
            return
        settings = switch_model(runtime.settings, name, runtime.environ, runtime.user_config)
        if not settings.configured:
            raise LlmError(f"its model {name} is not usable: {settings.why_not_configured()}")
        if settings.api_key:
            runtime.redactor.learn([settings.api_key])
        client = model_client(settings, runtime.http_client, runtime.redactor)
        try:
            yield client, settings.context_window
        finally:
            await client.aclose()

    def context(self) -> str:
        return self._runtime.context() if self._runtime is not None else ""

    def max_steps(self) -> int | None:
        return self._runtime.max_steps if self._runtime is not None else None

    def withheld(self, spec: ToolSpec) -> bool:
        return self._runtime is not None and self._runtime.approvals.withheld(spec)

    def add_usage(self, usage: Mapping[str, int]) -> None:
        if self._runtime is not None:
            self._runtime.add_usage(usage)
