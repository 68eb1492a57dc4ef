"""Trust for project servers: a repository's config can run any command and read the user's
environment, so a project server runs only after the user approved its entry once.

What is approved is the whole entry exactly as written in its file (never expanded), with its
name and scope: any change to any key asks again, and the question shows what changed since
the last approval. Approvals live in `$PAICLI_HOME/trusted-servers.json`, per project folder.
The question names every `${VAR}` the entry reads, flags the secret-looking ones
(`paicli.secret_names`), warns when a value lands on a command line that `ps` shows to every
local user and when the command runs a shell line or downloaded code (`_launchers`).
A secret-looking variable its project is not allowed (the user's config.toml,
`[projects."<path>"] allow_secrets`) is a question of its own, one per variable, default no:
the server runs without it (`ServerEntry.withheld`) until the user agrees to pass it, and
the answers are kept with the approved entry. `--trust-project` runs unapproved project
servers without asking, except one reading such a variable or loosening its OS sandbox
(`"sandbox": false`, hosts, writes outside the project; shown as warnings in the question):
that one still needs the user's own "yes".
A "no" is remembered too, per entry as written: the next run does not ask about that entry
again (until it changes, or `paicli mcp approve NAME` approves it). Several new servers are
asked about in one question. User-level servers are the user's own and need no approval.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paicli.private_files import write_atomically
from paicli.secret_names import looks_secret
from paicli.servers._launchers import launcher_warnings
from paicli.servers._target import target_line
from paicli.servers.config import REPOSITORY_SCOPES, ServerEntry
from paicli.servers.containment import loosened, loosening, sandbox_line

__all__ = [
    "Passing",
    "TrustAnswer",
    "TrustAsk",
    "TrustRequest",
    "TrustStore",
    "approve_servers",
    "describe",
    "fingerprint",
    "needs_approval",
    "skip_lines",
    "skip_reason",
    "target_line",
    "trust_request",
    "withheld_reason",
]

# Older versions of a server stay approved (switching branches need not ask again), up to
# this many per server: enough for a few branches, bounded for a config that keeps changing.
MAX_VERSIONS = 20
_STORE_VERSION = 2
# Keys `describe` shows on its line; `trust_request` lists the others as written.
_TARGET_KEYS = ("type", "command", "args", "env", "cwd", "url", "headers")
# The most lines (and names in the line of unapproved servers) said of skipped servers.
_MOST_SKIP_LINES = 10


def fingerprint(entry: ServerEntry) -> str:
    """A stable hash of the whole entry as written, with its name and scope."""
    what = {"name": entry.name, "scope": entry.scope, "entry": entry.raw}
    canonical = json.dumps(what, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def describe(entry: ServerEntry) -> str:
    """The command line or URL as written (`${VAR}` never expanded). The values of env and
    headers of the user's own servers are masked (they may be the user's secrets); a
    repository's are shown, since they came with it and the user must see what runs."""
    if entry.spec is None:
        return "(invalid config)"
    return target_line(entry.raw, mask=not needs_approval(entry))


def needs_approval(entry: ServerEntry) -> bool:
    """Project servers (paicli's or Claude Code's project file) need the user's approval."""
    return entry.scope in REPOSITORY_SCOPES


@dataclass(frozen=True, slots=True)
class TrustRequest:
    """Everything the user is shown before a project server may run.

    `target` is `describe(entry)`, `settings` the entry's other keys as written (JSON, "" when
    none); `variables` every `${VAR}` it reads, `secrets` those that look secret,
    `on_command_line` those expanded into a command line (visible to local users); `ignored`
    the keys paicli ignores; `changes` a diff of the entry against its last approved version
    (empty when it was never approved); `launchers` warnings about its command (a shell
    line, downloaded code). `confirm` are the secrets asked about one by one, each passed
    only on its own yes; with `approved` the server itself was approved before and only they
    are asked. `sandbox` is the OS sandbox it would run in ("" for an HTTP server), and
    `sandbox_warnings` what its entry asks beyond the project's default (the sandbox off,
    hosts, writes outside the project): the approval covers them, as part of the entry.
    """

    entry: ServerEntry
    target: str
    settings: str
    variables: tuple[str, ...]
    secrets: tuple[str, ...]
    on_command_line: tuple[str, ...]
    ignored: tuple[str, ...]
    changes: tuple[str, ...]
    launchers: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()
    approved: bool = False
    sandbox: str = ""
    sandbox_warnings: tuple[str, ...] = ()


