"""The fork server behind tests/zygote.py (the client, which explains why); run as a script:

    python tests/zygote_server.py SOCKET GIVEN_ENV_JSON [paicli|pytest]

It imports what a `paicli` run imports (nothing else: no thread, no event loop, no call into
paicli; with `pytest`, also what a pytest worker imports before its tests, for
tests/xdist_fork.py), then listens on the unix socket SOCKET (SOCK_SEQPACKET) and prints one
JSON line: its pid and the environment variables read while importing (`read`), which the
client adds to the variables a zygote is chosen by. GIVEN_ENV_JSON is the environment it was started
with, so it can tell what the interpreter added at its start (the C locale's coercion sets
LC_CTYPE) and give a child the same.

Each connection is one child: a JSON request (argv after `python`, cwd, env, whether it
starts a session and takes its stdin as controlling terminal) with three descriptors
(SCM_RIGHTS) that become its stdin, stdout and stderr. The server forks, answers
`pid N`, and later `exit N CPU` (N as `subprocess` gives it: negative for a signal; the
child's CPU seconds) when it ends; it reaps its children from a select loop on their
pidfds, never from a thread.
It ends, killing and reaping any child left, at EOF on its stdin (the client closed it); and
it dies with its parent (PR_SET_PDEATHSIG), as each child dies with it.

In the child, the fork returns through `serve` to `main`, which makes the process what a
fresh `python -m paicli.cli ARGS` (or `python -u -c CODE`) would be (`_become`) and runs the
module as `python -m` runs it (or the code as `-c` does), so the interpreter ends as usual:
SystemExit's code, atexit, stdio flushed.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import ctypes
import fcntl
import gc
import importlib
import io
import json
import os
import runpy
import select
import signal
import socket
import sys
import termios
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

# What a `paicli -p` run with a model, a REPL, `paicli mcp ...` and `paicli acp` load.
PRELOAD = (
    "paicli.cli",
    "paicli.cli.oneshot",
    "paicli.cli.prompt_headless",
    "paicli.cli.mcp_commands",
    "paicli.cli.acp",
    "paicli.runtime",
    "paicli.llm.client",
    "paicli.llm._assembly",
    "paicli.ui.repl",
    "paicli.ui.repl_start",
    "paicli.ui.commands",
    "openai",
    "openai.types.chat",
    "openai.resources.chat",
    "openai.lib.streaming.chat",
    "openai._vendor.httpx_aiohttp",
    "aiohttp",
    "prompt_toolkit",
    "rich.console",
)
# What a pytest worker loads before its first test, for the worker zygote (tests/xdist_fork.py):
# pytest, the paicli run above, and the SDKs test modules import (pytest plugins are not
# among them: pytest rewrites their asserts, so it must import them itself).
WORKER_PRELOAD = (
    *PRELOAD,
    "pytest",
    "_pytest.python",
    "paicli.langchain",
    "langchain_core.messages",
    "langchain_core.runnables.retry",
    "acp",
    "acp.schema",
    "acp.client.connection",
    "acp.stdio",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.shared.memory",
    # What every worker's tests load after its start (a run of the suite, 2026-12-05).
    "paicli.acp.serve",
    "paicli.batch.actor",
    "paicli.batch.local",
    "paicli.batch.ray_run",
    "paicli.cli.batch",
    "paicli.cli.probe",
    "paicli.langchain._guard",
    "paicli.mcp._memory",
    "paicli.mcp._salvage",
    "paicli.tools.web.readable",
    "paicli.ui.jobs_view",
    "paicli.ui.logs",
    "paicli.ui.one_key",
    "paicli.ui.picker",
    "paicli.ui.ray_stderr",
    "paicli.cli.doctor",
    "paicli.cli.plugin_commands",
    "paicli.cli.rewind",
    "paicli.doctor.examine",
    "paicli.mcp._http",
    "paicli.mcp._legacy_sse",
    "paicli.mcp._sandbox.prepare",
    "paicli.mcp.auth._authorizer",
    "paicli.mcp.metrics",
    "paicli.mcp.otel",
    "paicli.plugins.install",
    "paicli.tools.web.fetch",
    "paicli.ui.audit_view",
    "paicli.ui.batch_progress",
    "paicli.ui.doctor_view",
    "paicli.ui.session_commands",
    "aiohttp.web",
    "jsonschema",
    "markdown_it",
    "httpcore2",
    "h11",
    "yaml",
    "keyring",
    "keyring.backends.SecretService",
    "keyring.backends.chainer",
    "opentelemetry.sdk.metrics",
    "openai.resources.chat.completions",
    "openai.resources.models",
    "prompt_toolkit.input.vt100",
    "rich.markdown",
    "rich.logging",
    "rich.spinner",
    "anyio._backends._asyncio",
)
# Our test servers (tests/server_programs/, imported from there): what the HTTP ones import,
# and what uvicorn loads once it serves.
SERVERS_PRELOAD = (
    "http_fault_server",
    "sdk_server",
    "sdk_http_server",
    "uvicorn.lifespan.on",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.websockets.websockets_sansio_impl",
    "uvicorn.middleware.proxy_headers",
)
PRELOADS = {"paicli": PRELOAD, "pytest": WORKER_PRELOAD, "servers": SERVERS_PRELOAD}
SERVER_PROGRAMS = Path(__file__).with_name("server_programs")
PR_SET_PDEATHSIG = 1
MAX_REQUEST = 1 << 20
STDIO = 3


@dataclass
class Request:
    """One child to become: what the client sent, and what of the server it must shed."""

    argv: list[str]  # after the interpreter: ["-m", "paicli.cli", ARGS...]
    cwd: str
    env: dict[str, str]
    session: bool
    terminal: bool
    ignored: list[int]  # the signals the client ignores (a fresh start inherits them)
    fds: list[int]
    server_sockets: list[socket.socket] = field(default_factory=list)
    server_fds: list[int] = field(default_factory=list)


class _RecordingEnviron(os._Environ[str]):
    """os.environ's data, recording which variables are read (all, on iteration)."""

    def __init__(self, real: os._Environ[str]) -> None:
        super().__init__(
            real._data,  # type: ignore[attr-defined]
            real.encodekey,
            real.decodekey,
            real.encodevalue,
            real.decodevalue,
        )
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return super().__getitem__(key)

    def __iter__(self) -> Any:
        self.read.add("*")
        return super().__iter__()


