"""Retrying a tool call that timed out or lost its server, when that is safe.

Config, per server: `"retry": {"attempts": 3, "backoff": 0.5, "on": ["timeout", "crash"]}`
and `"retryTools": [globs]`. A call is retried only when a second run cannot do harm the
first did not: the tool says it is read-only (`annotations.readOnlyHint`) on a server the
user trusts, or its name matches `retryTools`. Never otherwise: a call that timed out may
have run. Delays grow exponentially from `backoff` seconds with jitter (each between half
and all of `backoff * 2**(n-1)`), and no attempt or delay runs past the call's overall
deadline (`deadline` seconds; by default room for every attempt's full timeout and every
pause at its longest).

Each failed attempt that is followed by another is reported to whoever listens in the
calling task (`listening`): the agent shows it on the tool line, the audit log writes it as
a record of its own. A context variable carries the listeners, so the layers between the
agent and the manager need not pass them along.
"""

from __future__ import annotations

import asyncio
import contextvars
import fnmatch
import logging
import random
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from paicli.mcp import ConnectionClosed, McpError, RequestTimeout
from paicli.servers._config_file import InvalidConfig

if TYPE_CHECKING:
    from paicli.mcp import Tool

__all__ = [
    "Attempt",
    "RetryPolicy",
    "default_deadline",
    "listening",
    "report",
    "retry_delay",
    "retry_policy_from",
    "retry_safe",
    "with_retries",
]

log = logging.getLogger("paicli.servers")

T = TypeVar("T")
Reason = Literal["timeout", "crash"]
REASONS: tuple[Reason, ...] = ("timeout", "crash")
# More attempts than this only hammer a broken server; a config asking for more is a typo.
MAX_ATTEMPTS = 10
MAX_BACKOFF = 60.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 3
    backoff: float = 0.5
    on: tuple[Reason, ...] = REASONS
    deadline: float | None = None  # seconds for the whole call, all attempts included


@dataclass(frozen=True, slots=True)
class Attempt:
    """An attempt that failed and is followed by attempt `number + 1` after `delay` s."""

    number: int
    of: int
    reason: Reason
    error: str
    seconds: float
    delay: float

    @property
    def line(self) -> str:
        """`retry 2/3 after crash`: what the tool line shows."""
        return f"retry {self.number + 1}/{self.of} after {self.reason}"


def retry_policy_from(value: object) -> RetryPolicy:
    """Parse a `"retry"` object (errors name the key)."""
    if not isinstance(value, Mapping):
        raise InvalidConfig("'retry' must be an object such as {\"attempts\": 3}")
    unknown = sorted(set(value) - {"attempts", "backoff", "on", "deadline"})
    if unknown:
        raise InvalidConfig(f"retry: unknown key {unknown[0]!r}")
    attempts = value.get("attempts", 3)
    if isinstance(attempts, bool) or not isinstance(attempts, int):
        raise InvalidConfig(f"retry.attempts must be a whole number from 1 to {MAX_ATTEMPTS}")
    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise InvalidConfig(f"retry.attempts must be a whole number from 1 to {MAX_ATTEMPTS}")
    backoff = _seconds(value, "backoff", 0.5, MAX_BACKOFF) or 0.0
    deadline = _seconds(value, "deadline", None, None)
    on = value.get("on", list(REASONS))
    if not isinstance(on, list) or not on or not all(r in REASONS for r in on):
        raise InvalidConfig('retry.on must be a list of "timeout" and "crash"')
    return RetryPolicy(attempts, backoff, tuple(dict.fromkeys(on)), deadline)


def _seconds(
    value: Mapping[str, object], key: str, default: float | None, most: float | None
) -> float | None:
    seconds = value.get(key, default)
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise InvalidConfig(f"retry.{key} must be a number of seconds >= 0")
    if most is not None and seconds > most:
        raise InvalidConfig(f"retry.{key} must be at most {most:g} seconds")
    return float(seconds)


def retry_safe(tool: Tool | None, name: str, *, trusted: bool, patterns: tuple[str, ...]) -> bool:
    """Whether calling `name` twice can do no harm once did not."""
    if any(fnmatch.fnmatchcase(name, p) for p in patterns):
        return True
    # A server's readOnlyHint is its own claim: believed only when the user trusts it.
    hints = tool.annotations if tool is not None else None
    return trusted and isinstance(hints, Mapping) and hints.get("readOnlyHint") is True


def default_deadline(policy: RetryPolicy, each: float) -> float:
    """Room for every attempt's full timeout `each` and every pause at its longest."""
    pauses = policy.backoff * float(2 ** (policy.attempts - 1) - 1)
    return policy.attempts * each + pauses


def retry_delay(number: int, backoff: float, rng: random.Random | None = None) -> float:
    """The pause after failed attempt `number` (1-based): exponential, with jitter, so
    clients that failed together do not come back together."""
    ceiling = backoff * 2 ** (number - 1)
    return (rng or random).uniform(ceiling / 2, ceiling)


Listener = Callable[[Attempt], object]
_LISTENERS: contextvars.ContextVar[tuple[Listener, ...]] = contextvars.ContextVar(
    "paicli_retry_listeners", default=()
)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Hear about the retries of calls made in this task (and tasks it starts) inside
    the block."""
    token = _LISTENERS.set((*_LISTENERS.get(), listener))
    try:
        yield
    finally:
        _LISTENERS.reset(token)


def report(attempt: Attempt) -> None:
    for listener in _LISTENERS.get():
        try:
            listener(attempt)
        except Exception:  # a listener's bug must not cost the call
            log.exception("retry listener failed")


def failure_reason(exc: McpError) -> Reason | None:
    """Which retryable failure `exc` is, if any (an error reply is not one: the tool ran)."""
    if isinstance(exc, RequestTimeout):
        return "timeout"
    if isinstance(exc, ConnectionClosed):
        return "crash"
    return None


async def with_retries(
    policy: RetryPolicy,
    attempt: Callable[[float], Awaitable[T]],
    recover: Callable[[float], Awaitable[None]],
    *,
    deadline: float,
    rng: random.Random | None = None,
) -> T:
    """Run `attempt(seconds_left)` until it succeeds, fails in a way `policy` does not
    retry, runs out of attempts, or the loop-time `deadline` would pass; then the last
    McpError is raised. After a crash, `recover(seconds_left)` brings the server back
    before the next attempt."""
    loop = asyncio.get_running_loop()
    number = 1
    while True:
        started = loop.time()
        try:
            return await attempt(deadline - started)
        except McpError as exc:
            reason = failure_reason(exc)
            if reason is None or reason not in policy.on or number >= policy.attempts:
                raise
            delay = retry_delay(number, policy.backoff, rng)
            if loop.time() + delay >= deadline:
                raise
            report(Attempt(number, policy.attempts, reason, str(exc), loop.time() - started, delay))
        await asyncio.sleep(delay)
        if reason == "crash":
            await recover(deadline - loop.time())
        number += 1