def trust_request(
    entry: ServerEntry,
    previous: Mapping[str, object] | None,
    *,
    confirm: Sequence[str] | None = None,
    approved: bool = False,
) -> TrustRequest:
    """The question for `entry`; `previous` is its last approved entry, if any; `confirm`
    the secrets to ask about (default: all it does not pass yet, `entry.withheld`)."""
    names = tuple(dict.fromkeys(use.name for use in entry.variables))
    visible = dict.fromkeys(use.name for use in entry.variables if use.on_command_line)
    others = {k: v for k, v in entry.raw.items() if k not in _TARGET_KEYS}
    changes: tuple[str, ...] = ()
    if previous is not None:
        lines = difflib.unified_diff(_lines(previous), _lines(entry.raw), lineterm="", n=1)
        changes = tuple(line for line in lines if not line.startswith(("---", "+++")))
    return TrustRequest(
        entry=entry,
        target=describe(entry),
        settings=json.dumps(others, ensure_ascii=False) if others else "",
        variables=names,
        secrets=tuple(name for name in names if looks_secret(name)),
        on_command_line=tuple(visible),
        ignored=entry.ignored,
        changes=changes,
        launchers=launcher_warnings(entry.raw),
        confirm=tuple(entry.withheld if confirm is None else confirm),
        approved=approved,
        sandbox="" if entry.containment is None else sandbox_line(entry.containment),
        sandbox_warnings=loosening(entry.containment),
    )


def skip_reason(entry: ServerEntry, project: Path, store: TrustStore | None = None) -> str:
    """Why an unapproved project server did not start, and what would start it, on one line
    (with `store`, a server the user declined says so)."""
    reason = _particular_reason(entry, project, store)
    return reason or f"skipping unapproved project server {entry.name!r} (pass --trust-project)"


def skip_lines(
    entries: Iterable[ServerEntry], project: Path, store: TrustStore | None = None
) -> list[str]:
    """`skip_reason` for the screen: the servers merely unapproved on one line together, the
    others a line each, at most `_MOST_SKIP_LINES` lines (a repository listing thousands of
    servers would otherwise push everything else off the screen)."""
    lines, plain = [], []
    for entry in entries:
        reason = _particular_reason(entry, project, store)
        if reason is None:
            plain.append(entry.name)
        else:
            lines.append(reason)
    if plain:
        shown = ", ".join(repr(name) for name in plain[:_MOST_SKIP_LINES])
        more = max(len(plain) - _MOST_SKIP_LINES, 0)
        which = (
            f"{len(plain)} unapproved project servers:"
            if plain[1:]
            else "unapproved project server"
        )
        shown += f" and {more} more" if more else ""
        lines.insert(0, f"skipping {which} {shown} (pass --trust-project)")
    if len(lines) > _MOST_SKIP_LINES:
        left = len(lines) - _MOST_SKIP_LINES + 1
        lines[_MOST_SKIP_LINES - 1 :] = [
            f"and {left} more project servers not started (paicli mcp list names them)"
        ]
    return lines


def _particular_reason(entry: ServerEntry, project: Path, store: TrustStore | None) -> str | None:
    if store is not None and store.is_declined(project, entry):
        return (
            f"project server {entry.name!r} is not started: you declined it as it is now "
            f"(paicli mcp approve {entry.name}, or /mcp approve {entry.name}, runs it)"
        )
    if loosened(entry.containment):
        return (
            f"skipping project server {entry.name!r}: its entry loosens its OS sandbox "
            f"({loosened(entry.containment)}), which --trust-project does not accept "
            f"(approve it in a terminal, or: paicli mcp approve {entry.name})"
        )
    if entry.unallowed_secrets:
        names = ", ".join(entry.unallowed_secrets)
        return (
            f"skipping project server {entry.name!r}: it reads {names}, which look secret and "
            f"--trust-project does not pass (approve it in a terminal, or allow them in "
            f'config.toml: [projects."{project.resolve()}"] allow_secrets)'
        )
    return None


def withheld_reason(entry: ServerEntry) -> str:
    """Which secrets a project server runs without, and how to pass them, on one line."""
    names = ", ".join(entry.withheld)
    flags = " ".join(f"--secret {name}" for name in entry.withheld)
    one = len(entry.withheld) == 1
    return (
        f"project server {entry.name!r} runs without {names}, which "
        f"{'looks' if one else 'look'} secret and you have not agreed to pass (paicli mcp "
        f"approve {entry.name} {flags} passes {'it' if one else 'them'})"
    )


