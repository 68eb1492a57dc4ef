"""The model client of a run: the openai SDK loaded on first use, metered when
`--metrics-port` is on, and every request without the secrets the run knows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from paicli.llm.deferred import DeferredClient, StreamingClient
from paicli.llm.errors import LlmError
from paicli.llm.settings import ModelSettings
from paicli.observe import metrics
from paicli.redact import Redactor
from paicli.tools.redacting import RedactingModel

if TYPE_CHECKING:
    from paicli.llm.client import HttpClient

__all__ = ["model_client"]


def model_client(
    settings: ModelSettings,
    http_client: HttpClient | None,
    redactor: Redactor,
    on_answer: Callable[[], object] | None = None,
) -> DeferredClient:
    """The model client for `settings`, the openai SDK loaded on first use (or `load()`),
    every request without the secrets `redactor` knows. `on_answer` is called once a request
    has been answered (see `LlmClient`)."""
    if not settings.base_url or not settings.model:
        raise LlmError(settings.why_not_configured())  # at startup, as LlmClient would
    metered = metrics.active()  # --metrics-port: tokens and latency measured

    def build() -> StreamingClient:
        from paicli.llm.client import LlmClient  # noqa: PLC0415 - openai loads only when needed

        client = LlmClient(settings, http_client=http_client, on_answer=on_answer)
        return RedactingModel(client if metered is None else metered.model(client), redactor)

    return DeferredClient(build)
