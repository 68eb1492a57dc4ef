"""The fault server plus tools that use resources without end, for the limits tests.

`allocate` keeps 1 MiB blocks until allocation fails (`--die-on-oom`: then the server exits
on the spot, as V8 does); `spin` burns CPU; `open_files` opens files until the system says
no; `fork` starts children that sleep until killed, until a fork is refused; `escape`
starts one that leaves the process group; `crash_once` (and its variants annotated
idempotent and read-only) and `hang_once` fail the first time (marked by a flag file, which
outlives a restart) and answer after that. Each answers
with what it managed and the error that stopped it. Only ever run as a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

# Run as a script: the repository root goes on the path so the fault server imports.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.server_programs.fault_server import (
    EXTRA_TOOLS,
    TOOLS,
    Call,
    FaultServer,
    Json,
    parse_options,
    text_result,
    tool_schema,
)

HOGS: dict[str, tuple[str, dict[str, str]]] = {
    "allocate": ("Allocate 1 MiB blocks until that fails.", {}),
    "spin": ("Burn CPU until stopped.", {}),
    "open_files": ("Open files until that fails.", {}),
    "fork": ("Start sleeping children until a fork fails; their pids.", {}),
    "escape": ("Start a child that leaves the process group and ignores SIGTERM.", {}),
    "crash_once": (
        "Exit at once unless the `flag` file exists (it is made first).",
        {"flag": "string"},
    ),
    "hang_once": (
        "Never answer unless the `flag` file exists (it is made first).",
        {"flag": "string"},
    ),
    "crash_once_idempotent": ("crash_once, annotated idempotentHint.", {"flag": "string"}),
    "crash_once_read": ("crash_once, annotated readOnlyHint.", {"flag": "string"}),
}
# What the crash_once variants say of themselves (a repeat after a crash believes it).
HINTS = {
    "crash_once_idempotent": {"idempotentHint": True},
    "crash_once_read": {"readOnlyHint": True},
}
EXTRA_TOOLS.update(HOGS)
DIE_ON_OOM = "--die-on-oom" in sys.argv
# Children started by `fork` sleep this long, far beyond any test: only a kill ends them.
CHILD_SLEEP = 3600


class HogServer(FaultServer):
    def list_tools(self, cursor: Any) -> Json:
        tools = [tool_schema(n) for n in [*TOOLS, *HOGS]]
        for tool in tools:
            if tool["name"] in HINTS:
                tool["annotations"] = HINTS[tool["name"]]
        return {"tools": tools}

    def call_tool(self, call: Call) -> Json | None:
        if call.name == "allocate":
            return allocate()
        if call.name == "spin":
            while True:
                pass
        if call.name == "open_files":
            return open_files()
        if call.name == "fork":
            return fork()
        if call.name == "escape":
            return escape()
        if call.name in ("crash_once", "hang_once", *HINTS):
            flag = Path(str(call.args["flag"]))
            if flag.exists():
                return text_result(f"ok after {call.name.split('_')[0]}")
            flag.touch()
            if call.name.startswith("crash_once"):
                os._exit(3)
            call.cancelled.wait(CHILD_SLEEP)
            return None
        return super().call_tool(call)


def allocate() -> Json:
    blocks = []
    try:
        while True:
            blocks.append(bytearray(1024 * 1024))
    except MemoryError:
        count = len(blocks)
        blocks.clear()
        if DIE_ON_OOM:
            os.write(2, b"fatal: out of memory\n")
            os._exit(134)
        return text_result(f"allocated {count} MiB, then MemoryError")


def open_files() -> Json:
    opened: list[int] = []
    try:
        while True:
            opened.append(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        result = text_result(json.dumps({"opened": len(opened), "error": exc.strerror}))
    for fd in opened:
        os.close(fd)
    return result


def fork() -> Json:
    children: list[int] = []
    try:
        while len(children) < 10_000:  # a bound for a run without a limit
            pid = os.fork()
            if pid == 0:
                time.sleep(CHILD_SLEEP)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        return text_result(json.dumps({"children": children, "error": exc.strerror}))
    return text_result(json.dumps({"children": children, "error": None}))


def escape() -> Json:
    pid = os.fork()
    if pid == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(CHILD_SLEEP)
        os._exit(0)
    return text_result(json.dumps({"pid": pid}))


def main() -> None:
    argv = [a for a in sys.argv[1:] if a != "--die-on-oom"]
    HogServer(parse_options(argv)).serve()


if __name__ == "__main__":
    main()
