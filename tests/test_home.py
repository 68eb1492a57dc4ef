"""PaicliHome: the one reader of PAICLI_HOME, and where each of paicli's files lives."""

from __future__ import annotations

from pathlib import Path

from paicli.home import PaicliHome, user_home


def test_the_home_defaults_to_dot_paicli_in_the_users_home_folder(tmp_path: Path) -> None:
    assert PaicliHome.from_environ({"HOME": str(tmp_path)}).root == tmp_path / ".paicli"


def test_paicli_home_moves_it_and_a_tilde_is_expanded(tmp_path: Path) -> None:
    elsewhere = {"HOME": str(tmp_path), "PAICLI_HOME": str(tmp_path / "elsewhere")}
    assert PaicliHome.from_environ(elsewhere).root == tmp_path / "elsewhere"
    assert PaicliHome.from_environ({"PAICLI_HOME": "~/x"}).root == Path.home() / "x"


def test_an_empty_paicli_home_counts_as_unset(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "PAICLI_HOME": ""}
    assert PaicliHome.from_environ(environ).root == tmp_path / ".paicli"


def test_an_injected_home_wins_over_the_process_home(tmp_path: Path) -> None:
    assert user_home({"HOME": str(tmp_path)}) == tmp_path
    assert user_home({}) == Path.home()


def test_every_file_paicli_keeps_has_its_place_under_the_root(tmp_path: Path) -> None:
    home = PaicliHome(tmp_path)
    assert home.mcp_config == tmp_path / "mcp.json"
    assert home.settings_files == (tmp_path / "config.toml", tmp_path / "config.json")
    assert home.trust_store == tmp_path / "trusted-servers.json"
    assert home.permissions == tmp_path / "permissions.json"
    assert home.audit_dir == tmp_path / "audit"
    assert home.tool_results_dir == tmp_path / "tool-results"
    assert home.mcp_log("fs") == tmp_path / "logs" / "mcp" / "fs.log"
    assert home.mcp_log("fs").parent == home.mcp_logs_dir
    assert home.history_file == tmp_path / "history"
