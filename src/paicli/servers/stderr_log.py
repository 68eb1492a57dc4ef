"""Where a stdio server's stderr is kept: `{log_dir}/{name}.log`, private, one per server.

The library writes the lines (`StdioServer(stderr_file=...)`: timed, rotated, each through
the redactor the screen uses); this module only names the file, makes it private, and
marks where each start begins, so `paicli mcp logs` tells one run from the next. A file
that cannot be written costs nothing here: the library reports an unusable log itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
from pathlib import Path

from paicli.mcp import HttpServer, StdioServer
from paicli.private_files import make_private_dir
from paicli.redact import Redactor, environment_secrets

__all__ = ["mark_run", "with_log_file"]


def with_log_file(
    spec: StdioServer | HttpServer, log_dir: Path | None, name: str
) -> StdioServer | HttpServer:
    """`spec` writing its stderr to `{log_dir}/{name}.log` (a stdio server with no log file
    of its own; anything else is returned as it is), through the redactor the screen uses:
    its own env values, the environment's secret-named variables, secret shapes."""
    if not isinstance(spec, StdioServer) or not log_dir or spec.stderr_file is not None:
        return spec
    redactor = Redactor([*spec.env.values(), *environment_secrets(os.environ)])
    log_file = log_dir / f"{name}.log"
    with contextlib.suppress(OSError):  # the library then reports the unusable folder
        make_private_dir(log_dir)
        # A log an earlier paicli left readable to others becomes private now.
        if log_file.exists():
            log_file.chmod(0o600)
    return dataclasses.replace(spec, stderr_file=str(log_file), stderr_filter=redactor.redact_text)


def mark_run(spec: StdioServer | HttpServer, name: str, restarts: int) -> None:
    """A line in the server's stderr log where this start begins, with the time (and which
    restart it is), when it has a log."""
    if not isinstance(spec, StdioServer) or spec.stderr_file is None:
        return
    when = datetime.datetime.now().isoformat(sep=" ", timespec="seconds")
    attempt = f", restart {restarts}" if restarts else ""
    line = f"----- paicli: {name} started {when}{attempt} -----\n"
    with contextlib.suppress(OSError):  # the library reports an unusable log file itself
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = os.open(Path(spec.stderr_file), flags, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as file:
            file.write(line)
