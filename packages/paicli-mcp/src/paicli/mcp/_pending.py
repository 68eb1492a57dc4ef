"""One request of ours awaiting its answer, and how an answer's error becomes an exception.

A `Pending` entry lives in the engine's id map from the moment the request is made until
its caller has its result: the future the answer settles, the deadline the engine's single
timer checks, and the progress callback that may push that deadline on (never past its
cap).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._transport import JsonObject
from .errors import RpcError, UnsupportedVersion

__all__ = [
    "INTERNAL_ERROR",
    "Pending",
    "Progress",
    "ProgressCallback",
    "error_from_wire",
]

INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022


@dataclass(frozen=True, slots=True)
class Progress:
    """One `notifications/progress` update for a request."""

    progress: float
    total: float | None
    message: str | None


ProgressCallback = Callable[[Progress], object]


class Pending:
    """A request sent and not yet answered (mutable: the engine updates it in place)."""

    __slots__ = (
        "any_result",
        "deadline",
        "deadline_cap",
        "expired",
        "future",
        "method",
        "on_progress",
        "sender",
        "sent_at",
        "timeout",
    )

    def __init__(
        self,
        future: asyncio.Future[JsonObject],
        method: str,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.future = future
        self.method = method
        self.on_progress = on_progress
        # Absolute loop time at which the request expires (inf: never).
        self.deadline = math.inf
        self.timeout = 0.0
        self.sent_at = 0.0  # loop time the request was made, for how long it ran
        # Absolute loop time past which progress can no longer extend the deadline;
        # None when progress does not extend it at all.
        self.deadline_cap: float | None = None
        # With a transport that sends inline, the task still inside `send()` (see
        # RpcEngine.request).
        self.sender: asyncio.Task[Any] | None = None
        self.expired = False
        # The result may be any JSON value (a minimal-dialect tool's answer); it is handed
        # back wrapped as `{"value": result}`.
        self.any_result = False


def error_from_wire(error: Any) -> RpcError:
    """Translate a JSON-RPC error object into a typed exception."""
    if not isinstance(error, dict):
        return RpcError(INTERNAL_ERROR, f"malformed error object: {error!r:.200}")
    code = error.get("code")
    message = error.get("message")
    if not isinstance(code, int):
        code = INTERNAL_ERROR
    if not isinstance(message, str):
        message = "(no message)"
    cls = UnsupportedVersion if code == UNSUPPORTED_PROTOCOL_VERSION else RpcError
    return cls(code, message, error.get("data"))
