"""What reaches the model loses the secret values paicli knows (the model key, server env and
header values, secret-named variables of the environment, values of secret files the user let
a tool read, secrets typed into a server's form).

`RedactingToolbox` takes them out of every tool result: a command's output, a file that quotes
`.env`, a server that echoes its own token; the value becomes `[REDACTED]`, the rest of the text
stays as it was. `RedactingModel` takes them out of every request the model client sends (the
system prompt with server instructions and memory files, the user's text, a resumed session,
tool definitions), so nothing reaches the model provider around the tool results.

Only exact known values are replaced (`Redactor.redact_known`): redacting by shape would also
change files the model reads in order to edit them. The redactor is the run's shared one, so
a secret learned later (a new model key, a `.env` read) is redacted from the next result and
request on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Mapping, Sequence

from paicli.llm.deferred import StreamingClient
from paicli.llm.messages import Message, ToolDefinition
from paicli.redact import Redactor
from paicli.tools.base import Toolbox, ToolboxWrapper, ToolOutcome, ToolSpec

__all__ = ["RedactingModel", "RedactingToolbox"]


class RedactingToolbox(ToolboxWrapper):
    """`inner`, with the known secrets taken out of every outcome's text."""

    def __init__(self, inner: Toolbox, redactor: Redactor) -> None:
        super().__init__(inner)
        self._redactor = redactor

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        outcome = self._inner.precheck(spec, arguments)
        return None if outcome is None else self._redacted(outcome)

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        return self._redacted(await self._inner.call(spec, arguments))

    def _redacted(self, outcome: ToolOutcome) -> ToolOutcome:
        text = self._redactor.redact_known(outcome.text)
        return outcome if text == outcome.text else dataclasses.replace(outcome, text=text)


class RedactingModel:
    """The model client `inner`, sent every request with the known secrets taken out."""

    def __init__(self, inner: StreamingClient, redactor: Redactor) -> None:
        self._inner = inner
        self._redactor = redactor

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncGenerator[object, None]:
        redact = self._redactor.redact_known_in
        return self._inner.stream(redact(list(messages)), redact(list(tools)))

    async def aclose(self) -> None:
        await self._inner.aclose()
