"""A hostile model against narrow allow rules, each call through the approval path as
`paicli -p` makes it (no one to ask: what no rule covers is denied): what runs must be what
the rule names."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.permissions.approval import ApprovingToolbox
from paicli.permissions.policy import PermissionStore, Policy
from paicli.tools.base import ToolOutcome, ToolSpec
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.mcp.naming import model_tool_name


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """A project, and a folder beside it holding a secret."""
    project, beside = tmp_path / "project", tmp_path / "beside"
    project.mkdir()
    beside.mkdir()
    (beside / "secret.txt").write_text("not yours\n")
    return project, beside


async def run_unattended(
    project: Path,
    allow: str,
    command: str,
    environ: dict[str, str] | None = None,
    *,
    deny: tuple[str, ...] = (),
) -> ToolOutcome:
    """`command` run through the approval path with only `allow` (and `deny`) in force, as
    in -p."""
    approvals = ApprovingToolbox(
        BuiltinToolbox(project, environ=environ),
        policy=Policy(allow=(allow,), deny=deny),
        store=PermissionStore(project / "permissions.json", project=project),
        approver=None,
        root=project,
        project=project,
    )
    spec = next(s for s in approvals.specs() if s.name == "execute_command")
    return await approvals.call(spec, {"command": command})


@pytest.mark.real  # before the fix the command ran
@pytest.mark.skipif(shutil.which("bash") is None, reason="bash expands ~- to $OLDPWD")
async def test_a_tilde_folder_of_the_shell_is_not_covered(places: tuple[Path, Path]) -> None:
    # `~-` is $OLDPWD to bash (and to /bin/sh where that is bash): `cat:*` read a file
    # outside the project, the path looking like `project/~-/secret.txt`.
    project, beside = places
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OLDPWD": str(beside)}
    for command in ("bash -c 'cat ~-/secret.txt'", "cat ~-/secret.txt"):
        outcome = await run_unattended(project, "execute_command(cat:*)", command, environ)
        assert outcome.is_error and "not yours" not in outcome.text, outcome.text
        assert "no permission rule covers this call" in outcome.text, outcome.text
    outcome = await run_unattended(project, "execute_command(cat:*)", "cat ~-", environ)
    assert "a `~` the shell expands" in outcome.text, outcome.text


@pytest.mark.real  # before the fix make ran the program outside the project
@pytest.mark.skipif(shutil.which("make") is None, reason="make runs recipes through $(SHELL)")
async def test_a_make_variable_on_the_line_is_not_covered(places: tuple[Path, Path]) -> None:
    # `make test SHELL=/elsewhere/evil` runs every recipe line through evil.
    project, beside = places
    (project / "Makefile").write_text("test:\n\t@echo tested\n")
    evil = beside / "evil"
    evil.write_text(f"#!/bin/sh\necho ran > {beside / 'ran'}\n")
    evil.chmod(0o755)
    for command in (f"make test SHELL={evil}", "make test CC=cc"):
        outcome = await run_unattended(project, "execute_command(make test:*)", command)
        assert outcome.is_error and "it sets a make variable" in outcome.text, outcome.text
    assert not (beside / "ran").exists()
    outcome = await run_unattended(project, "execute_command(make test:*)", "make test")
    assert "tested" in outcome.text and not outcome.is_error, outcome.text


@pytest.mark.real  # before the fix dd wrote outside the project
async def test_a_path_given_as_name_equals_value_is_read_as_a_path(
    places: tuple[Path, Path],
) -> None:
    project, beside = places
    (project / "data").write_text("overwritten\n")
    command = f"dd if=data of={beside / 'secret.txt'}"
    outcome = await run_unattended(project, "execute_command(dd:*)", command)
    assert outcome.is_error and "is outside the project" in outcome.text, outcome.text
    assert (beside / "secret.txt").read_text() == "not yours\n"


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


@pytest.mark.real  # before the fix git ran the command it was given
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_a_git_subcommand_given_a_command_to_run_is_not_covered(
    places: tuple[Path, Path],
) -> None:
    project, beside = places
    git(project, "init", "-q")
    (project / "a.txt").write_text("one\n")
    git(project, "add", "a.txt")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (project / "a.txt").write_text("two\n")
    ran = beside / "ran"
    calls = {
        "execute_command(git difftool:*)": f"git difftool -y -x 'sh -c \"echo > {ran}\"'",
        "execute_command(git bisect:*)": f"git bisect run sh -c 'echo > {ran}'",
        "execute_command(git submodule:*)": f"git submodule foreach 'echo > {ran}'",
    }
    for allow, command in calls.items():
        outcome = await run_unattended(project, allow, command)
        assert outcome.is_error and "no permission rule covers" in outcome.text, outcome.text
    assert not ran.exists()


async def test_go_tool_flags_are_not_covered(places: tuple[Path, Path]) -> None:
    # `-extld` makes the go linker run any program; `-cpuprofile` makes the compiler write.
    project, _ = places
    for flags in ("-ldflags='-linkmode=external -extld=/tmp/evil'", "-gcflags=-cpuprofile=/x"):
        command = f"go build {flags} ./..."
        outcome = await run_unattended(project, "execute_command(go build:*)", command)
        assert outcome.is_error and "can run a program or write" in outcome.text, outcome.text


@pytest.mark.real  # before the fix grep read through the link
async def test_a_search_that_follows_links_out_of_the_project_is_not_covered(
    places: tuple[Path, Path],
) -> None:
    # A cloned repository may hold `vendor -> /somewhere/else`; `-R` walks into it.
    project, beside = places
    (project / "vendor").symlink_to(beside, target_is_directory=True)
    calls = {
        "execute_command(grep:*)": "grep -R 'not yours' .",
        "execute_command(rg:*)": "rg --follow 'not yours'",
        "execute_command(find:*)": "find -L . -name secret.txt",
        "execute_command(ls:*)": "ls -RL",
    }
    for allow, command in calls.items():
        outcome = await run_unattended(project, allow, command)
        assert outcome.is_error and "follows the links" in outcome.text, outcome.text
    outcome = await run_unattended(project, "execute_command(grep:*)", "grep -r 'not yours' .")
    assert "not yours" not in outcome.text, outcome.text  # -r leaves the link alone


@pytest.mark.real  # before the fix the denied command ran
@pytest.mark.parametrize(
    "spelling",
    [
        ">out touch {ran}",  # a redirection before the program
        "2>&1 touch {ran}",
        "sh -c '>out touch {ran}'",
        "tou\\\nch {ran}",  # a line continuation inside its name
        "sh -c 'touch \\\n{ran}'",
        "env -S'touch {ran}'",  # env's -S with its value attached
        "bash -c 'coproc touch {ran}'",
        "find . -maxdepth 0 -exec touch {ran} \\;",  # find runs it
        "find . -maxdepth 0 -exec true \\; -exec touch {ran} \\;",
        "taskset 1 touch {ran}",  # a wrapper that runs what follows its operand
        "chrt -o 0 touch {ran}",
    ],
)
async def test_a_spelling_does_not_hide_a_program_from_a_deny_rule(
    places: tuple[Path, Path], spelling: str
) -> None:
    project, beside = places
    ran = beside / "ran"
    command = spelling.format(ran=ran)
    outcome = await run_unattended(project, "execute_command", command, deny=("Bash(touch:*)",))
    assert outcome.decided_by == "policy" and "rules deny" in outcome.text, outcome.text
    assert not ran.exists()


@pytest.mark.parametrize("deny", ["Read(config/creds.json)", "read_file(config/**)"])
async def test_a_read_deny_rule_keeps_the_file_from_the_search_tools(
    tmp_path: Path, deny: str
) -> None:
    # Claude Code's Read rules cover Grep and Glob: grep on the file, its folder or the
    # project printed what `Read(...)` denied.
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "creds.json").write_text('{"token": "s3cr3t"}\n')
    (tmp_path / "notes.md").write_text("token: see the wiki\n")
    approvals = ApprovingToolbox(
        BuiltinToolbox(tmp_path),
        policy=Policy(allow=("grep", "glob", "list_dir"), deny=(deny,)),
        store=PermissionStore(tmp_path / "permissions.json", project=tmp_path),
        approver=None,
        root=tmp_path,
        project=tmp_path,
    )
    specs = {spec.name: spec for spec in approvals.specs()}
    calls = [
        ("grep", {"pattern": "token", "path": "."}),
        ("grep", {"pattern": "token", "path": "config"}),
        ("grep", {"pattern": "token", "path": "config/creds.json"}),
        ("glob", {"pattern": "**/*.json"}),
    ]
    for name, arguments in calls:
        outcome = await approvals.call(specs[name], arguments)
        assert "s3cr3t" not in outcome.text and "creds.json:" not in outcome.text, outcome.text
        assert "deny" in outcome.text, outcome.text
    outcome = await approvals.call(specs["grep"], {"pattern": "token", "path": "."})
    assert "notes.md" in outcome.text  # the rest is searched as before


@pytest.mark.parametrize(
    ("deny", "name", "arguments"),
    [
        ("Edit(src/keep.py)", "write_file", {"path": "src/keep.py", "content": "changed\n"}),
        (
            "Write(src/**)",
            "edit_file",
            {"path": "src/keep.py", "old_string": "kept", "new_string": "changed"},
        ),
    ],
)
async def test_a_deny_rule_for_one_file_tool_holds_for_the_other(
    tmp_path: Path, deny: str, name: str, arguments: dict[str, object]
) -> None:
    # Claude Code's Edit rules cover every tool that edits files: write_file replaced a file
    # an `Edit(...)` deny rule kept from edit_file.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keep.py").write_text("kept\n")
    approvals = ApprovingToolbox(
        BuiltinToolbox(tmp_path),
        policy=Policy(allow=("write_file", "edit_file"), deny=(deny,)),
        store=PermissionStore(tmp_path / "permissions.json", project=tmp_path),
        approver=None,
        root=tmp_path,
        project=tmp_path,
    )
    spec = next(s for s in approvals.specs() if s.name == name)
    outcome = await approvals.call(spec, arguments)
    assert outcome.decided_by == "policy" and "rules deny" in outcome.text, outcome.text
    assert (tmp_path / "src" / "keep.py").read_text() == "kept\n"


class ServerTools:
    """A toolbox offering one tool of each given server, named as paicli names MCP tools;
    records what ran."""

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self._specs = [
            ToolSpec(model_tool_name(s, t), "t", {"type": "object"}, "mcp", server=s, tool=t)
            for s, t in pairs
        ]
        self.ran: list[str] = []

    def specs(self) -> list[ToolSpec]:
        return self._specs

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        self.ran.append(spec.name)
        return ToolOutcome(f"ran {spec.name}")


@pytest.mark.parametrize("allow", ["mcp__github", "mcp__github__*", "mcp__github__delete*"])
async def test_a_server_rule_does_not_cover_a_server_whose_name_blurs_into_it(
    tmp_path: Path, allow: str
) -> None:
    # A repository's .mcp.json may name a server `github.` (model-facing `github_`) or
    # `github__x`: its tools' names start with `mcp__github__` too.
    tools = ServerTools(
        ("github", "delete_repo"), ("github.", "delete_repo"), ("github__x", "delete_repo")
    )
    approvals = ApprovingToolbox(
        tools,
        policy=Policy(allow=(allow,)),
        store=PermissionStore(tmp_path / "permissions.json", project=tmp_path),
        approver=None,
        root=tmp_path,
    )
    outcomes = [await approvals.call(spec, {}) for spec in approvals.specs()]
    assert tools.ran == ["mcp__github__delete_repo"]
    for outcome in outcomes[1:]:
        assert outcome.is_error and "blurs where it ends" in outcome.text, outcome.text


async def test_a_nul_byte_in_a_command_is_refused_before_any_rule_reads_it(
    places: tuple[Path, Path],
) -> None:
    # The rules' path checks raised ValueError ("embedded null byte") out of the call.
    project, _ = places
    outcome = await run_unattended(project, "execute_command(cat:*)", "cat a\0b")
    assert outcome.decided_by == "validation" and "NUL byte" in outcome.text, outcome.text


@pytest.mark.real  # before the fix the denied git subcommand ran
async def test_an_alias_set_on_the_line_does_not_hide_a_git_subcommand(
    places: tuple[Path, Path],
) -> None:
    project, _ = places
    git(project, "init", "-q")
    for command in (
        "git -c alias.i=init i",
        "git -c 'alias.i=!git init' i",
        "git -calias.I=init i",
    ):
        outcome = await run_unattended(
            project, "execute_command", command, deny=("Bash(git init:*)",)
        )
        assert outcome.decided_by == "policy" and "rules deny" in outcome.text, outcome.text


@pytest.mark.real  # before the fix the command ran
async def test_arguments_passed_on_to_another_program_are_read_like_a_commands(
    places: tuple[Path, Path],
) -> None:
    # `pytest --basetemp=DIR` empties DIR; after `python -m pytest` (or `npm test --`) the
    # option was read as a file in the project named `--basetemp=...`.
    project, beside = places
    calls = [
        ("execute_command(python:*)", f"python -m pytest --basetemp={beside}"),
        ("execute_command(python:*)", f"python x.py --dest={beside}/x"),
        ("execute_command(npm test:*)", f"npm test -- --coverageDirectory={beside}"),
        ("execute_command(cargo test:*)", f"cargo test -- --logfile={beside}/log"),
    ]
    for allow, command in calls:
        outcome = await run_unattended(project, allow, command)
        assert outcome.is_error and "is outside the project" in outcome.text, outcome.text
    assert (beside / "secret.txt").exists()
