"""Real `paicli` processes for tests, forked from a warm interpreter ("zygote").

A test that starts `python -m paicli.cli ARGS` pays a Python start and the imports of a run
(the model SDK alone is most of a second of CPU) before paicli does anything; the suite
starts ~170 of them. Here a fork server (tests/zygote_server.py) has imported what a run
imports, and nothing more: no thread, no event loop, no call
into paicli. Each paicli is `fork()`ed from it, takes the test's argv, environment, working
folder and stdin/stdout/stderr (real pipes or a real pty, passed over a unix socket with
SCM_RIGHTS; a new session with the pty as controlling terminal when asked), rebuilds
sys.stdin/stdout/stderr and sys.path[0] as a start would, and runs `paicli.cli` as
`python -m` does. It is a real process: its own pid, signals, exit status, descriptors and
children; only the imports are shared.

A fork can only be a fresh start when everything the interpreter or an import computed from
the environment is the same: the locale and `PYTHON*` variables (read by the interpreter at
its start), TZ, and every variable read while the server imported (it reports them). So a
zygote is chosen by those variables' values (one per combination, a few per worker). What a
fork cannot redo: the hash seed (children of one zygote share its str hashes, so the order of
a set of strings) and the import objects the server `gc.freeze()`s; each child gets the
signal dispositions a fresh start from the test process would.

Fresh processes remain where the start is the point, and always for anything but the exact
form `[sys.executable, "-m", "paicli.cli", ...]` (`-X importtime`, `-c`, the console
script): the marker `fresh_paicli` on a test (its paicli processes start fresh), the
environment variable PAICLI_TESTS_FRESH=1 (every test's), and outside a test (the
benchmarks in bench/ that use these helpers time real starts).

`spawn_on_fds` is the primitive (Terminal.spawn uses it); tests/zygote_process.py has
`asyncio.create_subprocess_exec` and `subprocess.run` for the paicli form on pipes. Each
falls back to a fresh process when the fork does not apply.

In an xdist run the zygotes are the run's: the controller starts each when a worker first
asks for its set of variables (`ZygoteBroker`), every worker forks from it, and they end with
the session. Otherwise (no xdist, and the zygote's own tests) a `Zygotes` starts its own.
A zygote ends when its owner closes its stdin (at exit) or dies (PR_SET_PDEATHSIG), and
kills its children first; a child dies with the zygote.
"""

from __future__ import annotations

import array
import asyncio
import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from tests.processes import alive

__all__ = [
    "CONSOLE_SCRIPT",
    "SharedZygote",
    "Zygote",
    "ZygoteBroker",
    "ZygoteChild",
    "Zygotes",
    "fresh_for_this_test",
    "spawn_on_fds",
    "zygote_for",
    "zygote_pids",
]

SERVER = Path(__file__).with_name("zygote_server.py")
SERVER_PROGRAMS = Path(__file__).with_name("server_programs")
# The installed console script, as a user runs paicli: always a fresh interpreter.
CONSOLE_SCRIPT = Path(sys.executable).with_name("paicli")
FRESH = os.environ.get("PAICLI_TESTS_FRESH") == "1"
# Where the controller's `ZygoteBroker` listens (set by it, inherited by the workers).
BROKER = "PAICLI_TESTS_ZYGOTES"
# Read by the interpreter at its start, or by the `time` module at its import.
STARTUP_VARIABLES = frozenset({"LANG", "LC_ALL", "LC_CTYPE", "TZ"})
# Read while the zygote imports, but done again in each child (tests/zygote_server.py
# `_redo_home_reads`): not a reason for a zygote of its own.
REDONE_IN_CHILD = frozenset({"HOME"})
MOST_ZYGOTES = 6  # per worker; the least recently used is closed beyond this
# A zygote's preload and the values of the variables its start depends on.
Key = tuple[str, frozenset[tuple[str, str]]]

# Fresh until tests/conftest.py says otherwise for a test: anything else that starts paicli
# through these helpers (bench/instant_start.py times its REPL through Terminal.spawn) measures
# real starts.
_state = {"fresh": True}
_CATCHABLE = sorted(set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP})