class TrustStore:
    """Approved and declined project server entries, stored as JSON at `path`
    (`PaicliHome.trust_store`): per project folder, a list of approval records (server,
    scope, hash, entry as written) under "projects", and of declined ones (server, scope,
    hash) under "declined", which a version of paicli that knows no declines ignores."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def _load(self) -> dict[str, dict[str, list[dict[str, object]]]]:
        """Both maps, "projects" and "declined": folder to its records."""
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            data = {}
        # Version 1 kept bare hashes of expanded values: they match nothing now, so they go.
        if not isinstance(data, dict) or data.get("version") != _STORE_VERSION:
            data = {}
        return {key: _by_folder(data.get(key)) for key in ("projects", "declined")}

    def _save(self, data: dict[str, dict[str, list[dict[str, object]]]]) -> None:
        document = {"version": _STORE_VERSION, **data}
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
        write_atomically(self._path, text.encode())

    def is_approved(self, project: Path, entry: ServerEntry) -> bool:
        if not needs_approval(entry):
            return True
        wanted = fingerprint(entry)
        return any(r.get("sha256") == wanted for r in self._records(project, entry))

    def is_declined(self, project: Path, entry: ServerEntry) -> bool:
        """Whether the user said no to this very entry (a changed entry is asked about)."""
        wanted = fingerprint(entry)
        records = self._load()["declined"].get(str(project.resolve()), [])
        return any(r.get("sha256") == wanted for r in records)

    def previous(self, project: Path, entry: ServerEntry) -> Mapping[str, object] | None:
        """The entry as written when this server was last approved, if ever."""
        for record in reversed(self._records(project, entry)):
            written = record.get("entry")
            if isinstance(written, dict):
                return written
        return None

    def approve(self, project: Path, entry: ServerEntry) -> None:
        """Remember the entry as approved (and no longer declined)."""
        data = self._load()
        folder = str(project.resolve())
        records = data["projects"].setdefault(folder, [])
        wanted = fingerprint(entry)
        answers = _secret_answers(records, wanted)  # approving again keeps them
        records[:] = [r for r in records if r.get("sha256") != wanted]
        record: dict[str, object] = {
            "server": entry.name,
            "scope": entry.scope,
            "sha256": wanted,
            "entry": entry.raw,
        }
        records.append({**record, "secrets": answers} if answers else record)
        mine = [r for r in records if _same_server(r, entry)]
        for stale in mine[:-MAX_VERSIONS]:
            records.remove(stale)
        declined = data["declined"].get(folder, [])
        declined[:] = [r for r in declined if r.get("sha256") != wanted]
        self._save(data)

    def secret_answers(self, project: Path, entry: ServerEntry) -> dict[str, bool]:
        """The user's answers about passing each secret-looking variable to this very entry
        (True: pass it), kept with its approval."""
        return _secret_answers(self._records(project, entry), fingerprint(entry))

    def answer_secrets(
        self, project: Path, entry: ServerEntry, answers: Mapping[str, bool]
    ) -> None:
        """Remember whether to pass each secret in `answers` to the entry as it is (which must
        be approved: the answers are kept with its approval)."""
        data = self._load()
        wanted = fingerprint(entry)
        for record in data["projects"].get(str(project.resolve()), []):
            if record.get("sha256") == wanted and _same_server(record, entry):
                kept = record.get("secrets")
                record["secrets"] = {**(kept if isinstance(kept, dict) else {}), **answers}
                self._save(data)
                return
        raise ValueError(f"{entry.name!r} is not approved as it is")

    def decline(self, project: Path, entry: ServerEntry) -> None:
        """Remember the user's no to the entry as it is, so it is not asked again."""
        data = self._load()
        records = data["declined"].setdefault(str(project.resolve()), [])
        wanted = fingerprint(entry)
        # One no per server: a newer version declined replaces the older one.
        records[:] = [r for r in records if not _same_server(r, entry)]
        records.append({"server": entry.name, "scope": entry.scope, "sha256": wanted})
        self._save(data)

    def _records(self, project: Path, entry: ServerEntry) -> list[dict[str, object]]:
        records = self._load()["projects"].get(str(project.resolve()), [])
        return [r for r in records if _same_server(r, entry)]


@dataclass(frozen=True, slots=True)
class TrustAnswer:
    """The user's answer to a trust question: the project servers that may run (the others
    asked about are declined) and, by server, the secrets it may be given (the others asked
    about are not passed, and that is remembered as well)."""

    servers: frozenset[str] = frozenset()
    secrets: Mapping[str, frozenset[str]] = field(default_factory=dict)


