"""A scripted OpenAI-compatible chat completions server for tests (stdlib + aiohttp only).

The script is a list of replies, consumed in order, one per `POST /v1/chat/completions`.
Each reply is a dict; every key is optional:

    text          str    the answer, streamed a word per chunk
    reasoning     str    thinking text, streamed before `text` as `reasoning_content`
    reasoning_field str  the delta field used for `reasoning` (default "reasoning_content";
                         Ollama and OpenRouter use "reasoning")
    tool_calls    list   [{"name": "read_file", "arguments": "{\"path\": \"a.txt\"}",
                           "id": "call_1" (optional)}]; arguments are sent verbatim (they may
                         be malformed on purpose), split across several chunks, with index,
                         id, type and name only on each call's first chunk
    finish_reason str    default "tool_calls" when there are tool calls, else "stop"
    usage         dict   {"prompt_tokens": 10, "completion_tokens": 5} (these defaults);
                         sent as a last chunk only when the request asks with stream_options
    chunk_delay   float  seconds between chunks (default 0)
    status        int    answer this HTTP error instead, with an OpenAI-style error body
    error         dict   that body's error: {"message": "...", "code": "model_not_found",
                         "type": "..."}; a message is made up when absent
    retry_after   float  a Retry-After header (seconds) on the error
    hang          bool   send the first chunk, then nothing until the client goes away
                         (`disconnected` is set when it does)
    disconnect    str    "before": drop the connection without answering; "midway": drop
                         it after the first text chunk
    after         Event  (in process only) an `asyncio.Event`: the headers go at once (the
                         client's answer has begun), the chunks once it is set
    unstreamed    bool | dict  answer a `stream: true` request as an endpoint that ignores
                         streaming does: true, one JSON `chat.completion` of this reply; a
                         dict, that JSON body as it is
    empty         bool   a stream of no chunks at all (only `[DONE]`)

Requests without `"stream": true` get one JSON `chat.completion` instead. When the script
runs out, every further request gets a 500 saying so (with Retry-After: 0, so a retrying
client fails fast and loudly). `GET /v1/models` lists the one model.

The script engine (`LlmScript`) is shared by three ways to run it:

    async with ScriptedLlm([{"text": "Hello"}]) as llm:   # aiohttp on 127.0.0.1
        llm.base_url     # "http://127.0.0.1:PORT/v1"
        llm.requests     # the JSON bodies received, in order

    async with MemoryLlm([{"text": "Hello"}]) as llm:     # tests/llm_memory.py: no socket
        llm.http_client()  # an httpx2.AsyncClient (what openai runs on) answered in memory

    python tests/llm_server.py --script script.json --port-file PATH [--requests-file PATH]

The subprocess writes its port to `--port-file` once listening (atomically), prints
`LISTENING <base url>` (the line `tests/http_servers.run_http_server` waits for), appends each
request body as a JSON line to `--requests-file`, and runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from aiohttp import web

if TYPE_CHECKING:
    import httpx2

Json = dict[str, Any]

HOST = "127.0.0.1"
DEFAULT_MODEL = "scripted-model"
REPLY_KEYS = frozenset(
    {
        "text",
        "reasoning",
        "reasoning_field",
        "tool_calls",
        "finish_reason",
        "usage",
        "chunk_delay",
        "status",
        "error",
        "retry_after",
        "hang",
        "disconnect",
        "after",
        "unstreamed",
        "empty",
    }
)
DEFAULT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5}
# Arguments are cut into this many pieces, so clients must join fragments.
ARGUMENT_PIECES = 3
# A hung stream still open when the server closes is released; this bounds the wait for
# its handler to finish (it only has to notice the release).
SHUTDOWN_TIMEOUT = 2.0


class Dropped(Exception):
    """The script drops the connection here (`disconnect`)."""


@dataclass(frozen=True)
class Reply:
    """What the script answers one request; an adapter puts it on its own wire."""

    kind: Literal["json", "stream", "drop"]  # drop: close the connection, answer nothing
    status: int = 200
    body: Json | None = None  # json: an error or an unstreamed completion
    headers: Mapping[str, str] = field(default_factory=dict)
    chunks: tuple[Json, ...] = ()  # stream: the chunks, the usage chunk included
    chunk_delay: float = 0.0
    hang: bool = False  # json: answer once the client is gone; stream: stop after one text chunk
    drop_midway: bool = False  # stream: close the connection after the first text chunk
    after: asyncio.Event | None = None  # stream: no chunk before it is set


class LlmScript:
    """The script engine both adapters share: validates and records requests, decides each
    reply, paces streamed chunks, and notices a client that goes away."""

    def __init__(
        self,
        script: Sequence[Mapping[str, Any]],
        *,
        model: str = DEFAULT_MODEL,
        requests_file: Path | None = None,
    ) -> None:
        self.script: list[Json] = [dict(reply) for reply in script]
        self.model = model
        # What `GET /v1/models` lists (default: the one model), or, when set, the answer
        # it gets instead: (status, body as text), for an endpoint without a usable list.
        self.model_ids: list[str] = [model]
        self.models_answer: tuple[int, str] | None = None
        self.requests: list[Json] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.disconnected = asyncio.Event()  # a hung or streaming client went away
        self._requests_file = requests_file
        self._next = 0
        self._closed = False
        self._waiting: set[asyncio.Event] = set()  # released when the script closes
        self._arrived = asyncio.Event()  # set by each request

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    @property
    def remaining(self) -> int:
        """Replies not yet consumed."""
        return len(self.script) - self._next

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Nothing to start: an adapter that listens somewhere overrides this."""

    async def aclose(self) -> None:
        """Release every wait for a client (a hung reply ends)."""
        self._closed = True
        for gone in self._waiting:
            gone.set()

    def http_client(self) -> httpx2.AsyncClient | None:
        """The HTTP client that reaches this script; None: the SDK's own, over a socket."""
        return None

    def models(self) -> Json:
        """The `GET /v1/models` body: `model_ids` (by default the one model)."""
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "paicli-tests"}
            for name in self.model_ids
        ]
        return {"object": "list", "data": data}

    def reply_to(self, raw: bytes, authorization: str | None) -> Reply:
        """The reply to one `POST /v1/chat/completions` with body `raw`."""
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "request body needs a `messages` list")
        if not isinstance(body.get("model"), str) or not body["model"]:
            return _error(400, "request body needs a `model`")
        self.requests.append(body)
        self.authorizations.append(authorization)
        self._arrived.set()
        if self._requests_file is not None:
            with self._requests_file.open("a", encoding="utf-8") as file:
                file.write(json.dumps(body) + "\n")
        if self._next >= len(self.script):
            return _error(
                500,
                f"scripted LLM: script exhausted after {len(self.script)} replies "
                f"(this is request {len(self.requests)})",
                retry_after=0.0,
            )
        reply = self.script[self._next]
        self._next += 1
        unknown = set(reply) - REPLY_KEYS
        if unknown:
            return _error(500, f"scripted LLM: unknown reply keys {sorted(unknown)}")
        return _answer(body, reply)

    async def frames(self, reply: Reply, gone: asyncio.Event | None = None) -> AsyncIterator[bytes]:
        """A streamed reply's bytes, one server-sent event per chunk, `chunk_delay` apart.
        Raises `Dropped` where the script drops the connection; a hanging reply stops after
        its first text chunk once the client is gone (`gone` set, or this task cancelled)."""
        try:
            if reply.after is not None:
                await reply.after.wait()
            for number, chunk in enumerate(reply.chunks):
                if number and reply.chunk_delay:
                    await asyncio.sleep(reply.chunk_delay)
                yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
                if number == 1 and reply.drop_midway:
                    self.disconnected.set()
                    raise Dropped
                if number == 1 and reply.hang:
                    await self.wait_for_disconnect(gone)
                    return
            yield b"data: [DONE]\n\n"
        except asyncio.CancelledError:
            self.disconnected.set()
            raise

    async def wait_for_requests(self, count: int) -> None:
        """Until `count` requests have arrived."""
        while len(self.requests) < count:
            self._arrived.clear()
            await self._arrived.wait()

    async def wait_for_disconnect(self, gone: asyncio.Event | None = None) -> None:
        """Until the client goes away (`gone` is set or this task is cancelled) or the
        script closes."""
        gone = gone or asyncio.Event()
        self._waiting.add(gone)
        try:
            if not self._closed:
                await gone.wait()
            if not self._closed:
                self.disconnected.set()
        except asyncio.CancelledError:
            self.disconnected.set()
            raise
        finally:
            self._waiting.discard(gone)