def fresh_for_this_test(fresh: bool) -> None:
    """Set by tests/conftest.py from the `fresh_paicli` marker before each test."""
    _state["fresh"] = FRESH or fresh


def deciding(env: Mapping[str, str], read: frozenset[str] = frozenset()) -> dict[str, str]:
    """The variables of `env` that decide a start: the interpreter's, and `read` (those a
    zygote's imports read)."""
    return {
        name: value
        for name, value in env.items()
        if name.startswith("PYTHON") or name in STARTUP_VARIABLES or name in read
    }


class _Listening:
    """A started fork server: its pid, what it read while importing, where it listens."""

    pid: int
    read: frozenset[str]
    path: str

    def connect(self) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(self.path)
        return conn


class Zygote(_Listening):
    """One started fork server, for one set of startup variables (`preload`: what it
    imports, tests/zygote_server.py)."""

    def __init__(self, given: dict[str, str], preload: str = "paicli") -> None:
        self.given = given
        self._folder = tempfile.mkdtemp(prefix="paicli-zygote-")
        self.path = os.path.join(self._folder, "s")
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), self.path, json.dumps(given), preload],
            env=given,
            cwd="/",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            shutil.rmtree(self._folder, ignore_errors=True)
            raise RuntimeError(f"the zygote did not start (exit {code})")
        info = json.loads(line)
        self.pid = info["pid"]
        self.read = frozenset(info["read"])

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        shutil.rmtree(self._folder, ignore_errors=True)


class SharedZygote(_Listening):
    """A zygote of the run's (`ZygoteBroker`), as a worker sees it: where to connect, and
    whether it still runs. The controller owns it and ends it with the session."""

    def __init__(self, broker: str, given: dict[str, str], preload: str = "paicli") -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
            conn.connect(broker)
            conn.sendall(json.dumps({"given": given, "preload": preload}).encode())
            answer = json.loads(conn.recv(1 << 20))
        if "error" in answer:
            raise RuntimeError(answer["error"])
        self.path = answer["path"]
        self.pid = answer["pid"]
        self.read = frozenset(answer["read"])

    def alive(self) -> bool:
        return alive(self.pid)

    def close(self) -> None:
        """Nothing: the controller's."""


class ZygoteBroker:
    """In the controller of an xdist run: the run's zygotes, one per set of startup
    variables, started when a worker first asks for that set (over a unix socket whose
    path the workers inherit as PAICLI_TESTS_ZYGOTES) and ended with the session. Each
    worker would otherwise start its own: ~0.8 s of CPU each, a dozen times a run. They
    live as long as the controller, so no worker's end takes a zygote from under another
    worker's test."""

    def __init__(self, prestart: Sequence[str] = ("paicli", "servers")) -> None:
        """`prestart`: the preloads whose usual zygotes are started at once."""
        self._prestart = prestart
        self._folder = tempfile.mkdtemp(prefix="paicli-zygotes-")
        self.path = os.path.join(self._folder, "broker")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._listener.bind(self.path)
        self._listener.listen(64)
        self._by_key: dict[Key, Zygote] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, name="zygote-broker", daemon=True).start()

    def _serve(self) -> None:
        """First the zygotes most tests ask for, started while the controller waits for the
        workers' server and the workers collect (a core is idle then); then one request at
        a time. All from this thread, which lives as long as the controller: a zygote dies
        with the thread that started it (PR_SET_PDEATHSIG)."""
        started = deciding(os.environ)
        for given, preload in (({}, "paicli"), (started, "paicli"), (started, "servers")):
            if preload in self._prestart:
                with contextlib.suppress(RuntimeError):  # a worker asking says so again
                    self._zygote(given, preload)
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:  # closed
                return
            with contextlib.suppress(OSError, ValueError):  # a worker gone mid-request
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            asked = json.loads(conn.recv(1 << 20))
            try:
                zygote = self._zygote(asked["given"], asked["preload"])
            except RuntimeError as exc:
                conn.sendall(json.dumps({"error": str(exc)}).encode())
                return
            answer = {"path": zygote.path, "pid": zygote.pid, "read": sorted(zygote.read)}
            conn.sendall(json.dumps(answer).encode())

    def _zygote(self, given: dict[str, str], preload: str) -> Zygote:
        key = (preload, frozenset(given.items()))
        with self._lock:
            zygote = self._by_key.get(key)
            if zygote is None or not zygote.alive():
                if zygote is not None:
                    zygote.close()
                zygote = self._by_key[key] = Zygote(given, preload)
            return zygote

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            while self._by_key:
                self._by_key.popitem()[1].close()
        shutil.rmtree(self._folder, ignore_errors=True)