# Asked once, all at once, about every unapproved project server that was not declined and
# every approved one with secrets not answered yet; None when there was no answer (end of
# input: nothing is remembered).
TrustAsk = Callable[[Sequence[TrustRequest]], TrustAnswer | None]
# `LoadedConfig.passing`: an entry loaded again with the secrets the user agreed to passed.
Passing = Callable[[ServerEntry, Collection[str]], ServerEntry]


def approve_servers(
    entries: Iterable[ServerEntry],
    project: Path,
    store: TrustStore,
    *,
    trust_all: bool,
    ask: TrustAsk | None,
    passing: Passing,
) -> tuple[list[ServerEntry], list[str]]:
    """The entries allowed to run, each passing the secrets the user agreed to, and the
    names of unapproved project servers skipped.

    `trust_all` is `--trust-project`: it runs unapproved project servers without asking,
    but not one reading a secret-looking variable its project is not allowed; `ask` is None
    in non-interactive runs, where a secret not agreed to is simply not passed
    (`withheld_reason` says so). An entry the user declined before is not asked about again
    (`skip_reason` says so, and how to approve it).
    """
    allowed: list[ServerEntry] = []
    skipped: list[str] = []
    pending: list[ServerEntry] = []
    for entry in entries:
        runnable = entry.disabled or entry.spec is None or not needs_approval(entry)
        # What a repository asks beyond its sandbox, like a secret, needs the user's own yes.
        waved_through = (
            trust_all and not entry.unallowed_secrets and not loosening(entry.containment)
        )
        if runnable or waved_through or store.is_approved(project, entry):
            allowed.append(entry)
        elif ask is None or store.is_declined(project, entry):
            skipped.append(entry.name)
        else:
            pending.append(entry)
    requests = [
        trust_request(e, store.previous(project, e), confirm=_unanswered(e, project, store))
        for e in pending
    ]
    for entry in allowed:
        if not entry.disabled and entry.spec is not None and entry.withheld:
            unanswered = _unanswered(entry, project, store)
            if unanswered:
                requests.append(trust_request(entry, None, confirm=unanswered, approved=True))
    answer = ask(requests) if requests and ask is not None else None
    for entry in pending:
        if answer is not None and entry.name in answer.servers:
            store.approve(project, entry)
            allowed.append(entry)
            continue
        if answer is not None:
            store.decline(project, entry)
        skipped.append(entry.name)
    if answer is not None:
        _remember_secrets(requests, answer, project, store)
    return [_with_agreed(e, project, store, passing) for e in allowed], skipped


def _unanswered(entry: ServerEntry, project: Path, store: TrustStore) -> tuple[str, ...]:
    answered = store.secret_answers(project, entry)
    return tuple(name for name in entry.withheld if name not in answered)


def _remember_secrets(
    requests: Iterable[TrustRequest], answer: TrustAnswer, project: Path, store: TrustStore
) -> None:
    """Keep the answer about each secret asked, for the servers that now run."""
    for request in requests:
        name = request.entry.name
        if request.confirm and (request.approved or name in answer.servers):
            agreed = answer.secrets.get(name, frozenset())
            said = {secret: secret in agreed for secret in request.confirm}
            store.answer_secrets(project, request.entry, said)


def _with_agreed(
    entry: ServerEntry, project: Path, store: TrustStore, passing: Passing
) -> ServerEntry:
    if not entry.withheld:
        return entry
    answers = store.secret_answers(project, entry)
    return passing(entry, [name for name in entry.withheld if answers.get(name) is True])


def _by_folder(value: object) -> dict[str, list[dict[str, object]]]:
    if not isinstance(value, dict):
        return {}
    return {
        str(folder): [r for r in records if isinstance(r, dict)]
        for folder, records in value.items()
        if isinstance(records, list)
    }


def _secret_answers(records: Iterable[Mapping[str, object]], wanted: str) -> dict[str, bool]:
    for record in records:
        answers = record.get("secrets")
        if record.get("sha256") == wanted and isinstance(answers, dict):
            return {str(k): v for k, v in answers.items() if isinstance(v, bool)}
    return {}


def _same_server(record: Mapping[str, object], entry: ServerEntry) -> bool:
    return record.get("server") == entry.name and record.get("scope") == entry.scope


def _lines(entry: Mapping[str, object]) -> list[str]:
    return json.dumps(entry, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
