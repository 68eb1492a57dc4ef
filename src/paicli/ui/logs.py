"""Log records on the terminal: warnings and errors from every logger (and Python's warnings)
as escaped, redacted lines on stderr through `paicli.ui.output.err`, and a traceback in
`logs/paicli.log`, never on the screen. Set up first thing by every command, so this module
loads only the logging package: the output path (escaping, the redactor) loads with the first
record, not before the REPL's prompt.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from paicli.home import PaicliHome

__all__ = ["log_to_terminal"]


class _EscapingHandler(logging.Handler):
    """One escaped, redacted line per record on stderr; a traceback goes to the log file."""

    def __init__(self, log_file: os.PathLike[str] | None) -> None:
        super().__init__()
        self._log_file = log_file

    def emit(self, record: logging.LogRecord) -> None:
        from paicli.ui.output import err  # noqa: PLC0415 - loaded with the first record, see module

        try:
            line = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                line = f"{line} ({type(error).__name__}: {error})"
                if self._log_file is not None:
                    line += f"; details in {self._log_file}"
                    self._keep(record)
            err(line)
        except Exception:
            self.handleError(record)

    def _keep(self, record: logging.LogRecord) -> None:
        # Imported only when a traceback is kept: a plain run never needs them.
        import traceback  # noqa: PLC0415

        from paicli.private_files import make_private_dir  # noqa: PLC0415
        from paicli.ui.screen_secrets import screen_text  # noqa: PLC0415

        assert self._log_file is not None and record.exc_info is not None
        text = "".join(traceback.format_exception(*record.exc_info))
        data = screen_text(f"{record.getMessage()}\n{text}\n").encode("utf-8", "replace")
        try:
            make_private_dir(Path(self._log_file).parent)
            fd = os.open(self._log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            pass  # the one line on the screen still says what happened


def log_to_terminal() -> None:
    """Warnings and errors from every logger (and Python's warnings) as escaped, redacted
    lines on stderr, instead of through logging's last-resort handler, which writes them
    raw with their tracebacks."""
    handler = _EscapingHandler(PaicliHome.from_environ().root / "logs" / "paicli.log")
    logging.basicConfig(level=logging.WARNING, format="%(message)s", handlers=[handler])
    logging.captureWarnings(True)
