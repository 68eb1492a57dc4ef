"""Where execute_command runs, decided in memory: the `[sandbox]` settings and `--sandbox`,
and what happens when no mechanism works here (simulated with a `SandboxSupport` value, as
the probe would report it): `on` asks about every command (and `-p` runs none), `required`
refuses before anyone is asked, `off` leaves commands to the usual rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.mcp import SandboxSupport
from paicli.permissions.approval import ApprovingToolbox, Mode, PermissionStore, Policy
from paicli.tools.builtin.sandboxing import CommandSandbox, SandboxSettings, sandbox_settings
from paicli.tools.builtin.toolbox import BuiltinToolbox

NOTHING_WORKS = SandboxSupport("bwrap: not found", "landlock: off", "seccomp: off", "macOS only")
BUBBLEWRAP = SandboxSupport(None, None, None, "macOS only", bwrap="/usr/bin/bwrap")


def test_the_sandbox_table_and_flag_read_as_settings() -> None:
    settings, problems = sandbox_settings(
        {"mode": "required", "allow_hosts": ["pypi.org", "*.npmjs.org"], "write": ["~/.cache"]},
        "config.toml",
        None,
    )
    assert problems == []
    assert settings == SandboxSettings("required", ("pypi.org", "*.npmjs.org"), ("~/.cache",))
    assert sandbox_settings({"mode": "required"}, "c", "off")[0].mode == "off"
    assert sandbox_settings(None, "c", None)[0] == SandboxSettings()


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"mode": "sometimes"}, "sandbox.mode must be one of on, off, required"),
        ({"allow_hosts": "pypi.org"}, "sandbox.allow_hosts must be a list of strings"),
        ({"allow_hosts": ["http://x/"]}, "sandbox.allow_hosts"),
        ("on", "[sandbox] must be a table"),
    ],
)
def test_a_bad_sandbox_setting_is_one_line_and_the_default_stays(
    table: object, problem: str
) -> None:
    settings, problems = sandbox_settings(table, "config.toml", None)
    assert len(problems) == 1 and problem in problems[0], problems
    assert settings.mode == "on"


def toolbox(tmp_path: Path, mode: str, support: SandboxSupport) -> BuiltinToolbox:
    settings = SandboxSettings(mode)  # type: ignore[arg-type]
    sandbox = CommandSandbox(settings, tmp_path, home=tmp_path / "home", support=support)
    return BuiltinToolbox(tmp_path, sandbox=sandbox)


def approving(builtin: BuiltinToolbox, tmp_path: Path, mode: Mode) -> ApprovingToolbox:
    return ApprovingToolbox(
        builtin,
        policy=Policy(allow=("execute_command",)),
        store=PermissionStore(tmp_path / "permissions.json", project=tmp_path),
        approver=None,
        mode=mode,
        root=tmp_path,
        contained=builtin.contained,
    )


async def test_with_no_mechanism_an_allowed_command_is_not_run_unasked(tmp_path: Path) -> None:
    builtin = toolbox(tmp_path, "on", NOTHING_WORKS)
    spec = next(s for s in builtin.specs() if s.name == "execute_command")
    assert not builtin.contained(spec)
    outcome = await approving(builtin, tmp_path, Mode.DEFAULT).call(spec, {"command": "touch made"})
    assert outcome.decision == "denied"
    assert "outside any sandbox" in outcome.text and "install bubblewrap" in outcome.text
    assert not (tmp_path / "made").exists()


def test_required_refuses_a_command_before_anyone_is_asked(tmp_path: Path) -> None:
    builtin = toolbox(tmp_path, "required", NOTHING_WORKS)
    spec = next(s for s in builtin.specs() if s.name == "execute_command")
    refusal = builtin.precheck(spec, {"command": "true"})
    assert refusal is not None and "--sandbox required" in refusal.text


def test_off_leaves_commands_to_the_rules_and_never_contains_them(tmp_path: Path) -> None:
    builtin = toolbox(tmp_path, "off", BUBBLEWRAP)
    spec = next(s for s in builtin.specs() if s.name == "execute_command")
    assert builtin.must_ask(spec, {"command": "true"}) is None
    assert not builtin.contained(spec)
    assert builtin.precheck(spec, {"command": "true"}) is None


def test_a_contained_command_is_one_accept_edits_may_run(tmp_path: Path) -> None:
    builtin = toolbox(tmp_path, "on", BUBBLEWRAP)
    spec = next(s for s in builtin.specs() if s.name == "execute_command")
    assert builtin.contained(spec)
    assert builtin.must_ask(spec, {"command": "true"}) is None