class ScriptedLlm(LlmScript):
    """The script served by aiohttp on 127.0.0.1. `async with` starts it on a free port and
    stops it."""

    def __init__(
        self,
        script: Sequence[Mapping[str, Any]],
        *,
        model: str = DEFAULT_MODEL,
        port: int = 0,
        requests_file: Path | None = None,
    ) -> None:
        super().__init__(script, model=model, requests_file=requests_file)
        self.port = port
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        # handler_cancellation: a client that goes away cancels its handler, which is how
        # a hung stream learns of the disconnect.
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, HOST, self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def aclose(self) -> None:
        await super().aclose()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _models(self, request: web.Request) -> web.Response:
        if self.models_answer is not None:
            status, text = self.models_answer
            return web.Response(status=status, text=text, content_type="text/html")
        return web.json_response(self.models())

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        reply = self.reply_to(await request.read(), request.headers.get("Authorization"))
        if reply.kind == "drop":
            return await self._drop(request)
        if reply.kind == "json":
            if reply.hang:
                await self.wait_for_disconnect()
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            async for frame in self.frames(reply):
                await response.write(frame)
        except Dropped:
            return await self._drop(request)
        except (ConnectionResetError, asyncio.CancelledError):
            self.disconnected.set()
            raise
        await response.write_eof()
        return response

    async def _drop(self, request: web.Request) -> web.StreamResponse:
        """Close the connection under the client (after flushing what was written), then
        wait to be cancelled for it."""
        assert request.transport is not None
        request.transport.close()
        await self.wait_for_disconnect()
        return web.Response(status=500)  # only when the server closes first; never sent


