"""Approving a repository's MCP servers: the question shows the entry as written and every
variable it reads, an approval covers the whole entry, and `--trust-project` never hands a
project server a secret-looking variable the user's own config does not allow."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from paicli.servers.config import ServerEntry, load_config
from paicli.servers.trust import (
    Passing,
    TrustAnswer,
    TrustRequest,
    TrustStore,
    approve_servers,
    describe,
    skip_reason,
    trust_request,
)
from paicli.ui.trust_prompt import prompt_lines

SECRET = "wJalrXUtnFEMI-very-secret"
# These tests are about the servers; which secrets they pass is tests/servers/test_trust_secrets.
PASS: Passing = lambda entry, _: entry  # noqa: E731
ENVIRON = {"AWS_SECRET_ACCESS_KEY": SECRET, "API_KEY": "key-123", "LINT_MODE": "strict"}


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "repo"
    (home / ".paicli").mkdir(parents=True)
    (project / ".paicli").mkdir(parents=True)
    return home, project


def project_entry(
    places: tuple[Path, Path], entry: dict[str, Any], name: str = "lint"
) -> ServerEntry:
    home, project = places
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {name: entry}}))
    environ = {"HOME": str(home), **ENVIRON}
    return load_config(project, environ=environ).servers[name]


def store(places: tuple[Path, Path]) -> TrustStore:
    return TrustStore(places[0] / ".paicli" / "trusted-servers.json")


def shown(entry: ServerEntry, previous: dict[str, object] | None = None) -> str:
    return "\n".join(prompt_lines(trust_request(entry, previous)))


# What the question shows


def test_the_prompt_shows_env_as_written_and_names_the_secret_it_reads(
    places: tuple[Path, Path],
) -> None:
    entry = project_entry(
        places,
        {
            "command": "npx",
            "args": ["lint-server"],
            "env": {"LINT_LEVEL": "${AWS_SECRET_ACCESS_KEY}"},
        },
    )
    text = shown(entry)
    assert "LINT_LEVEL=${AWS_SECRET_ACCESS_KEY} npx lint-server" in text
    assert "AWS_SECRET_ACCESS_KEY (looks secret)" in text
    assert "***" not in text and SECRET not in text


def test_a_url_is_shown_as_written_never_expanded(places: tuple[Path, Path]) -> None:
    entry = project_entry(
        places,
        {"url": "https://collect.example/mcp?m=${LINT_MODE}", "headers": {"X-Key": "${API_KEY}"}},
    )
    text = shown(entry)
    assert "https://collect.example/mcp?m=${LINT_MODE}  [X-Key: ${API_KEY}]" in text
    assert "key-123" not in text and "strict" not in text
    assert "LINT_MODE, API_KEY (looks secret)" in text


def test_every_variable_read_is_named_secret_looking_or_not(places: tuple[Path, Path]) -> None:
    env = {"A": "${LINT_MODE}", "B": "${HOME}", "C": "${API_KEY}"}
    entry = project_entry(places, {"command": "lint", "env": env, "cwd": "${PROJECT_DIR}"})
    request = trust_request(entry, None)
    assert request.variables == ("PROJECT_DIR", "LINT_MODE", "HOME", "API_KEY")
    assert request.secrets == ("API_KEY",)
    assert "Variables it reads: PROJECT_DIR, LINT_MODE, HOME, API_KEY (looks secret)" in (
        shown(entry)
    )


def test_a_variable_on_the_command_line_warns_that_ps_shows_it(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint", "args": ["--key", "${API_KEY}"]})
    request = trust_request(entry, None)
    assert request.on_command_line == ("API_KEY",)
    assert (
        "${API_KEY} goes on its command line, which every user of this machine can read (ps)"
        in (shown(entry))
    )


def test_other_keys_and_ignored_keys_are_shown(places: tuple[Path, Path]) -> None:
    entry = project_entry(
        places, {"command": "lint", "includeTools": ["*"], "trust": True, "timeout": 5}
    )
    text = shown(entry)
    assert 'with {"includeTools": ["*"], "trust": true, "timeout": 5}' in text
    assert "Ignored: " in text and "ignoring 'trust'" in text


def test_the_users_own_servers_keep_their_literal_values_masked(places: tuple[Path, Path]) -> None:
    home = places[0]
    (home / ".paicli" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "r": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer sk-1"}}
                }
            }
        )
    )
    entry = load_config(None, environ={"HOME": str(home)}).servers["r"]
    assert describe(entry) == "https://x/mcp  [Authorization: ***]"


def test_a_hostile_value_is_quoted_and_escaped_by_the_prompt(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint", "args": ["a b; rm -rf ~", "\x1b[2J"]})
    assert describe(entry) == "lint 'a b; rm -rf ~' '\x1b[2J'"  # err() escapes the ESC


# What an approval covers


@pytest.mark.parametrize(
    "change",
    [
        {"trust": True},
        {"stderrFile": "../home/.bashrc"},
        {"timeout": 1},
        {"startupTimeout": 1},
        {"includeTools": ["*"]},
        {"excludeTools": []},
        {"restart": "on-failure"},
        {"disabled": False},
        {"protocol": "legacy"},
        {"description": "now with a twist"},
    ],
)
def test_any_change_to_an_approved_entry_asks_again(
    places: tuple[Path, Path], change: dict[str, Any]
) -> None:
    approved = project_entry(places, {"command": "lint"})
    store(places).approve(places[1], approved)
    assert store(places).is_approved(places[1], approved)
    changed = project_entry(places, {"command": "lint", **change})
    assert not store(places).is_approved(places[1], changed)


def test_the_same_entry_under_another_name_asks_again(places: tuple[Path, Path]) -> None:
    store(places).approve(places[1], project_entry(places, {"command": "lint"}))
    renamed = project_entry(places, {"command": "lint"}, name="other")
    assert not store(places).is_approved(places[1], renamed)


def test_a_changed_variables_value_does_not_ask_again(places: tuple[Path, Path]) -> None:
    # The approval is of the entry as written: the user agreed to `${LINT_MODE}`, whatever
    # it holds today.
    entry = project_entry(places, {"command": "lint", "env": {"M": "${LINT_MODE}"}})
    store(places).approve(places[1], entry)
    home, project = places
    again = load_config(project, environ={"HOME": str(home), "LINT_MODE": "other"}).servers["lint"]
    assert store(places).is_approved(project, again)


def test_asking_again_shows_what_changed(places: tuple[Path, Path]) -> None:
    approved = project_entry(places, {"command": "lint", "args": ["--check"]})
    store(places).approve(places[1], approved)
    changed = project_entry(places, {"command": "lint", "args": ["--check"], "timeout": 1})
    previous = store(places).previous(places[1], changed)
    assert previous == {"command": "lint", "args": ["--check"]}
    request = trust_request(changed, previous)
    assert '+  "timeout": 1' in request.changes
    text = shown(changed, dict(previous))
    assert "changed since you approved it" in text and '+  "timeout": 1' in text


def test_a_store_written_by_an_older_paicli_approves_nothing(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint"})
    old = {str(places[1].resolve()): ["0" * 64]}
    (places[0] / ".paicli" / "trusted-servers.json").write_text(json.dumps(old))
    assert not store(places).is_approved(places[1], entry)


def test_older_versions_stay_approved_up_to_a_bound(places: tuple[Path, Path]) -> None:
    first = project_entry(places, {"command": "lint", "args": ["0"]})
    store(places).approve(places[1], first)
    for version in range(1, 21):
        store(places).approve(
            places[1], project_entry(places, {"command": "lint", "args": [str(version)]})
        )
    assert store(places).is_approved(
        places[1], project_entry(places, {"command": "lint", "args": ["1"]})
    )
    assert not store(places).is_approved(places[1], first)


# --trust-project and secrets


def run_with_trust_project(
    places: tuple[Path, Path], entry: ServerEntry, ask: Any = None
) -> tuple[list[ServerEntry], list[str]]:
    return approve_servers([entry], places[1], store(places), trust_all=True, ask=ask, passing=PASS)


def test_trust_project_does_not_start_a_server_reading_a_secret(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint", "env": {"L": "${AWS_SECRET_ACCESS_KEY}"}})
    allowed, skipped = run_with_trust_project(places, entry)
    assert (allowed, skipped) == ([], ["lint"])
    reason = skip_reason(entry, places[1])
    assert (
        "it reads AWS_SECRET_ACCESS_KEY, which look secret and --trust-project does not pass"
        in reason
    )
    assert f'[projects."{places[1].resolve()}"] allow_secrets' in reason


def test_trust_project_starts_it_when_the_users_config_allows_the_project(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    (home / ".paicli" / "config.toml").write_text(
        f'[projects."{project}"]\nallow_secrets = ["AWS_*"]\n'
    )
    entry = project_entry(places, {"command": "lint", "env": {"L": "${AWS_SECRET_ACCESS_KEY}"}})
    allowed, skipped = run_with_trust_project(places, entry)
    assert ([e.name for e in allowed], skipped) == (["lint"], [])


def test_trust_project_starts_servers_that_read_nothing_secret(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint", "env": {"M": "${LINT_MODE}"}})
    allowed, _ = run_with_trust_project(places, entry)
    assert [e.name for e in allowed] == ["lint"]
    assert not store(places).is_approved(places[1], entry)  # waved through, not remembered


def test_with_a_terminal_the_user_decides_and_sees_the_flag(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint", "env": {"L": "${AWS_SECRET_ACCESS_KEY}"}})
    asked: list[TrustRequest] = []

    def ask(requests: Sequence[TrustRequest]) -> TrustAnswer:
        asked.extend(requests)
        return TrustAnswer(frozenset(r.entry.name for r in requests))

    allowed, _ = run_with_trust_project(places, entry, ask)
    assert [e.name for e in allowed] == ["lint"]
    assert asked[0].secrets == ("AWS_SECRET_ACCESS_KEY",)
    assert store(places).is_approved(places[1], entry)


# A "no" is remembered; several new servers are one question


def test_a_decline_is_remembered_for_that_entry_and_approving_reverses_it(
    places: tuple[Path, Path],
) -> None:
    entry = project_entry(places, {"command": "lint"})
    asked: list[list[str]] = []

    def no(requests: Sequence[TrustRequest]) -> TrustAnswer:
        asked.append([r.entry.name for r in requests])
        return TrustAnswer()

    for _ in range(2):
        allowed, skipped = approve_servers(
            [entry], places[1], store(places), trust_all=False, ask=no, passing=PASS
        )
        assert (allowed, skipped) == ([], ["lint"])
    assert asked == [["lint"]]  # asked once; the second run remembered the no
    reason = skip_reason(entry, places[1], store(places))
    assert "you declined it as it is now (paicli mcp approve lint, or /mcp approve lint" in reason
    changed = project_entry(places, {"command": "lint", "args": ["--fix"]})
    approve_servers([changed], places[1], store(places), trust_all=False, ask=no, passing=PASS)
    assert asked == [["lint"], ["lint"]]  # a changed entry is a new question
    store(places).approve(places[1], entry)
    assert store(places).is_approved(places[1], entry)
    assert not store(places).is_declined(places[1], entry)


def test_no_answer_at_all_remembers_nothing(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint"})
    allowed, skipped = approve_servers(
        [entry], places[1], store(places), trust_all=False, ask=lambda requests: None, passing=PASS
    )
    assert (allowed, skipped) == ([], ["lint"])
    assert not store(places).is_declined(places[1], entry)


def test_several_new_servers_are_one_question_and_the_answer_is_kept_per_server(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    servers = {"a": {"command": "a"}, "b": {"command": "b"}, "c": {"command": "c"}}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    entries = list(load_config(project, environ={"HOME": str(home)}).servers.values())
    questions: list[list[str]] = []

    def only_b(requests: Sequence[TrustRequest]) -> TrustAnswer:
        questions.append([r.entry.name for r in requests])
        return TrustAnswer(frozenset({"b"}))

    allowed, skipped = approve_servers(
        entries, project, store(places), trust_all=False, ask=only_b, passing=PASS
    )
    assert questions == [["a", "b", "c"]]
    assert ([e.name for e in allowed], skipped) == (["b"], ["a", "c"])
    allowed, skipped = approve_servers(
        entries, project, store(places), trust_all=False, ask=only_b, passing=PASS
    )
    assert questions == [["a", "b", "c"]]  # nothing new to ask
    assert ([e.name for e in allowed], skipped) == (["b"], ["a", "c"])


def test_an_older_store_without_declines_still_reads(places: tuple[Path, Path]) -> None:
    entry = project_entry(places, {"command": "lint"})
    store(places).approve(places[1], entry)
    path = places[0] / ".paicli" / "trusted-servers.json"
    document = json.loads(path.read_text())
    del document["declined"]
    path.write_text(json.dumps(document))
    assert store(places).is_approved(places[1], entry)
    assert not store(places).is_declined(places[1], entry)
