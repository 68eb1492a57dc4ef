"""The model layer: which model to talk to (`settings`), a streaming client for it, the
conversation it reads (`messages`: typed chat-completions messages) and tool schemas cleaned
for each provider (`schema`).

`paicli.llm` itself never loads the openai SDK: import `LlmClient` from `paicli.llm.client`
where a model is actually called, so commands that never talk to a model start quickly.
"""

from __future__ import annotations

from paicli.llm.errors import (
    AuthenticationFailed,
    EndpointUnreachable,
    LlmError,
    ModelNotFound,
    RequestRejected,
    ServiceUnavailable,
)
from paicli.llm.events import (
    Completion,
    ReasoningDelta,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from paicli.llm.presets import PRESETS, Preset
from paicli.llm.settings import ModelSettings, resolve_settings, switch_model

__all__ = [
    "PRESETS",
    "AuthenticationFailed",
    "Completion",
    "EndpointUnreachable",
    "LlmError",
    "ModelNotFound",
    "ModelSettings",
    "Preset",
    "ReasoningDelta",
    "RequestRejected",
    "Retrying",
    "ServiceUnavailable",
    "StreamEvent",
    "TextDelta",
    "ToolCallRequest",
    "Usage",
    "resolve_settings",
    "switch_model",
]
