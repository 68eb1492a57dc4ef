"""Trust for project servers: a repository's config can run any command, so a project
server runs only after the user approved that exact command line or URL once.

Approvals live in `$PAICLI_HOME/trusted-servers.json`, keyed by the project folder and a
hash of the server's resolved config (command, args, env, cwd, url, headers): any change
asks again. User-level servers are the user's own and need no approval.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path

from paicli.mcp import HttpServer, StdioServer
from paicli.private_files import write_atomically

from .config import ServerEntry

__all__ = ["TrustAsk", "TrustStore", "approve_servers", "describe", "fingerprint", "needs_approval"]


def fingerprint(entry: ServerEntry) -> str:
    """A stable hash of what the server would run or reach."""
    spec = entry.spec
    if isinstance(spec, StdioServer):
        what: object = ["stdio", spec.command, list(spec.args), dict(spec.env), spec.cwd]
    elif isinstance(spec, HttpServer):
        what = ["http", spec.url, dict(spec.headers), spec.transport]
    else:
        what = ["invalid", dict(entry.raw)]
    canonical = json.dumps(what, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def describe(entry: ServerEntry) -> str:
    """The exact command line or URL the user is asked to approve (env names shown,
    their values masked so a prompt never shows a secret)."""
    spec = entry.spec
    if isinstance(spec, StdioServer):
        line = shlex.join([spec.command, *spec.args])
        if spec.env:
            line = " ".join(f"{k}=***" for k in sorted(spec.env)) + " " + line
        if spec.cwd:
            line += f"   (in {spec.cwd})"
        return line
    if isinstance(spec, HttpServer):
        headers = "".join(f"  [{k}: ***]" for k in sorted(spec.headers))
        return f"{spec.url}{headers}"
    return "(invalid config)"


def needs_approval(entry: ServerEntry) -> bool:
    """Project servers (paicli's or Claude Code's project file) need the user's approval."""
    return entry.scope != "user"


class TrustStore:
    """Approved (project, server fingerprint) pairs, stored as JSON at `path`
    (`PaicliHome.trust_store`)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            k: [h for h in v if isinstance(h, str)] for k, v in data.items() if isinstance(v, list)
        }

    def is_approved(self, project: Path, entry: ServerEntry) -> bool:
        if not needs_approval(entry):
            return True
        return fingerprint(entry) in self._read().get(str(project.resolve()), [])

    def approve(self, project: Path, entry: ServerEntry) -> None:
        data = self._read()
        key = str(project.resolve())
        hashes = data.setdefault(key, [])
        if fingerprint(entry) not in hashes:
            hashes.append(fingerprint(entry))
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        write_atomically(self._path, text.encode("utf-8"))


# Asked once per unapproved project server before it may start: True runs it (and remembers).
TrustAsk = Callable[[ServerEntry], bool]


def approve_servers(
    entries: Iterable[ServerEntry],
    project: Path,
    store: TrustStore,
    *,
    trust_all: bool,
    ask: TrustAsk | None,
) -> tuple[list[ServerEntry], list[str]]:
    """The entries allowed to run, and the names of unapproved project servers skipped.

    `trust_all` is `--trust-project`; `ask` is None in non-interactive runs.
    """
    allowed: list[ServerEntry] = []
    skipped: list[str] = []
    for entry in entries:
        runnable = entry.disabled or entry.spec is None or not needs_approval(entry)
        if runnable or trust_all or store.is_approved(project, entry):
            allowed.append(entry)
        elif ask is not None and ask(entry):
            store.approve(project, entry)
            allowed.append(entry)
        else:
            skipped.append(entry.name)
    return allowed, skipped