class Zygotes:
    """This worker's zygotes, by the values of the variables that decide a start."""

    def __init__(self, *, shared: bool = False) -> None:
        """`shared`: the zygotes are the run's, started by the controller (`ZygoteBroker`,
        when it runs one) and used by every worker; else this object's own."""
        self._broker = os.environ.get(BROKER) if shared else None
        self._by_key: dict[Key, Zygote | SharedZygote] = {}
        self._read: dict[str, frozenset[str]] = {}  # by preload: what its imports read
        self._failed: set[Key] = set()
        self._lock = threading.Lock()
        atexit.register(self.close)

    def _given(self, env: Mapping[str, str], preload: str) -> dict[str, str]:
        return deciding(env, self._read.get(preload, frozenset()))

    def for_env(
        self, env: Mapping[str, str], preload: str = "paicli"
    ) -> Zygote | SharedZygote | None:
        """The zygote with `preload` whose start matches `env`'s (started if needed); None
        if one cannot (the imports read every variable). Thread-safe (a test may start
        paicli in one)."""
        with self._lock:
            return self._for_env(env, preload)

    def _for_env(self, env: Mapping[str, str], preload: str) -> Zygote | SharedZygote | None:
        for _ in range(3):  # a zygote's report can add variables to choose by
            given = self._given(env, preload)
            key = (preload, frozenset(given.items()))
            zygote = self._by_key.pop(key, None)
            if zygote is not None and not zygote.alive():
                zygote.close()  # it died (a test of its own killed it): start another
                zygote = None
            if zygote is None:
                if key in self._failed:
                    return None
                try:
                    if self._broker is None:
                        zygote = Zygote(given, preload)
                    else:
                        zygote = SharedZygote(self._broker, given, preload)
                except RuntimeError:  # its imports fail there (a test blocks a module)
                    self._failed.add(key)
                    return None
                read = self._read[preload] = (
                    self._read.get(preload, frozenset()) | zygote.read - REDONE_IN_CHILD
                )
                if "*" in read:
                    zygote.close()
                    return None
                if len(self._by_key) >= MOST_ZYGOTES:
                    self._by_key.pop(next(iter(self._by_key))).close()
            self._by_key[key] = zygote  # last: the most recently used
            if self._given(env, preload) == given:
                return zygote
        return None

    def close(self) -> None:
        with self._lock:
            while self._by_key:
                self._by_key.popitem()[1].close()

    def pids(self) -> list[int]:
        return [zygote.pid for zygote in self._by_key.values()]


_zygotes = Zygotes(shared=True)


def zygote_for(env: Mapping[str, str]) -> int | None:
    """The pid of the zygote a paicli with `env` is forked from (started if needed)."""
    zygote = _zygotes.for_env(env)
    return None if zygote is None else zygote.pid


def zygote_pids() -> list[int]:
    """The pids of this worker's zygotes (for tests of leftovers)."""
    return _zygotes.pids()


