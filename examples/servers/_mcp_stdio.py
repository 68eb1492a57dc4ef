"""A tiny MCP stdio server core for the example servers, standard library only.

The main thread reads NDJSON JSON-RPC 2.0 from stdin and writes only protocol messages to
stdout (logs go to stderr). A `background` tool runs in its own thread, so cancellations are
read while it works; a cancelled one sends no result and logs `cancelled request <id>`.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
# A woken background tool returns at once; the bound only guards against a stuck one at exit.
JOIN_TIMEOUT = 1.0
_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "number": (int, float), "integer": int}


class RpcFault(Exception):
    """`RpcFault(code, message)`: answer the current request with this JSON-RPC error."""


class ToolFailure(Exception):
    """The tool could not do its job; the text goes back as an `isError` result."""


@dataclass
class Call:
    """One tools/call in flight: what a tool needs to report progress and notice cancellation."""

    id: Any
    server: Server
    progress_token: Any = None
    cancelled: threading.Event = field(default_factory=threading.Event)

    def progress(self, progress: float, total: float, message: str) -> None:
        """Send `notifications/progress`, if the client asked for it."""
        if self.progress_token is not None and not self.cancelled.is_set():
            params = {"progressToken": self.progress_token, "progress": progress, "total": total}
            self.server.notify("notifications/progress", {**params, "message": message})


@dataclass(frozen=True)
class Tool:
    """A tool: its flat JSON schema and a function from arguments to result text."""

    name: str
    description: str
    input_schema: Json
    run: Callable[[Json, Call], str]
    read_only: bool = False
    background: bool = False

    def describe(self) -> Json:
        hints = {"annotations": {"readOnlyHint": True}} if self.read_only else {}
        described = {"name": self.name, "description": self.description}
        return {**described, "inputSchema": self.input_schema, **hints}

    def argument_problem(self, arguments: Json) -> str | None:
        """The first way `arguments` break the schema (bounds come in pairs), or None."""
        properties: Json = self.input_schema["properties"]
        missing = [name for name in self.input_schema.get("required", []) if name not in arguments]
        if missing:
            return f"missing argument {missing[0]!r}"
        for name, value in arguments.items():
            if name not in properties:
                return f"unknown argument {name!r}"
            spec = properties[name]
            # bool is an int in Python, but never a JSON string or number.
            if isinstance(value, bool) or not isinstance(value, _TYPES[spec["type"]]):
                return f"{name!r} must be a {spec['type']}"
            if value < spec.get("minimum", value) or value > spec.get("maximum", value):
                return f"{name!r} must be between {spec['minimum']} and {spec['maximum']}"
        return None


class Server:
    """Dispatch JSON-RPC requests to tools and to the handlers in `methods`."""

    def __init__(self, name: str, version: str, *, capabilities: Json, instructions: str) -> None:
        self.info: Json = {"name": name, "version": version}
        self.capabilities: Json = {"tools": {"listChanged": False}, **capabilities}
        self.instructions = instructions
        self.tools: dict[str, Tool] = {}
        self.methods: dict[str, Callable[[Json], Json]] = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": [t.describe() for t in self.tools.values()]},
        }
        self._lock = threading.Lock()  # guards stdout and _running
        self._running: dict[Any, tuple[Call, threading.Thread]] = {}

    def add_tools(self, *tools: Tool) -> None:
        self.tools.update((tool.name, tool) for tool in tools)

    def send(self, message: Json) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            sys.stdout.buffer.write(line.encode() + b"\n")
            sys.stdout.buffer.flush()

    def notify(self, method: str, params: Json | None = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def serve(self) -> None:
        """Answer requests until stdin closes, then stop background calls (bounded)."""
        print(f"{self.info['name']}: ready", file=sys.stderr, flush=True)
        for line in sys.stdin.buffer:  # bytes: JSON is UTF-8 whatever the locale says
            if line.strip():
                self._handle(line)
        with self._lock:
            running = list(self._running.values())
        for call, thread in running:
            call.cancelled.set()
            thread.join(JOIN_TIMEOUT)

    def _handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.send({"id": None, "error": {"code": PARSE_ERROR, "message": "invalid JSON"}})
            return
        # Batches (2025-03-26 only) are not supported; paicli never sends them.
        if not isinstance(message, dict) or not isinstance(message.get("method", ""), str):
            self.send({"id": None, "error": {"code": INVALID_REQUEST, "message": "bad message"}})
            return
        method, params = message.get("method"), message.get("params") or {}
        # Responses (we never ask anything) and notifications but cancellation need nothing.
        if method is None or "id" not in message:
            if method == "notifications/cancelled" and isinstance(params, dict):
                self._cancel(params.get("requestId"))
            return
        try:
            if not isinstance(params, dict):
                raise RpcFault(INVALID_PARAMS, "params must be an object")
            if method == "tools/call":
                self._call_tool(message["id"], params)
                return
            if method not in self.methods:
                raise RpcFault(METHOD_NOT_FOUND, f"method not found: {method}")
            self.send({"id": message["id"], "result": self.methods[method](params)})
        except RpcFault as fault:
            code, text = fault.args
            self.send({"id": message["id"], "error": {"code": code, "message": text}})

    def _initialize(self, params: Json) -> Json:
        offered = params.get("protocolVersion")
        version = offered if offered in SUPPORTED_VERSIONS else LATEST_VERSION
        result = {"protocolVersion": version, "capabilities": self.capabilities}
        return {**result, "serverInfo": self.info, "instructions": self.instructions}

    def _call_tool(self, request_id: Any, params: Json) -> None:
        tool, arguments = self.tools.get(params.get("name", "")), params.get("arguments", {})
        if tool is None:
            raise RpcFault(INVALID_PARAMS, f"unknown tool: {params.get('name')!r}")
        if not isinstance(arguments, dict):
            raise RpcFault(INVALID_PARAMS, "arguments must be an object")
        meta = params.get("_meta")
        call = Call(request_id, self, meta.get("progressToken") if isinstance(meta, dict) else None)
        if not tool.background:
            self._finish(call, tool, arguments)
            return
        thread = threading.Thread(target=self._finish, args=(call, tool, arguments), daemon=True)
        with self._lock:
            self._running[request_id] = (call, thread)
        thread.start()

    def _finish(self, call: Call, tool: Tool, arguments: Json) -> None:
        try:
            if (problem := tool.argument_problem(arguments)) is not None:
                raise ToolFailure(problem)
            text, is_error = tool.run(arguments, call), False
        except ToolFailure as exc:
            text, is_error = str(exc), True
        except Exception as exc:
            traceback.print_exc()
            text, is_error = f"{tool.name} failed: {exc}", True
        with self._lock:
            self._running.pop(call.id, None)
        if call.cancelled.is_set():
            print(f"cancelled request {call.id}", file=sys.stderr, flush=True)
            return
        result = {"content": [{"type": "text", "text": text}], "isError": is_error}
        self.send({"id": call.id, "result": result})

    def _cancel(self, request_id: Any) -> None:
        # Under the lock, so a call either sees the flag before it replies or is already gone.
        with self._lock:
            if request_id in self._running:
                self._running[request_id][0].cancelled.set()
