"""Once the user lets a tool read a secret file, its values are redacted from everything sent
to the model: what a read shows is taken apart into values (`_secret_files`), and the real
toolboxes, composed as the runtime composes them, redact them from that very result and from
every later one (a command that prints the file, a grep of a file that quotes a value)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.permissions.approval import (
    Answer,
    ApprovalRequest,
    ApprovingToolbox,
    Choice,
    PermissionStore,
    Policy,
)
from paicli.redact import REDACTED, Redactor
from paicli.tools.base import ToolOutcome
from paicli.tools.builtin.secret_files import MAX_VALUES, secrets_shown
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.redacting import RedactingToolbox

KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "x" * 12


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("DATABASE_PASSWORD=pg-secret-1", ["pg-secret-1"]),
        ("export API_TOKEN='tok en 2'  # the token", ["tok en 2"]),
        ('SECRET_KEY="k3y-with-#hash"', ["k3y-with-#hash"]),
        ("STRIPE=sk_live_51Habc123  # inline comment", ["sk_live_51Habc123"]),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", ["wJalrXUtnFEMI/K7MDENG"]),
        ('  "private_key": "abc\\ndef0123456789",', ["abc\\ndef0123456789"]),
        ("password: hunter22", ["hunter22"]),
        ("//registry.npmjs.org/:_authToken=npm_abcdef0123", ["npm_abcdef0123"]),
        ("machine github.com login ada password gh-pass-123", ["gh-pass-123"]),
        (
            "DATABASE_URL=postgres://app:db-pw-4567@db/app",
            ["postgres://app:db-pw-4567@db/app", "db-pw-4567"],
        ),
        (
            "REDIS=redis://cache:r3dis-pw-99@cache:6379/0",
            ["redis://cache:r3dis-pw-99@cache:6379/0", "r3dis-pw-99"],
        ),
        (KEY_BODY, [KEY_BODY]),
        # Not secret names: only values that are no plain word, name or number are taken.
        ("APP_ID=a1b2c3d4e5f6", ["a1b2c3d4e5f6"]),
        ("NODE_ENV=production", []),
        ("HOST=db.internal.example", []),
        ("PORT=54321000", []),
        # Nothing to take.
        ("PASSWORD=short", []),
        ("API_KEY=${API_KEY_FROM_VAULT}", []),
        ("# SECRET_KEY=commented-out-value", []),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", []),
        ("[default]", []),
        ("", []),
    ],
)
def test_values_are_taken_from_what_a_secret_file_shows(line: str, values: list[str]) -> None:
    assert secrets_shown("read_file", f"     1\t{line}") == values


def test_the_url_password_alone_is_taken_too() -> None:
    shown = secrets_shown("read_file", "     1\tMIRROR=https://ada:url-pass-77@mirror.example")
    assert "url-pass-77" in shown


def test_grep_lines_and_notes_are_read_as_the_model_would_see_them() -> None:
    text = ".env:3: TOKEN=grep-tok-123\n[2 credential file(s) or folder(s) left out, ...]"
    assert secrets_shown("grep", text) == ["grep-tok-123"]
    page = "     9\tKEY=page-key-456789 [line cut]\n[showing lines 9-9 of 20; call read_file]"
    assert secrets_shown("read_file", page) == ["page-key-456789"]


def test_a_hostile_file_yields_a_bounded_number_of_values() -> None:
    text = "\n".join(f"{n:6}\tTOKEN_{n}=value-{n:08}" for n in range(10_000))
    assert len(secrets_shown("read_file", text)) == MAX_VALUES
    assert secrets_shown("read_file", "\x00\x1b[2J=\u202e" * 1000) == []


# -- through the toolboxes ----------------------------------------------------------------------

DOT_ENV_SECRET = "pg-Pr0d-PASSWORD-7f3a9c"


class Approver:
    """Says yes to everything, and keeps what it was asked."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.requests.append(request)
        return Answer(Choice.ALLOW_ONCE)


def composed(root: Path, redactor: Redactor, approver: Approver) -> RedactingToolbox:
    """The built-in tools as the runtime composes them: one redactor learns and redacts."""
    builtin = BuiltinToolbox(root, learn_secrets=redactor.learn)
    approvals = ApprovingToolbox(
        builtin,
        policy=Policy(),
        store=PermissionStore(root.parent / "permissions.json"),
        approver=approver,
    )
    return RedactingToolbox(approvals, redactor)


async def call(toolbox: RedactingToolbox, name: str, arguments: Mapping[str, object]) -> str:
    spec = next(s for s in toolbox.specs() if s.name == name)
    outcome: ToolOutcome = await toolbox.call(spec, arguments)
    return outcome.text


@pytest.mark.real  # `cat .env` runs as a real command
async def test_an_approved_read_of_a_dot_env_shows_its_names_but_never_its_values(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text(f"DATABASE_PASSWORD={DOT_ENV_SECRET}\nNODE_ENV=production\n")
    (tmp_path / "notes.md").write_text(f"the old password was {DOT_ENV_SECRET}\n")
    redactor, approver = Redactor(), Approver()
    toolbox = composed(tmp_path, redactor, approver)
    before = await call(toolbox, "grep", {"pattern": "password"})
    assert DOT_ENV_SECRET in before  # paicli has not seen the .env yet
    read = await call(toolbox, "read_file", {"path": ".env"})
    assert read == f"     1\tDATABASE_PASSWORD={REDACTED}\n     2\tNODE_ENV=production"
    assert approver.requests[0].protected is not None  # asked, as a secret file
    printed = await call(toolbox, "execute_command", {"command": "cat .env"})
    grepped = await call(toolbox, "grep", {"pattern": "password"})
    for text in (printed, grepped):
        assert DOT_ENV_SECRET not in text and REDACTED in text


async def test_an_ordinary_file_teaches_the_redactor_nothing(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("SECRET_KEY = 'looks-secret-but-is-code'\n")
    redactor = Redactor()
    read = await call(
        composed(tmp_path, redactor, Approver()), "read_file", {"path": "settings.py"}
    )
    assert "looks-secret-but-is-code" in read
    assert redactor.redact_known("looks-secret-but-is-code") == "looks-secret-but-is-code"
