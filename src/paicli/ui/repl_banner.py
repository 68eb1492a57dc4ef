"""The REPL's banner: version, model and folder, the start's problems, the mode's warning,
the servers' status, and the project servers left unapproved (and why)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from paicli._version import __version__
from paicli.escape import terminal_safe
from paicli.permissions.approval import YOLO_WARNING, Mode
from paicli.runtime import Runtime
from paicli.servers.trust import TrustStore, skip_reason
from paicli.ui.mcp_view import status_line


def print_banner(console: Console, runtime: Runtime, custom_problems: Sequence[str]) -> None:
    """The banner, as the REPL shows it once at start."""
    settings = runtime.settings
    model = settings.describe() if settings.configured else "no model"
    console.print(
        Text(f"paicli {__version__}", "bold").append(
            f" · {model} · {terminal_safe(str(runtime.root))}", "dim"
        )
    )
    for problem in [*runtime.problems, *custom_problems]:
        console.print(Text(terminal_safe(problem), "yellow"))
    if runtime.approvals is not None and runtime.approvals.mode is Mode.YOLO:
        console.print(Text(f"⚠ {YOLO_WARNING}. Shift+Tab leaves it.", "bold red"))
    if not settings.configured:
        console.print(Text(terminal_safe(settings.why_not_configured()), "yellow"))
    console.print(status_line(runtime))
    if runtime.skipped:
        names = terminal_safe(", ".join(runtime.skipped))
        console.print(
            Text(
                f"Project servers not approved: {names} (/mcp approve NAME, or pass "
                "--trust-project)",
                "yellow",
            )
        )
        store = TrustStore(runtime.home.trust_store)
        project = runtime.project or runtime.root
        for name in runtime.skipped:  # declined, or --trust-project cannot: say why
            entry = runtime.config.servers.get(name)
            if entry is not None and (entry.unallowed_secrets or store.is_declined(project, entry)):
                reason = skip_reason(entry, project, store)
                console.print(Text(terminal_safe(reason), "yellow"))
    console.print(Text("/help for commands · Ctrl+D to exit", "dim"))
