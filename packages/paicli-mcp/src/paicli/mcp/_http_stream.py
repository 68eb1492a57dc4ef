"""Reading what a Streamable HTTP server answers: a POST's answer, and the GET stream.

The answer to a POST is an error status (a JSON-RPC error in its body still answers the
request), 202 (all a notification needs), a JSON body, or an SSE stream. A request's stream
is followed until its response arrives; if it drops first it is resumed with `Last-Event-ID`
(at most MAX_RESUMES times), except in the 2026 era, which has no resumption (`BrokenStream`
tells the transport to send the request again). The optional GET stream for
server-initiated messages is kept open, reopened with backoff when it drops. The transport
hands these functions a `StreamLink` (what they need of it, explicitly); they run in the
request's task, or (the GET stream) in the transport's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import aiohttp

from ._http_exchange import (
    HTTP_FAILURES,
    OAuthUse,
    arrived_body,
    error_body,
    excerpt,
    exchange,
    read_body,
    status_error,
)
from ._jsonrpc import envelope_problem, parse, same_id
from ._sse import iter_events
from ._transport import TransportWatcher
from .errors import ConnectionClosed, HttpError, McpError

__all__ = [
    "BrokenStream",
    "StreamEnd",
    "StreamLink",
    "answers",
    "follow_stream",
    "listen_get",
    "read_answer",
    "read_stream",
]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]

# Resuming a dropped stream: the server's `retry` if it sent one, else one second, and at
# most three attempts in a row so a broken server cannot keep us looping.
DEFAULT_RETRY = 1.0
MAX_RESUMES = 3
# Reopening the GET stream: each failure in a row doubles the wait (the server's `retry`,
# else DEFAULT_RETRY), so a struggling server is not hammered; MAX_RESUMES bounds the run.
GET_BACKOFF_FACTOR = 2.0


class StreamEnd(NamedTuple):
    """What reading one SSE stream left behind."""

    last_id: str | None  # the last event id seen (for `Last-Event-ID`)
    retry: float | None  # the server's last `retry`, in seconds
    answered: bool  # whether the awaited response was among the events
    events: int  # how many events arrived (priming events included)


class BrokenStream(Exception):
    """Internal: a 2026 request's response stream ended before its response."""


@dataclass(frozen=True, slots=True)
class StreamLink:
    """What following a transport's streams needs from the transport."""

    label: str
    url: str
    max_message_size: int
    client: aiohttp.ClientSession
    base_headers: Callable[[], dict[str, str]]  # session id and version headers
    batches: Callable[[], bool]  # whether an array is a batch (2025-03-26 agreed)
    deliver: Callable[[Message], None]  # one message from the server, to the session
    fail: Callable[[Any, McpError], None]  # one request failed
    watcher: Callable[[], TransportWatcher | None]  # told each response (tracing)
    oauth: OAuthUse | None = None  # how tokens are got, with OAuth (a 401's error says)
    # What a response body's parse warnings name (made once: every answer is parsed).
    body_where: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "body_where", f"{self.label}: response body")

    def stream_broke(self, message: Message, detail: str = "") -> ConnectionClosed:
        text = f"{self.label}: the response stream for {message.get('method')} ended before "
        return ConnectionClosed(f"{text}the response {detail}".rstrip())


async def read_answer(
    link: StreamLink,
    message: Message,
    request_id: Any,
    response: aiohttp.ClientResponse,
    modern: bool,
    *,
    body: bytes | None = None,
) -> None:
    """Deliver the messages of the answer to the POST of `message`, or fail its request
    (`body`: an error answer's body, when the transport has read it already)."""
    status = response.status
    if status >= 300:
        await _error_answer(link, request_id, response, body)
        return
    if request_id is None:
        return  # Notifications and our answers to server requests: 202 is all we need.
    if status == 202:
        link.fail(request_id, HttpError(f"{link.label}: server sent no response (202)"))
        return
    # (The header as nearly every server sends it needs no parsing, which aiohttp's
    # `content_type` does afresh for each response.)
    content_type = response.headers.get("Content-Type")
    if content_type != "application/json":
        content_type = response.content_type
    if content_type == "application/json":
        body = arrived_body(response, link.max_message_size)
        if body is None:
            body = await read_body(response, link.max_message_size)
        if not _deliver_body(link, body, request_id):
            # Nothing else will answer it: a body cut short, or not JSON-RPC.
            quoted = excerpt(body)
            link.fail(
                request_id,
                HttpError(
                    f"{link.label}: the JSON response to {message.get('method')} holds "
                    f'no valid answer to it (cut short, or not JSON-RPC): "{quoted}"',
                    status=status,
                    server_text=quoted,
                ),
            )
    elif content_type == "text/event-stream":
        await follow_stream(link, message, request_id, response, modern)
    else:
        link.fail(
            request_id,
            HttpError(
                f"{link.label}: unexpected content type {content_type or '(none)'!r} "
                f"in the response to {message.get('method')}",
                status=status,
            ),
        )


async def _error_answer(
    link: StreamLink, request_id: Any, response: aiohttp.ClientResponse, body: bytes | None
) -> None:
    # (A redirect gets here only when `exchange` would not follow it.)
    if body is None:
        body = await read_body(response, link.max_message_size)
    is_json = response.content_type == "application/json"
    errors = [
        m
        for m in (_parse(link, body) if is_json else [])
        if "error" in m and envelope_problem({**m, "id": request_id}) is None
    ]
    if errors and request_id is not None and response.status not in (401, 403):
        # A real JSON-RPC error in the body (2026 servers send them with 400/404). It
        # answers this POST whatever its id says: servers on the SDK 1.x send `null` or
        # "server-error" there.
        link.deliver({**errors[0], "id": request_id})
        return
    link.fail(request_id, status_error(link.label, response, body, oauth=link.oauth))