def _die_with(parent: int) -> None:
    """SIGKILL this process when its parent ends (and at once if it already has)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _preload(names: tuple[str, ...]) -> list[str]:
    real = os.environ
    recording = _RecordingEnviron(real)
    os.environ = recording  # noqa: B003 - the same data, read through a recorder
    try:
        for name in names:
            importlib.import_module(name)
    finally:
        os.environ = real  # noqa: B003
    return sorted(recording.read)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    fds = array.array("i")
    data, ancillary, _, _ = conn.recvmsg(MAX_REQUEST, socket.CMSG_SPACE(STDIO * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    request: dict[str, Any] = json.loads(data)
    if len(fds) != STDIO:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"{len(fds)} descriptors, not {STDIO}")
    return request, list(fds)


def serve(listener: socket.socket) -> Request | None:
    """Fork a child per connection until stdin ends. Returns in a child only (its request)."""
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    while True:
        ready, _, _ = select.select([0, listener.fileno(), *children], [], [])
        for fd in ready:
            if fd == 0:
                if not os.read(0, 4096):
                    _stop(children)
                    return None
            elif fd == listener.fileno():
                request = _accept(listener, children)
                if request is not None:
                    return request
            else:
                _report(fd, children)


def _accept(
    listener: socket.socket, children: dict[int, tuple[int, socket.socket]]
) -> Request | None:
    conn, _ = listener.accept()
    try:
        asked, fds = _receive(conn)
    except (OSError, ValueError) as exc:
        print(f"zygote: a bad request: {exc}", file=sys.stderr)
        conn.close()
        return None
    # A fork copies only the calling thread: with another one alive, a lock it held stays
    # held in the child forever.
    assert threading.active_count() == 1, threading.enumerate()
    pid = os.fork()
    if pid == 0:
        conns = [c for _, c in children.values()]
        return Request(
            argv=list(asked["argv"]),
            cwd=str(asked["cwd"]),
            env=dict(asked["env"]),
            session=bool(asked["session"]),
            terminal=bool(asked["terminal"]),
            ignored=[int(sig) for sig in asked["ignored"]],
            fds=fds,
            server_sockets=[listener, conn, *conns],
            server_fds=list(children),
        )
    for fd in fds:
        os.close(fd)
    children[os.pidfd_open(pid)] = (pid, conn)
    try:
        conn.send(f"pid {pid}".encode())
    except OSError:
        pass  # the client went away; the child is still reaped
    return None


def _report(pidfd: int, children: dict[int, tuple[int, socket.socket]]) -> None:
    pid, conn = children.pop(pidfd)
    _, status, usage = os.wait4(pid, 0)
    os.close(pidfd)
    cpu = usage.ru_utime + usage.ru_stime
    try:
        conn.send(f"exit {os.waitstatus_to_exitcode(status)} {cpu:.3f}".encode())
    except OSError:
        pass
    conn.close()


def _stop(children: dict[int, tuple[int, socket.socket]]) -> None:
    for pidfd, (pid, conn) in children.items():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(pidfd)
        conn.close()
    children.clear()


def _stdio(fd: int, write: bool, errors: str, encoding: str, u: bool) -> io.TextIOWrapper:
    """sys.stdin/stdout/stderr as the interpreter makes them at its start (CPython's
    create_stdio): buffered unless -u (`u`); line-buffered on a terminal, and stderr always."""
    buffered = not (u or os.environ.get("PYTHONUNBUFFERED"))  # what the start read
    buffering = -1 if buffered or not write else 0
    binary: Any = open(fd, "wb" if write else "rb", buffering, closefd=False)  # noqa: SIM115
    raw = getattr(binary, "raw", binary)
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    text = io.TextIOWrapper(
        binary,
        encoding=encoding,
        errors=errors,
        newline="\n",
        line_buffering=buffered and (raw.isatty() or fd == 2),
        write_through=not buffered,
    )
    text.mode = "w" if write else "r"  # type: ignore[misc]
    return text


def _become(request: Request, zygote: int, added: dict[str, str]) -> None:
    """Shed the server (its sockets and pidfds), take the request's descriptors, session,
    folder and environment, and rebuild what the interpreter set from them at its start."""
    for sock in request.server_sockets:
        os.close(sock.detach())
    for fd in request.server_fds:
        os.close(fd)
    if request.session:
        os.setsid()
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
    for fd in request.fds:
        if fd > 2:
            os.close(fd)
    if request.terminal:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    _die_with(zygote)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update({**added, **request.env})
    import tempfile  # noqa: PLC0415 - only to forget a folder the server may have chosen

    tempfile.tempdir = None
    _redo_home_reads()
    _signals_as_started(set(request.ignored))
    streams = (sys.stdin, sys.stdout, sys.stderr)
    sys.stdin, sys.stdout, sys.stderr = (
        _stdio(fd, fd > 0, str(old.errors), str(old.encoding), request.argv[0] == "-u")
        for fd, old in enumerate(streams)
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]


def _signals_as_started(ignored: set[int]) -> None:
    """Signal dispositions as `subprocess` (restore_signals) and a start leave them: what the
    client ignores stays ignored (but SIGPIPE and SIGXFSZ, which the exec resets and the
    interpreter ignores again), SIGINT raises KeyboardInterrupt, the rest are the default."""
    started: dict[int, Any] = {signal.SIGPIPE: signal.SIG_IGN, signal.SIGXFSZ: signal.SIG_IGN}
    started[signal.SIGINT] = signal.default_int_handler
    for sig in sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}):
        wanted = started.get(sig, signal.SIG_DFL)
        if sig in ignored and sig not in (signal.SIGPIPE, signal.SIGXFSZ):
            wanted = signal.SIG_IGN
        try:
            if signal.getsignal(sig) != wanted:
                signal.signal(sig, wanted)
        except (OSError, ValueError):
            pass  # one the kernel does not let a process set (SIGRTMIN's neighbours)


def _redo_home_reads() -> None:
    """The imports' only reads of HOME (sysconfig's user base: `~/.local`), done again with
    the child's HOME; the client does not choose a zygote by HOME (see REDONE_IN_CHILD)."""
    import sysconfig  # noqa: PLC0415

    config: dict[str, Any] | None = getattr(sysconfig, "_CONFIG_VARS", None)
    if config and "userbase" in config:
        config["userbase"] = sysconfig._getuserbase()  # type: ignore[attr-defined]


