"""What a recorded server would answer: the logic of `paicli mcp replay` (no I/O here).

A client's request is matched to the recording's requests of the same method (and tool,
prompt or resource), in order: the first one not yet replayed whose params are equal (their
`_meta` aside: progress tokens and trace context differ from run to run), else the first
one not yet replayed (an `initialize` from another client, a redacted argument). Its recorded
response is sent back under the new request's id; a request the recording never saw
answered (it timed out) gets no answer, as it did then; one the recording does not have
gets a JSON-RPC error saying so. Notifications and the client's answers need no reply.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from paicli.servers.traces import Exchange, Record, label_of, pair

__all__ = ["NOT_RECORDED", "Replay"]

NOT_RECORDED = -32601  # "method not found": what a server says of a request it cannot serve


def _params(message: dict[str, Any]) -> object:
    params = message.get("params")
    if isinstance(params, dict):
        return {k: v for k, v in params.items() if k != "_meta"}
    return params


class Replay:
    """Answers requests from the client requests (`out`) of `records` and their replies."""

    def __init__(self, records: Iterable[Record]) -> None:
        exchanges, _ = pair(records)
        self._waiting: dict[str, list[Exchange]] = {}
        for exchange in exchanges:
            if not exchange.from_server:
                self._waiting.setdefault(exchange.label, []).append(exchange)

    def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The reply to one message from the client (None: nothing to send)."""
        if "method" not in message or "id" not in message:
            return None
        label = label_of(message)
        found = self._take(self._waiting.get(label, []), _params(message))
        if found is None:
            return {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {
                    "code": NOT_RECORDED,
                    "message": f"replay: the recording has no more {label!r} requests",
                },
            }
        reply = found.reply.message if found.reply is not None else None
        if reply is None:
            return None  # never answered in the recording (a timeout): not now either
        answer = {"jsonrpc": "2.0", "id": message["id"]}
        for key in ("result", "error"):
            if key in reply:
                answer[key] = reply[key]
        return answer

    @staticmethod
    def _take(queue: list[Exchange], params: object) -> Exchange | None:
        for index, exchange in enumerate(queue):
            sent = exchange.sent.message
            if sent is not None and _params(sent) == params:
                return queue.pop(index)
        return queue.pop(0) if queue else None
