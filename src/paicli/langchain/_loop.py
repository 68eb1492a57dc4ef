"""Where a bridged session's coroutines run, and how a caller on any thread reaches them.

A session lives on the event loop that opened it: the caller's own loop under `async with`,
or, for plain synchronous code, one private loop on a daemon thread (started on first use,
one per process). A call from the owning loop awaits the session directly; a call from any
other thread or loop is handed over with `run_coroutine_threadsafe`. Everything opened on the
private loop is closed at interpreter exit (bounded), so no server outlives the program.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from paicli.langchain.errors import BridgeError

__all__ = ["Closable", "private_loop", "run_on", "wait_on"]

T = TypeVar("T")

# At exit each server gets the stdio shutdown ladder (1 s + 2 s, paicli.mcp._process); a
# little over that bounds the whole exit however many servers are open (they close at once).
EXIT_CLOSE_SECONDS = 5.0


class Closable(Protocol):
    def aclose(self) -> Awaitable[None]: ...


class _PrivateLoop:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self._open: weakref.WeakSet[Closable] = weakref.WeakSet()
        thread = threading.Thread(target=self.loop.run_forever, name="paicli-langchain")
        thread.daemon = True  # never keeps the program alive; atexit closes what is open
        thread.start()
        atexit.register(self._close_all)

    def adopt(self, owner: Closable) -> None:
        self._open.add(owner)

    def _close_all(self) -> None:
        owners = list(self._open)
        if not owners or os.getpid() != self.pid:
            return  # a forked child exiting: these are its parent's to close

        async def close() -> None:
            await asyncio.gather(*(o.aclose() for o in owners), return_exceptions=True)

        future = asyncio.run_coroutine_threadsafe(close(), self.loop)
        try:
            future.result(EXIT_CLOSE_SECONDS)
        except Exception:  # exiting anyway: the process groups were signalled already
            future.cancel()


_private: _PrivateLoop | None = None
_private_lock = threading.Lock()
# Private loops of the processes this one was forked from: no thread runs them here.
_parents: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def _forget_in_child() -> None:
    global _private, _private_lock  # noqa: PLW0603 - the child makes its own on first need
    if _private is not None:
        _parents.add(_private.loop)
    _private = None
    _private_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def private_loop(owner: Closable | None = None) -> asyncio.AbstractEventLoop:
    """The process's private loop; `owner` is closed on it at interpreter exit."""
    global _private  # noqa: PLW0603 - one loop per process, made on first use
    with _private_lock:
        if _private is None:
            _private = _PrivateLoop()
        if owner is not None:
            _private.adopt(owner)
        return _private.loop


def _running() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _check_alive(loop: asyncio.AbstractEventLoop) -> None:
    if loop in _parents:
        raise BridgeError(
            "these tools were opened in the parent of this forked process, whose sessions "
            "it cannot use; send the tools pickled (multiprocessing or Ray) or open them here"
        )
    if loop.is_closed() or not loop.is_running():
        raise BridgeError(
            "the event loop these tools were opened on has stopped; open them inside the "
            "loop that uses them, or with `with load_tools(...)` for synchronous code"
        )


async def run_on(loop: asyncio.AbstractEventLoop, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Await `make()` on `loop`, from the caller's loop (the same one, or another)."""
    if _running() is loop:
        return await make()
    _check_alive(loop)
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(make(), loop))


def wait_on(loop: asyncio.AbstractEventLoop, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run `make()` on `loop` and block this thread until it is done."""
    if _running() is loop:
        raise BridgeError(
            "a synchronous call (invoke) was made on the event loop that owns these tools, "
            "which would wait on itself forever; use `await tool.ainvoke(...)` there"
        )
    _check_alive(loop)
    future = asyncio.run_coroutine_threadsafe(make(), loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()  # Ctrl+C in the waiting thread: the call is cancelled too
        raise