def _run(argv: list[str]) -> None:
    """What a client sends: `python -m MODULE ARGS` (sys.path[0] is the working folder,
    sys.argv[0] the module's file), `python SCRIPT ARGS` (a test server) or `python -u -c
    CODE` (a pytest worker's start, see tests/xdist_fork.py; sys.path[0] is ''); each runs
    in a fresh `__main__`."""
    sys.orig_argv = [sys.executable, *argv]
    main = sys.modules["__main__"] = types.ModuleType("__main__")
    if argv[:2] == ["-u", "-c"]:
        sys.path.insert(0, "")
        sys.argv = ["-c", *argv[3:]]
        exec(compile(argv[2], "<string>", "exec"), main.__dict__)
        _end_without_teardown()
    if argv[0] != "-m":  # `python SCRIPT ARGS`: sys.path[0] is the script's folder
        script = os.path.abspath(argv[0])
        if sys.path[:1] != [os.path.dirname(script)]:
            sys.path.insert(0, os.path.dirname(script))
        sys.argv = list(argv)
        runpy.run_path(script, run_name="__main__")
        return
    sys.path.insert(0, os.getcwd())
    sys.argv = ["-m", *argv[2:]]
    runpy._run_module_as_main(argv[1], alter_argv=True)  # type: ignore[attr-defined]


