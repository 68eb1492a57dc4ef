"""Client features: how the client answers a server's roots, sampling and elicitation asks.

The same `ClientHandlers` serve both eras: legacy servers send JSON-RPC requests, modern
(2026-07-28) servers send `inputRequests` inside an `input_required` result. A capability is
declared only when its handler is set; without one the server gets -32601.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import RpcError

if TYPE_CHECKING:
    from ._transport import Era
    from .types import Root

__all__ = ["ClientHandlers"]

Json = dict[str, Any]
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


@dataclass(frozen=True, slots=True)
class ClientHandlers:
    """Answers to server-initiated asks. Each handler takes the request params as sent.

    - `roots`: a fixed list of roots, or an async function returning one.
    - `sampling`: `sampling/createMessage` params -> a `CreateMessageResult` object.
    - `elicitation`: `elicitation/create` params (form mode) -> an `ElicitResult` object;
      on `accept`, schema defaults fill the fields the handler left out (SEP-1034).
    """

    roots: Sequence[Root] | Callable[[], Awaitable[Sequence[Root]]] | None = None
    sampling: Callable[[Json], Awaitable[Json]] | None = None
    elicitation: Callable[[Json], Awaitable[Json]] | None = None

    def capabilities(self, era: Era = "legacy") -> Json:
        """The `ClientCapabilities` object these handlers support. Legacy roots declare
        `listChanged` (`ClientSession.notify_roots_changed` sends the notice); 2026 removed
        the notice and its flag."""
        caps: Json = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True} if era == "legacy" else {}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}}
        return caps

    async def answer(self, method: str, params: Json | None) -> Json:
        """Answer one server ask, or raise the JSON-RPC error the server should get."""
        params = params or {}
        if method == "roots/list":
            return {"roots": [root.to_wire() for root in await self._roots()]}
        if method == "sampling/createMessage":
            if self.sampling is None:
                raise RpcError(METHOD_NOT_FOUND, "sampling is not supported by this client")
            return await self.sampling(params)
        if method == "elicitation/create":
            if self.elicitation is None:
                raise RpcError(METHOD_NOT_FOUND, "elicitation is not supported by this client")
            mode = params.get("mode", "form")
            if mode != "form":
                raise RpcError(INVALID_PARAMS, f"elicitation mode {mode!r} is not supported")
            return _with_defaults(await self.elicitation(params), params)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    async def _roots(self) -> Sequence[Root]:
        if self.roots is None:
            raise RpcError(METHOD_NOT_FOUND, "roots are not supported by this client")
        if callable(self.roots):
            return await self.roots()
        return self.roots


def _with_defaults(result: Json, params: Json) -> Json:
    """Fill schema defaults into accepted form content for fields the user left empty."""
    if result.get("action") != "accept":
        return result
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return result
    content = dict(result.get("content") or {})
    for name, prop in properties.items():
        if name not in content and isinstance(prop, dict) and "default" in prop:
            content[name] = prop["default"]
    return {**result, "content": content}