def _parse(link: StreamLink, body: bytes) -> list[Message]:
    return parse(body, batches=link.batches(), where=link.body_where)


def _deliver_body(link: StreamLink, body: bytes, request_id: Any) -> bool:
    """Deliver the messages of a JSON body; whether one answered `request_id`."""
    answered = False
    for reply in _parse(link, body):
        if not answered and _unattributed_error(reply):
            # An error the server could not tie to a request (it could not read ours): it
            # answers the POST that carried it.
            reply_to_us = {**reply, "id": request_id}
            answered = envelope_problem(reply_to_us) is None
            link.deliver(reply_to_us)
            continue
        answered = answered or answers(reply, request_id)
        link.deliver(reply)
    return answered


def _unattributed_error(message: Message) -> bool:
    return "method" not in message and message.get("id") is None and "error" in message


async def follow_stream(
    link: StreamLink,
    message: Message,
    request_id: Any,
    response: aiohttp.ClientResponse,
    modern: bool,
) -> None:
    """Read a request's SSE stream; if it drops before the response, resume it (the
    2026 revision has no resumption: `_post_modern` sends the request again)."""
    last_id, retry, answered, _ = await read_stream(link, response.content.iter_any(), request_id)
    if modern and not answered:
        raise BrokenStream
    resumes = 0
    while not answered:
        if last_id is None or resumes >= MAX_RESUMES:
            link.fail(request_id, link.stream_broke(message))
            return
        resumes += 1
        await asyncio.sleep(retry if retry is not None else DEFAULT_RETRY)
        headers = {
            **link.base_headers(),
            "Accept": "text/event-stream",
            "Last-Event-ID": last_id,
        }
        async with await exchange(
            link.client, link.label, "GET", link.url, headers=headers, watcher=link.watcher()
        ) as resumed:
            if resumed.status != 200:
                # Say what was refused: the resumption, not the request itself.
                refused = f"resuming the response stream of {message.get('method')} (GET)"
                body = await error_body(resumed)
                link.fail(request_id, status_error(link.label, resumed, body, refused=refused))
                return
            new_id, new_retry, answered, _ = await read_stream(
                link, resumed.content.iter_any(), request_id
            )
            last_id = new_id or last_id
            retry = new_retry if new_retry is not None else retry


async def read_stream(link: StreamLink, chunks: AsyncIterator[bytes], request_id: Any) -> StreamEnd:
    """Deliver a stream's messages until it ends or brings the response to
    `request_id`."""
    last_id: str | None = None
    retry: float | None = None
    answered = False
    events = 0
    where = f"{link.label}: SSE event"
    try:
        async for event in iter_events(chunks, link.max_message_size):
            events += 1
            if event.id is not None:
                last_id = event.id
            if event.retry_ms is not None:
                retry = event.retry_ms / 1000
            if event.event != "message" or not event.data:
                continue  # Priming events carry only an id and a retry.
            for reply in parse(event.data, batches=link.batches(), where=where):
                if request_id is not None and answers(reply, request_id):
                    answered = True
                link.deliver(reply)
            if answered:
                # Done with this request: stop reading even if the server keeps the
                # stream open (some resume on a GET stream that never ends).
                break
    except HTTP_FAILURES as exc:
        # A dropped connection mid-stream is resumable; not an error by itself.
        log.debug("%s: stream interrupted: %s", link.label, exc)
    return StreamEnd(last_id, retry, answered, events)


def answers(message: Message, request_id: Any) -> bool:
    """Whether `message` is a valid response to the request `request_id` (an invalid one
    is dropped by the engine, so it must not end the wait for the real one)."""
    return (
        "method" not in message
        and same_id(message.get("id"), request_id)
        and envelope_problem(message) is None
    )


async def listen_get(link: StreamLink, ready: asyncio.Event) -> None:
    """The optional GET stream for server-initiated messages (405: none offered); `ready`
    is set once it is established, refused, or given up on."""
    try:
        await _get_loop(link, ready)
    finally:
        ready.set()


async def _get_loop(link: StreamLink, ready: asyncio.Event) -> None:
    """Keep the GET stream open: reopen it when it drops, resuming from the last event
    id it carried, after the server's `retry` (doubled for each failure in a row). A
    reopening that brings events resets the count; MAX_RESUMES failures in a row end
    the loop, and so does 405 (the server offers no GET stream)."""
    label = link.label
    last_id: str | None = None
    retry: float | None = None
    failures = 0
    while True:
        headers = {**link.base_headers(), "Accept": "text/event-stream"}
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        try:
            async with await exchange(
                link.client, label, "GET", link.url, headers=headers, watcher=link.watcher()
            ) as response:
                ready.set()
                if response.status == 405:
                    return
                ctype = response.headers.get("content-type", "")
                if response.status == 200 and ctype.startswith("text/event-stream"):
                    end = await read_stream(link, response.content.iter_any(), None)
                    last_id = end.last_id or last_id
                    retry = end.retry if end.retry is not None else retry
                    failures = 0 if end.events else failures + 1
                else:
                    log.debug("%s: GET stream refused: HTTP %s", label, response.status)
                    failures += 1
        except HTTP_FAILURES as exc:
            log.debug("%s: GET stream failed: %s", label, exc)
            failures += 1
        except McpError as exc:
            log.warning("%s: GET stream dropped: %s", label, exc)
            failures += 1
        if failures >= MAX_RESUMES:
            log.info("%s: giving up on the GET stream", label)
            return
        base = retry if retry is not None else DEFAULT_RETRY
        await asyncio.sleep(base * GET_BACKOFF_FACTOR**failures)
