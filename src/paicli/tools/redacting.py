"""`RedactingToolbox`: every tool result loses the secret values paicli knows before the model
reads it (the model key, server env and header values, secret-named variables of the
environment). A command's output, a file that quotes `.env`, a server that echoes its own
token: the value becomes `[REDACTED]`, the rest of the text stays as it was.

Only exact known values are replaced (`Redactor.redact_known`): redacting by shape would also
change files the model reads in order to edit them. The redactor is the run's shared one, so
a secret learned later (a new model key) is redacted from the next result on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from .base import Toolbox, ToolOutcome, ToolSpec
from .redact import Redactor

__all__ = ["RedactingToolbox"]


class RedactingToolbox:
    """`inner`, with the known secrets taken out of every outcome's text."""

    def __init__(self, inner: Toolbox, redactor: Redactor) -> None:
        self._inner = inner
        self._redactor = redactor

    def specs(self) -> list[ToolSpec]:
        return self._inner.specs()

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        outcome = self._inner.precheck(spec, arguments)
        return None if outcome is None else self._redacted(outcome)

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return self._inner.must_ask(spec, arguments)

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        return self._redacted(await self._inner.call(spec, arguments))

    def _redacted(self, outcome: ToolOutcome) -> ToolOutcome:
        text = self._redactor.redact_known(outcome.text)
        return outcome if text == outcome.text else dataclasses.replace(outcome, text=text)
