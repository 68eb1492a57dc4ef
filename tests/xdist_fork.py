"""pytest-xdist workers forked from one warm interpreter, not started one by one.

Each worker `-n N` starts is a new Python that imports pytest, the model SDK, aiohttp,
prompt_toolkit, paicli, the ACP and MCP SDKs and langchain before its first test: about
three seconds of CPU each, paid N times over on a two-core machine, before any test runs.
Here, as xdist sets up its workers (`pytest_xdist_setupnodes` in tests/conftest.py), the
controller starts one fork server (tests/zygote_server.py with the `pytest` preload) and
points each `popen` worker at this file as its "python": run as

    python -S tests/xdist_fork.py SOCKET -u -c CODE

(what execnet runs a worker with, after the interpreter), it hands its stdin, stdout and
stderr to the server, which forks a worker that runs CODE as `python -u -c` would, and it
waits for that worker to end and ends the same way. Anything else (other flags, a server
that does not answer) runs a fresh interpreter in its place, as without this file.

A forked worker is the process execnet talks to, with the environment, folder and stdio this
launcher had; what it cannot redo is the hash seed and the frozen import objects (as for
tests/zygote.py). It dies with the server, which dies with the controller; the controller
closes the server when the session ends. PAICLI_TESTS_FRESH=1 keeps fresh workers.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import sys
from typing import Any

WORKER_ARGV = ("-u", "-c")
# What the server imports (tests/zygote_server.py's PRELOADS): `pytest` unless this says
# `paicli` (`make test-fast`, and tests/test_xdist_fork.py's own small run, which need little
# of the rest).
PRELOAD = "PAICLI_TESTS_WORKER_PRELOAD"


def setup_nodes(config: Any, specs: list[Any]) -> None:
    """In the controller (tests/conftest.py's `pytest_xdist_setupnodes`): start the run's
    zygote broker (tests/zygote.py) and the workers' server, both closed with the session,
    and point plain `popen` workers at this file; nothing when workers start fresh."""
    import shlex  # noqa: PLC0415 - the controller only: the launcher stays light

    from tests import zygote  # noqa: PLC0415

    os.environ.pop(zygote.BROKER, None)  # a run's own, never an outer run's
    if zygote.FRESH:
        return
    preload = os.environ.get(PRELOAD, "pytest")
    # The run's zygotes, shared by its workers. The usual ones are started at once for the
    # whole suite (`testpaths`: no path given), not for a few modules, which may need none;
    # the in-memory tier starts no test server.
    whole = config.args_source == config.ArgsSource.TESTPATHS
    prestart = ("paicli", "servers") if preload == "pytest" else ("paicli",)
    broker = zygote.ZygoteBroker(prestart if whole else ())
    config.add_cleanup(broker.close)
    os.environ[zygote.BROKER] = broker.path
    plain = [spec for spec in specs if spec.popen and not spec.python and not spec.chdir]
    if not plain or any(spec.dont_write_bytecode for spec in plain):
        return
    try:
        server = zygote.Zygote(dict(os.environ), preload=preload)
    except RuntimeError as exc:
        print(f"tests/xdist_fork.py: workers start fresh: {exc}", file=sys.stderr)
        return
    config.add_cleanup(server.close)
    launcher = shlex.join([sys.executable, "-S", __file__, server.path])
    for spec in plain:
        spec.python = launcher


def _fresh(argv: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, *argv])


def _ended(code: int) -> None:
    """End as the worker did: its exit code, or the signal that killed it."""
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def main() -> None:
    path, argv = sys.argv[1], sys.argv[2:]
    if tuple(argv[:2]) != WORKER_ARGV or len(argv) != 3:
        _fresh(argv)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
    except OSError:
        _fresh(argv)
    catchable = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}
    request = {
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "session": False,
        "terminal": False,
        "ignored": [int(s) for s in catchable if signal.getsignal(s) == signal.SIG_IGN],
    }
    # The terminal's Ctrl+C reaches the worker itself (the server is in this process group).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", (0, 1, 2)).tobytes())]
    conn.sendmsg([json.dumps(request).encode()], rights)
    answer = conn.recv(64).decode()
    if not answer.startswith("pid "):
        _fresh(argv)
    pid = int(answer.split()[1])
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda number, _: os.kill(pid, number))
    status = conn.recv(64).decode().split()
    _ended(int(status[1]) if status[:1] == ["exit"] else 1)


if __name__ == "__main__":
    main()
