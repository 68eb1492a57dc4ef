"""`python -m paicli.cli.batch_worker [LABEL [OWNER [MEMORY]]]`: one worker of `paicli batch`
(see `paicli.batch.worker`). Its stdout is the result channel: anything else that would
write there (a stray print) is sent to stderr instead. LABEL is not read: it names the batch
in the process table. OWNER (the pid that started it) and MEMORY (bytes) are what it
contains itself to before anything else runs (`paicli.batch.process.contain`)."""

from __future__ import annotations

import os
import sys

from paicli.cli._signals import run_until_signalled

STDOUT, STDERR = 1, 2  # the file descriptors (the worker's pipes to its owner)


def main() -> int:
    channel = os.fdopen(os.dup(STDOUT), "wb")
    os.dup2(STDERR, STDOUT)
    _contained(sys.argv[2:])
    from paicli.batch.worker import reader, serve  # noqa: PLC0415 - after the streams are set
    from paicli.ui.logs import log_to_terminal  # noqa: PLC0415

    log_to_terminal()
    return run_until_signalled(serve(reader(sys.stdin.buffer), channel))


def _contained(given: list[str]) -> None:
    """OWNER [MEMORY] (see `process.contain`); nothing without them (a hand-started worker)."""
    if given:
        from paicli.batch.process import contain  # noqa: PLC0415 - after the streams are set

        try:
            contain(int(given[0]), int(given[1]) if len(given) > 1 else None)
        except ValueError as exc:  # one line: its owner quotes it as the worker's last words
            from paicli.ui.output import err  # noqa: PLC0415 - only then

            err(f"paicli batch: {exc}")
            sys.exit(2)


if __name__ == "__main__":
    sys.exit(main())