def _answer(body: Json, reply: Json) -> Reply:
    if reply.get("disconnect") == "before":
        return Reply("drop")
    if "status" in reply:
        error = dict(reply.get("error") or {})
        error.setdefault("message", f"scripted HTTP {reply['status']}")
        return _error(
            int(reply["status"]),
            str(error["message"]),
            code=error.get("code"),
            error_type=str(error.get("type", "scripted_error")),
            retry_after=reply.get("retry_after"),
        )
    model = str(body["model"])
    hang = bool(reply.get("hang"))
    unstreamed = reply.get("unstreamed")
    if isinstance(unstreamed, dict):
        return Reply("json", body=unstreamed)
    if not body.get("stream") or unstreamed:
        return Reply("json", body=_completion(reply, model), hang=hang)
    if reply.get("empty"):
        return Reply("stream")
    chunks = _chunks(reply, model)
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        chunks.append({**_chunk_base(chunks[0]), "choices": [], "usage": _usage(reply)})
    return Reply(
        "stream",
        chunks=tuple(chunks),
        chunk_delay=float(reply.get("chunk_delay", 0.0)),
        hang=hang,
        drop_midway=reply.get("disconnect") == "midway",
        after=reply.get("after"),
    )


def _chunks(reply: Json, model: str) -> list[Json]:
    """The `chat.completion.chunk`s of a streamed reply, without the usage chunk."""
    base = {
        "id": f"chatcmpl-scripted-{time.monotonic_ns()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    deltas: list[Json] = [{"role": "assistant", "content": ""}]
    field = str(reply.get("reasoning_field", "reasoning_content"))
    deltas += [{field: piece} for piece in _words(str(reply.get("reasoning", "")))]
    deltas += [{"content": piece} for piece in _words(str(reply.get("text", "")))]
    for index, call in enumerate(reply.get("tool_calls") or ()):
        arguments = str(call.get("arguments", "{}"))
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": str(call.get("id", f"call_{index}")),
                        "type": "function",
                        "function": {"name": str(call["name"]), "arguments": ""},
                    }
                ]
            }
        )
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            for piece in _pieces(arguments, ARGUMENT_PIECES)
        ]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        for delta in deltas
    ]
    finish = {"index": 0, "delta": {}, "finish_reason": _finish_reason(reply)}
    chunks.append({**base, "choices": [finish]})
    return chunks


def _completion(reply: Json, model: str) -> Json:
    """The one `chat.completion` answering a request without `stream`."""
    message: Json = {"role": "assistant", "content": reply.get("text") or None}
    if reply.get("reasoning"):
        message[str(reply.get("reasoning_field", "reasoning_content"))] = reply["reasoning"]
    calls = reply.get("tool_calls") or ()
    if calls:
        message["tool_calls"] = [
            {
                "id": str(call.get("id", f"call_{index}")),
                "type": "function",
                "function": {"name": call["name"], "arguments": str(call.get("arguments", "{}"))},
            }
            for index, call in enumerate(calls)
        ]
    return {
        "id": f"chatcmpl-scripted-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": _usage(reply),
    }


def _chunk_base(chunk: Json) -> Json:
    return {key: chunk[key] for key in ("id", "object", "created", "model")}


def _finish_reason(reply: Json) -> str:
    default = "tool_calls" if reply.get("tool_calls") else "stop"
    return str(reply.get("finish_reason", default))


def _usage(reply: Json) -> Json:
    usage = {**DEFAULT_USAGE, **(reply.get("usage") or {})}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _words(text: str) -> list[str]:
    """ "Hello there, world" -> ["Hello ", "there, ", "world"]: a chunk per word."""
    return re.findall(r"\s*\S+\s*|\s+", text)


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    error_type: str = "scripted_error",
    retry_after: float | None = None,
) -> Reply:
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return Reply("json", status=status, body=body, headers=headers)


async def _serve(args: argparse.Namespace, script: list[Json]) -> None:
    requests_file = Path(args.requests_file) if args.requests_file else None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with ScriptedLlm(
        script, model=args.model, port=args.port, requests_file=requests_file
    ) as llm:
        if args.port_file:
            # Write then rename, so a reader never sees a half-written port.
            port_file = Path(args.port_file)
            partial = port_file.with_name(port_file.name + ".partial")
            partial.write_text(str(llm.port), encoding="utf-8")
            os.replace(partial, port_file)
        print(f"LISTENING {llm.base_url}", flush=True)
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--script", required=True, help="a JSON file holding a list of replies")
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument("--port-file", help="write the port here once listening")
    parser.add_argument("--requests-file", help="append each request body here as JSON")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the model /v1/models lists")
    args = parser.parse_args()
    script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    if not isinstance(script, list):
        raise SystemExit(f"{args.script}: the script must be a JSON list of replies")
    asyncio.run(_serve(args, script))


if __name__ == "__main__":
    main()
