"""A project whose start asks nothing: its question files and the answers, as a digest.
Any change to them means asking first again; a file that is not a plain config file is
never read here (the careful start reads it, with its checks)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from paicli.answered_projects import answered, remember
from paicli.home import PaicliHome


def project_with_servers(tmp_path: Path) -> tuple[Path, PaicliHome]:
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    (project / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "a"}}}')
    return project, PaicliHome(tmp_path / "home" / ".paicli")


def test_a_remembered_project_is_answered_until_a_file_or_an_answer_changes(
    tmp_path: Path,
) -> None:
    project, home = project_with_servers(tmp_path)
    assert not answered(project, home)
    remember(project, home)
    assert answered(project, home)
    assert not answered(tmp_path, home)  # another folder

    (project / ".paicli" / "settings.json").write_text('{"permissions": {"allow": ["x"]}}')
    assert not answered(project, home)  # a file appeared
    remember(project, home)
    (project / ".mcp.json").write_text('{"mcpServers": {"b": {"command": "b"}}}')
    assert not answered(project, home)  # a file changed
    remember(project, home)
    home.trust_store.write_text("{}")
    assert not answered(project, home)  # an answer was given or revoked


def test_the_record_is_private_and_bounded(tmp_path: Path) -> None:
    home = PaicliHome(tmp_path / "home" / ".paicli")
    remember(tmp_path, home)
    record = home.answered_projects
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    many = {f"/p{n}": "0" * 64 for n in range(250)}
    record.write_text(json.dumps(many))
    remember(tmp_path, home)
    kept = json.loads(record.read_text())
    assert len(kept) == 200 and "/p0" not in kept and "/p249" in kept
    assert answered(tmp_path, home)  # the newest is kept


def test_a_fifo_or_a_folder_as_a_config_file_is_never_answered_and_never_blocks(
    tmp_path: Path,
) -> None:
    project, home = project_with_servers(tmp_path)
    os.mkfifo(project / ".paicli" / "mcp.json")  # a read would wait for a writer forever
    remember(project, home)
    assert not answered(project, home)
    assert not home.answered_projects.exists()
    (project / ".paicli" / "mcp.json").unlink()
    (project / ".paicli" / "mcp.json").mkdir()
    remember(project, home)
    assert not answered(project, home)


def test_a_damaged_record_counts_as_nothing_answered(tmp_path: Path) -> None:
    project, home = project_with_servers(tmp_path)
    remember(project, home)
    for damaged in ("not json", "[1, 2]", '{"x": 1}', ""):
        home.answered_projects.write_text(damaged)
        assert not answered(project, home)
        remember(project, home)  # and it is written afresh
        assert answered(project, home)


def test_the_users_own_server_and_settings_files_count_too(tmp_path: Path) -> None:
    """A user server of the same name hides a project's, and config.toml can let a project
    server read secrets: a change to either means asking first again."""
    project, home = project_with_servers(tmp_path)
    home.root.mkdir(parents=True)
    home.mcp_config.write_text('{"mcpServers": {"a": {"command": "mine"}}}')
    remember(project, home)
    home.mcp_config.write_text('{"mcpServers": {}}')
    assert not answered(project, home)
    remember(project, home)
    home.settings_files[0].write_text("[projects]\n")
    assert not answered(project, home)


def test_a_config_file_leading_out_of_the_project_or_a_fifo_record_is_never_read(
    tmp_path: Path,
) -> None:
    project, home = project_with_servers(tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_text('{"mcpServers": {}}')
    (project / ".paicli" / "mcp.json").symlink_to(outside)
    remember(project, home)
    assert not answered(project, home) and not home.answered_projects.exists()
    (project / ".paicli" / "mcp.json").unlink()
    home.root.mkdir(parents=True)
    os.mkfifo(home.answered_projects)  # a plain open would wait for a writer forever
    assert not answered(project, home)


def test_claude_codes_settings_files_and_hook_answers_count_too(tmp_path: Path) -> None:
    project, home = project_with_servers(tmp_path)
    remember(project, home)
    (project / ".claude").mkdir()
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(hooks))
    assert not answered(project, home)  # new hooks: asked about first
    remember(project, home)
    home.hook_approvals.parent.mkdir(parents=True, exist_ok=True)
    home.hook_approvals.write_text("{}")
    assert not answered(project, home)  # an answer about hooks was given