def _forkable(
    argv: Sequence[str], modules: Collection[str], fresh: bool
) -> tuple[list[str], str] | None:
    """The argv after the interpreter, and the preload to fork it from, when `argv` is
    `python -m MODULE ...` (one of `modules`: paicli) or `python SCRIPT ...` (one of our test
    servers, tests/server_programs/, whose start is never the point: the `servers`
    preload) and not `fresh`; else None."""
    if fresh or len(argv) < 2 or argv[0] != sys.executable:
        return None
    rest = [str(arg) for arg in argv[1:]]
    if rest[0] == "-m":
        return (rest, "paicli") if len(rest) > 1 and rest[1] in modules else None
    script = Path(rest[0])
    if script.suffix == ".py" and script.is_absolute() and script.parent == SERVER_PROGRAMS:
        return rest, "servers"
    return None


class ZygoteChild:
    """A forked paicli: pid, exit code (as asyncio/subprocess give it), signals."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        answer = conn.recv(64).decode()
        if not answer.startswith("pid "):
            conn.close()
            raise RuntimeError(f"the zygote did not fork: {answer!r}")
        self.pid = int(answer.split()[1])
        self.returncode: int | None = None
        self.cpu_seconds: float | None = None  # its user + system time, once it has ended
        self._ended: asyncio.Future[int] | None = None

    def _status(self, answer: bytes) -> int:
        self._conn.close()
        if not answer.startswith(b"exit "):
            raise RuntimeError(f"the zygote lost child {self.pid}: {answer!r}")
        _, code, cpu = answer.split()
        self.returncode, self.cpu_seconds = int(code), float(cpu)
        return self.returncode

    def _watch(self) -> asyncio.Future[int]:
        """The exit code as a future, set as soon as the zygote reports it (so `returncode`
        is current without a wait, as asyncio's is)."""
        if self._ended is None:
            loop = asyncio.get_running_loop()
            self._ended = loop.create_future()
            if self.returncode is not None:
                self._ended.set_result(self.returncode)
            else:
                loop.add_reader(self._conn.fileno(), self._on_status, loop)
        return self._ended

    def _on_status(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_reader(self._conn.fileno())
        assert self._ended is not None
        try:
            self._ended.set_result(self._status(self._conn.recv(64)))
        except Exception as exc:
            self._ended.set_exception(exc)

    async def wait(self) -> int:
        return await asyncio.shield(self._watch())

    def poll(self) -> int | None:
        """The exit code if the zygote has reported it, without waiting."""
        if self.returncode is None:
            self._conn.setblocking(False)
            try:
                answer = self._conn.recv(64)
            except BlockingIOError:
                return None
            return self._status(answer)
        return self.returncode

    def wait_blocking(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._conn.setblocking(True)
            self._conn.settimeout(timeout)
            try:
                answer = self._conn.recv(64)
            except TimeoutError:
                raise subprocess.TimeoutExpired(f"paicli (pid {self.pid})", timeout or 0) from None
            return self._status(answer)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def spawn_on_fds(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    fds: tuple[int, int, int],
    session: bool = False,
    terminal: bool = False,
    modules: Collection[str] = ("paicli.cli",),
    zygotes: Zygotes | None = None,
) -> ZygoteChild | None:
    """`argv` forked from a zygote with `fds` as its stdin, stdout and stderr (the caller
    keeps and closes its copies); `session`: a new session, `terminal`: its stdin as the
    controlling terminal. None when it must start fresh instead (see the module).
    `modules` and `zygotes` are for the zygote's own tests (tests/test_zygote.py): with
    `zygotes` given, it forks even where paicli starts fresh."""
    forkable = _forkable(argv, modules, _state["fresh"] and zygotes is None)
    if forkable is None:
        return None
    rest, preload = forkable
    zygote = (zygotes or _zygotes).for_env(env, preload)
    if zygote is None:
        return None
    request = {"argv": rest, "cwd": os.fspath(cwd), "env": dict(env), "session": session}
    request["terminal"] = terminal
    # An exec keeps the signals its parent ignores (and resets those it handles).
    request["ignored"] = [int(sig) for sig in _CATCHABLE if signal.getsignal(sig) == signal.SIG_IGN]
    conn = zygote.connect()
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
    conn.sendmsg([json.dumps(request).encode()], rights)
    return ZygoteChild(conn)
