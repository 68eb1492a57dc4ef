"""One project from any of its folders: `.paicli/settings.json` and "always in this project"
answers belong to the project root (`project_root`), wherever in the project paicli starts;
the file tools still work in the folder it started in. Path rules of the settings file (and
of the config and saved answers) are anchored at the project root, `--allow`/`--deny` at the
folder paicli started in. The runtime is the one the REPL and `-p` use, no model needed: the
calls go straight to its composed toolbox."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.permissions.approval import Answer, Choice, ProjectSettings, project_settings
from paicli.permissions.rules import parse_rule
from paicli.tools.base import ToolOutcome
from tests import zygote_process
from tests.llm_server import ScriptedLlm
from tests.runtimes import runtime_for

from .test_approval import ScriptedApprover


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".paicli").mkdir(parents=True)
    return Path(os.path.realpath(tmp_path / "home"))  # as permissions.json keys it


@pytest.fixture
def repo(home: Path) -> Path:
    """`~/code/repo`, a git checkout with a `src/` folder."""
    root = home / "code" / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def environ(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PAICLI_HOME": str(home / ".paicli"),
    }


def write_settings(folder: Path, permissions: object) -> None:
    (folder / ".paicli").mkdir(exist_ok=True)
    (folder / ".paicli" / "settings.json").write_text(json.dumps({"permissions": permissions}))


class RulesAsked:
    """The `ask_rules` callback: records which settings it was asked about, answers `yes`."""

    def __init__(self, *, yes: bool = True) -> None:
        self.asked: list[ProjectSettings] = []
        self._yes = yes

    def __call__(self, settings: ProjectSettings) -> bool:
        self.asked.append(settings)
        return self._yes


async def call(
    cwd: Path,
    home: Path,
    calls: list[tuple[str, Mapping[str, object]]],
    *,
    approver: ScriptedApprover | None = None,
    ask: RulesAsked | None = None,
    trust: bool = False,
    flag_allow: tuple[str, ...] = (),
    flag_deny: tuple[str, ...] = (),
) -> list[ToolOutcome]:
    """Start paicli in `cwd` and make the built-in tool `calls` through its toolbox."""
    async with runtime_for(
        root=cwd,
        flags={},
        approver=approver,
        ask_rules=ask,
        trust_project=trust,
        flag_allow=flag_allow,
        flag_deny=flag_deny,
        environ=environ(home),
    ) as runtime:
        specs = {s.name: s for s in runtime.toolbox.specs()}
        return [await runtime.toolbox.call(specs[name], args) for name, args in calls]


def write(path: str) -> tuple[str, Mapping[str, object]]:
    return "write_file", {"path": path, "content": "x"}


# -- the project's settings from a subfolder ------------------------------------------------


async def test_started_in_a_subfolder_the_projects_settings_apply_and_are_accepted_once(
    repo: Path, home: Path
) -> None:
    write_settings(repo, {"allow": ["write_file(src/**)"], "deny": ["write_file(src/gen/**)"]})
    ask = RulesAsked()
    first = await call(repo / "src", home, [write("gen/a.txt"), write("b.txt")], ask=ask)
    assert [s.path for s in ask.asked] == [repo / ".paicli" / "settings.json"]
    assert first[0].decision == "denied" and ".paicli/settings.json" in first[0].text
    assert not (repo / "src" / "gen" / "a.txt").exists()
    assert first[1].decided_by == "policy" and (repo / "src" / "b.txt").read_text() == "x"
    # Accepted for the project: not asked again from its root or from the subfolder.
    for cwd, path in ((repo, "src/c.txt"), (repo / "src", "d.txt")):
        again = RulesAsked(yes=False)
        [outcome] = await call(cwd, home, [write(path)], ask=again)
        assert again.asked == [] and outcome.decided_by == "policy", outcome.text
    saved = json.loads((home / ".paicli" / "permissions.json").read_text())
    assert list(saved["projects"]) == [str(repo)]


async def test_declined_settings_keep_their_deny_rules_in_every_folder(
    repo: Path, home: Path
) -> None:
    write_settings(repo, {"allow": ["write_file"], "deny": ["write_file(src/gen/**)"]})
    ask = RulesAsked(yes=False)
    outcomes = await call(repo, home, [write("src/gen/a.txt"), write("b.txt")], ask=ask)
    assert len(ask.asked) == 1
    assert "settings.json" in outcomes[0].text
    assert "does not ask for approval" in outcomes[1].text  # the allow rule was not applied
    [outcome] = await call(repo / "src", home, [write("gen/a.txt")], ask=ask)
    assert outcome.decision == "denied" and "settings.json" in outcome.text
    assert not (repo / "src" / "gen").exists()


# -- saved answers --------------------------------------------------------------------------


async def test_an_answer_for_the_project_holds_in_its_root_and_its_subfolders(
    repo: Path, home: Path
) -> None:
    edit = ("edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"})
    yes = ScriptedApprover(Answer(Choice.ALLOW_PROJECT), Answer(Choice.ALLOW_PROJECT))
    asked_in_src = await call(repo / "src", home, [write("a.txt")], approver=yes)
    asked_in_root = await call(repo, home, [edit], approver=yes)
    assert [o.decided_by for o in (*asked_in_src, *asked_in_root)] == ["user", "user"]
    in_root = await call(repo, home, [write("b.txt")])
    in_src = await call(repo / "src", home, [edit])
    assert in_root[0].decided_by == "policy", in_root[0].text
    assert in_src[0].decided_by == "policy", in_src[0].text
    assert (repo / "src" / "a.txt").read_text() == "y"
    saved = json.loads((home / ".paicli" / "permissions.json").read_text())
    assert saved["projects"] == {str(repo): {"allow": ["write_file", "edit_file"], "tools": {}}}


async def test_answers_an_older_paicli_kept_under_a_subfolder_still_apply_to_the_project(
    repo: Path, home: Path
) -> None:
    nested = repo / "vendor" / "lib"  # a project of its own inside this one
    (nested / ".git").mkdir(parents=True)
    write_settings(repo, {"allow": ["write_file(src/**)"]})
    digest = project_settings(repo).digest  # the same rules, accepted in docs/
    # Keyed by the folder each older run started in (docs/ is gone since).
    older: dict[str, object] = {
        str(repo / "src"): {"allow": ["edit_file"], "tools": {}},
        str(repo / "docs"): {"allow": [], "tools": {}, "settings": digest},
        str(nested): {"allow": ["write_file"], "tools": {}},
    }
    document = {"version": 2, "allow": [], "projects": older}
    (home / ".paicli" / "permissions.json").write_text(json.dumps(document))
    edit = ("edit_file", {"path": "src/none.txt", "old_string": "x", "new_string": "y"})
    ask = RulesAsked(yes=False)
    outcomes = await call(repo, home, [edit, write("src/a.txt"), write("b.txt")], ask=ask)
    assert outcomes[0].decided_by == "policy"  # saved under src/, applies at the root
    assert ask.asked == [] and outcomes[1].decided_by == "policy"  # accepted under docs/
    assert outcomes[2].decision == "denied"  # the nested project's answer is its own
    [in_nested] = await call(nested, home, [write("b.txt")])
    assert in_nested.decided_by == "policy"
    # Read, never rewritten: a new answer goes under the project root.
    await call(
        repo, home, [write("c.txt")], approver=ScriptedApprover(Answer(Choice.ALLOW_PROJECT))
    )
    saved = json.loads((home / ".paicli" / "permissions.json").read_text())
    mine = {str(repo): {"allow": ["write_file"], "tools": {}}}
    assert saved["projects"] == {**older, **mine}


# -- where path rules are anchored ----------------------------------------------------------


async def test_a_settings_path_rule_covers_the_same_files_from_the_root_and_a_subfolder(
    repo: Path, home: Path
) -> None:
    write_settings(repo, {"allow": ["write_file(src/**)"]})
    (repo / "srcx").mkdir()
    from_root = await call(
        repo, home, [write("src/a.txt"), write("b.txt"), write("srcx/c.txt")], trust=True
    )
    assert [o.decided_by for o in from_root] == ["policy", "flag", "flag"]
    assert [o.decision for o in from_root] == ["allowed", "denied", "denied"]
    from_src = await call(repo / "src", home, [write("deep/d.txt"), write("../b.txt")], trust=True)
    assert from_src[0].decided_by == "policy" and (repo / "src" / "deep" / "d.txt").exists()
    assert "outside the project root" in from_src[1].text  # the tools stay in the folder
    assert not (repo / "b.txt").exists() and not (repo / "srcx" / "c.txt").exists()


def test_a_relative_path_rule_is_matched_from_its_anchor_not_from_the_working_folder(
    repo: Path,
) -> None:
    (repo / "docs").mkdir()
    (repo / "src" / "link").symlink_to(repo / "docs")
    rule = parse_rule("write_file(src/**)")

    def covers(path: str, *, deny: bool = False) -> bool:
        arguments = {"path": path}
        return rule.matches(("write_file",), arguments, repo / "src", anchor=repo, deny=deny)

    assert covers("a.py") and covers("deep/b.py") and covers("./c.py")
    assert not covers("../docs/a.md") and not covers("../srcx/a.py")
    assert not covers("link/a.md")  # it reaches docs/
    assert covers("link/a.md", deny=True)  # a deny rule matches the name as written too
    # Without an anchor the working folder is the base, as for `--allow`.
    assert not rule.matches(("write_file",), {"path": "a.py"}, repo / "src")


async def test_config_rules_are_anchored_at_the_project_and_flags_at_the_working_folder(
    repo: Path, home: Path
) -> None:
    (home / ".paicli" / "config.toml").write_text(
        '[permissions]\ndeny = ["write_file(src/gen/**)"]\n'
    )
    outcomes = await call(
        repo / "src",
        home,
        [write("gen/a.txt"), write("b.txt"), write("src/c.txt")],
        flag_allow=("write_file(b.txt)",),
        flag_deny=("write_file(src/**)",),
    )
    assert "permissions.deny" in outcomes[0].text  # a subfolder does not escape the config
    assert outcomes[1].decided_by == "flag" and (repo / "src" / "b.txt").exists()
    assert "denied by --deny" in outcomes[2].text  # src/ of the folder paicli started in
    assert not (repo / "src" / "gen").exists() and not (repo / "src" / "src").exists()


# -- a settings file that is not the project's ----------------------------------------------


@pytest.mark.parametrize("start", ["code/repo/src", "code/repo", "scratch/deep"])
async def test_a_settings_file_above_the_project_root_is_never_read(
    repo: Path, home: Path, start: str
) -> None:
    # paicli's own folder (the home's .paicli) and an enclosing project are not this project.
    write_settings(home, {"allow": ["write_file"], "deny": ["read_file"]})
    write_settings(home / "code", {"allow": ["write_file"], "deny": ["read_file"]})
    cwd = home / start
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "a.txt").write_text("hello")
    ask = RulesAsked()
    async with runtime_for(
        root=cwd, flags={}, approver=None, ask_rules=ask, environ=environ(home)
    ) as runtime:
        assert runtime.approvals is not None
        rules = runtime.approvals.rules()
        specs = {s.name: s for s in runtime.toolbox.specs()}
        read = await runtime.toolbox.call(specs["read_file"], {"path": "a.txt"})
        problems = list(runtime.problems)
    assert ask.asked == []
    assert rules["allow (config and project)"] == rules["deny (config and project)"] == ()
    assert read.decision == "allowed" and "hello" in read.text
    assert not [p for p in problems if "settings.json" in p]


# -- paicli -p in a subfolder ---------------------------------------------------------------


@pytest.mark.real
async def test_paicli_p_in_a_subfolder_applies_the_projects_deny_rules(
    repo: Path, home: Path
) -> None:
    write_settings(repo, {"deny": ["write_file(src/gen/**)"]})
    calls = [
        {"id": "a", "name": "write_file", "arguments": '{"path": "gen/a.txt", "content": "x"}'}
    ]
    async with ScriptedLlm([{"tool_calls": calls}, {"text": "done"}]) as llm:
        env = {**environ(home), "PAICLI_API_KEY": "sk-test-SCOPE-0123456789"}
        if "PYTHONPATH" in os.environ:  # the code under test, when it is not the installed one
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        process = await zygote_process.create_subprocess_exec(
            sys.executable,
            "-m",
            "paicli.cli",
            *("--base-url", llm.base_url, "--model", "scripted", "-p", "go", "--yes"),
            cwd=repo / "src",
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(60):
            _, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    [result] = [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert "deny" in result and ".paicli/settings.json" in result
    assert not (repo / "src" / "gen").exists()