def _end_without_teardown() -> NoReturn:
    """A pytest worker whose session is over ends as the interpreter would (its threads
    joined, atexit's handlers run, stdio flushed) but without freeing every module and
    object first: ~0.8 s of CPU a worker, spent when the run is otherwise over and the
    controller waits for the workers to exit."""
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls at exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _warm_assert_caches() -> None:
    """In the workers' server, before the first worker forks: when test modules have no
    assert-rewritten bytecode yet (a fresh clone, an edited test), two children (one a
    core) rewrite them as pytest's import hook does and write its cache files, rather than
    every worker rewriting every module at once (~5 s of CPU each). Rewriting is all it
    takes, not a collection: nothing is imported. pytest names the cache files; a test
    module reads its own on import (and rewrites itself if one is missing or stale)."""
    from _pytest.assertion import rewrite  # noqa: PLC0415 - preloaded by now

    root = Path(__file__).resolve().parent.parent
    modules = [*root.glob("tests/**/test_*.py"), *root.glob("tests/**/conftest.py")]
    missing = [module for module in modules if not _cached(module, _cache_file(rewrite, module))]
    children = []
    for share in (missing[0::2], missing[1::2]) if missing else ():
        child = os.fork()
        if child == 0:
            try:
                for module in share:
                    _rewrite(rewrite, module)
            finally:
                os._exit(0)
        children.append(child)
    for child in children:
        os.waitpid(child, 0)


def _rewrite(rewrite: Any, module: Path) -> None:
    """`module`'s asserts rewritten and cached as pytest does it (this suite sets no
    option that changes the rewrite, so none is needed)."""
    source_hash, code = rewrite._rewrite_test(module, None)
    cached = _cache_file(rewrite, module)
    if rewrite.try_makedirs(cached.parent):
        state = types.SimpleNamespace(trace=lambda _: None)
        rewrite._write_pyc(state, code, source_hash, cached)


def _cache_file(rewrite: Any, module: Path) -> Path:
    """Where pytest keeps `module`'s rewritten bytecode."""
    folder: Path = rewrite.get_cache_dir(module)
    return folder / (module.stem + str(rewrite.PYC_TAIL))


def _cached(module: Path, cached: Path) -> bool:
    try:
        return cached.stat().st_mtime >= module.stat().st_mtime
    except OSError:
        return False


def main() -> None:
    path, given = sys.argv[1], json.loads(sys.argv[2])
    preload = PRELOADS[sys.argv[3] if len(sys.argv) > 3 else "paicli"]
    added = {k: v for k, v in os.environ.items() if given.get(k) != v}
    _die_with(os.getppid())
    del sys.path[0]  # this file's folder, tests/: its packages would hide the SDKs (acp, mcp)
    if preload == SERVERS_PRELOAD:
        sys.path.insert(0, str(SERVER_PROGRAMS))  # as a script there has it
    gc.disable()  # the imports make objects that live as long as the process: no cycles
    read = _preload(preload)
    gc.freeze()  # the imports' objects: no collection in a child walks (and copies) them
    gc.enable()  # a child starts with collection on, as a fresh interpreter does
    if preload == WORKER_PRELOAD and not sys.dont_write_bytecode:
        _warm_assert_caches()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    zygote = os.getpid()
    print(json.dumps({"pid": zygote, "read": read}), flush=True)
    request = serve(listener)
    if request is None:
        return
    _become(request, zygote, added)
    _run(request.argv)


if __name__ == "__main__":
    main()
