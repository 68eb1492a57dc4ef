"""Imports made by two threads at once, caught in a real `paicli` process.

Python 3.11's import locks can fail an import made while another thread is importing
(gh-91351: `_DeadlockError`, "cannot release un-acquired lock"), rarely, so a crash count
proves little. paicli's rule is structural instead: a thread it starts (the model client's
loader, the sandbox probe) imports only while no other thread does. This module checks the
rule itself. Run as a script (`python tests/import_watch.py REPORT ARGS...`), it runs
`paicli ARGS` in this process with the import system's loader wrapped: every module loaded
while another thread was loading one is written to REPORT (one JSON line each), and a last
line says the run ended. `watched_paicli` runs that process and reads the report.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


@dataclass(frozen=True)
class WatchedRun:
    returncode: int
    stdout: str
    stderr: str
    clashes: list[dict[str, Any]]  # a module loaded while another thread loaded another
    ended: bool  # the process reached its end (the report is whole)


async def watched_paicli(
    args: list[str],
    *,
    cwd: Path,
    environ: Mapping[str, str],
    report: Path,
    timeout: float = 60,
    stdin: bytes | None = None,
) -> WatchedRun:
    """`paicli ARGS` in a process of its own, its imports watched (see the module); with
    ARGS `--module NAME ...`, `python -m NAME ...` instead. `stdin`: what it reads."""
    _read(report, clear=True)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE),
        str(report),
        *args,
        cwd=cwd,
        env=dict(environ),
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(timeout):
        out, err = await process.communicate(stdin)
    lines = _read(report)
    ended = bool(lines) and lines[-1] == {"ended": True}
    assert process.returncode is not None
    return WatchedRun(
        process.returncode,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
        [line for line in lines if "module" in line],
        ended,
    )


def _read(report: Path, *, clear: bool = False) -> list[dict[str, Any]]:
    """The report's lines (none when it is missing); `clear`: removed first."""
    if clear:
        report.unlink(missing_ok=True)
    if not report.exists():
        return []
    return [json.loads(line) for line in report.read_text().splitlines()]


def _watch(report: Path) -> None:
    """Wrap the loader that every import of a module not yet loaded goes through (the C
    import code looks `_find_and_load` up on each such import)."""
    import importlib._bootstrap as bootstrap  # noqa: PLC0415

    loading: dict[int, list[str]] = {}  # thread id -> the modules it is loading, outermost first
    guard = threading.RLock()  # a signal handler may import while it is held
    original = bootstrap._find_and_load  # type: ignore[attr-defined]
    sink = report.open("a", encoding="utf-8", buffering=1)

    def find_and_load(name: str, import_: Any) -> Any:
        me = threading.get_ident()
        with guard:
            others = [stack[0] for thread, stack in loading.items() if thread != me and stack]
            loading.setdefault(me, []).append(name)
        if others:
            thread = threading.current_thread().name
            sink.write(json.dumps({"module": name, "thread": thread, "beside": others}) + "\n")
        try:
            return original(name, import_)
        finally:
            with guard:
                loading[me].pop()

    bootstrap._find_and_load = find_and_load  # type: ignore[attr-defined]

    import atexit  # noqa: PLC0415

    atexit.register(lambda: sink.write(json.dumps({"ended": True}) + "\n"))


if __name__ == "__main__":
    _watch(Path(sys.argv[1]))
    module, rest = "paicli.cli", sys.argv[2:]
    if rest[:1] == ["--module"]:
        module, rest = rest[1], rest[2:]
    sys.argv = [module, *rest]
    sys.path.pop(0)  # this folder: paicli is run as it is installed
    import runpy

    runpy.run_module(module, run_name="__main__", alter_sys=True)
