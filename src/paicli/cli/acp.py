"""`paicli acp`: the ACP agent on stdio (`paicli.acp`), with the run options of the command
line; one line and exit 2 when the optional SDK is not installed."""

from __future__ import annotations

import argparse
import os

from paicli.cli._signals import run_until_signalled
from paicli.run_settings import start_options
from paicli.ui.output import err

__all__ = ["INSTALL_HINT", "run"]

INSTALL_HINT = (
    "paicli acp: the Agent Client Protocol SDK is not installed; install paicli with it: "
    "pip install 'paicli-cli[acp]' (or uv tool install 'paicli-cli[acp]')"
)


def run(options: argparse.Namespace, flags: dict[str, str | None]) -> int:
    try:
        from paicli.acp import serve  # noqa: PLC0415 - imports the SDK
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "acp":
            raise
        err(INSTALL_HINT)
        return 2

    return run_until_signalled(
        serve(start_options(options, flags, hold_servers=False), dict(os.environ))
    )
