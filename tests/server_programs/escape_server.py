"""The fault server plus tools that try to get out of a sandbox, for the sandbox tests.

`write_file` and `read_file` touch a path; `connect` opens a TCP connection to a port on
127.0.0.1; `daemon` leaves a process behind (setsid and a double fork) that sleeps with
`marker` on its command line, so a test finds it in the process table whatever PID
namespace it was started in; `leave_cgroup` does the same, the process first moving itself
to the root of every cgroup hierarchy it can write to. Each answers with what happened (the
error's words when refused). Only ever run as a subprocess.
"""

from __future__ import annotations

import json
import os
import socket
import sys
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

ESCAPES: dict[str, tuple[str, dict[str, str]]] = {
    "write_file": ("Write `text` to `path`.", {"path": "string", "text": "string"}),
    "read_file": ("Read `path`.", {"path": "string"}),
    "connect": ("Connect to 127.0.0.1:`port`.", {"port": "integer"}),
    "daemon": ("Leave a sleeping process behind (setsid, double fork).", {"marker": "string"}),
    "leave_cgroup": (
        "Leave a sleeping process behind that first moves to the root cgroup.",
        {"marker": "string"},
    ),
}
EXTRA_TOOLS.update(ESCAPES)
# What the process left behind runs: far longer than any test, so only a kill ends it.
SLEEP = "import time; time.sleep(3600)"


class EscapeServer(FaultServer):
    def list_tools(self, cursor: Any) -> Json:
        return {"tools": [tool_schema(n) for n in [*TOOLS, *ESCAPES]]}

    def call_tool(self, call: Call) -> Json | None:
        args = call.args
        try:
            if call.name == "write_file":
                Path(str(args["path"])).write_text(str(args["text"]))
                return text_result("wrote")
            if call.name == "read_file":
                return text_result("read: " + Path(str(args["path"])).read_text())
            if call.name == "connect":
                with socket.create_connection(("127.0.0.1", int(args["port"])), timeout=5):
                    return text_result("connected")
        except OSError as exc:
            return text_result(f"refused: {exc.strerror or exc}")
        if call.name in ("daemon", "leave_cgroup"):
            moved = leave_behind(str(args["marker"]), call.name == "leave_cgroup")
            return text_result(json.dumps(moved))
        return super().call_tool(call)


def cgroup_roots() -> list[str]:
    """The `cgroup.procs` file at the root of every cgroup hierarchy mounted here."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        ours, _, theirs = line.partition(" - ")
        if theirs.split()[:1] in (["cgroup"], ["cgroup2"]):
            found.append(os.path.join(ours.split()[4], "cgroup.procs"))
    return found


def leave_behind(marker: str, leave_cgroup: bool) -> dict[str, Any]:
    """Start the process that stays; what its attempt to leave the cgroup gave."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        os.close(read_end)
        report: dict[str, Any] = {"moved": [], "errors": []}
        for procs in cgroup_roots() if leave_cgroup else []:
            try:
                Path(procs).write_text("0")
                report["moved"].append(procs)
            except OSError as exc:
                report["errors"].append(exc.strerror)
        os.write(write_end, json.dumps(report).encode())
        # The pipe closes as exec succeeds (it is close-on-exec): the answer waits for it.
        os.execv(sys.executable, [sys.executable, "-c", SLEEP, marker])
    os.close(write_end)
    os.waitpid(child, 0)
    with os.fdopen(read_end, "rb") as pipe:
        result: dict[str, Any] = json.loads(pipe.read())
    return result


def main() -> None:
    EscapeServer(parse_options(sys.argv[1:])).serve()


if __name__ == "__main__":
    main()
