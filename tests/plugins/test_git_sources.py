"""Plugins and marketplaces cloned with git over HTTP on 127.0.0.1 (git's smart HTTP), and
the clones paicli must not make: a transport it does not allow, a server that never answers
(stopped at the timeout, no git process left behind)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from paicli.cli import main
from paicli.plugins.install import fetch_source
from paicli.plugins.manifest import PluginError
from paicli.plugins.registry import Registry, enabled_plugins
from tests.plugins.builders import write_plugin
from tests.plugins.git_http import bare_repository, serving
from tests.processes import processes_with

pytestmark = pytest.mark.real


def test_a_plugin_and_a_marketplace_are_cloned_from_a_served_repository(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    bare_repository(write_plugin(tmp_path / "demo"), served / "demo.git")
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    with serving(served) as base:
        index = {
            "name": "remote",
            "owner": {"name": "t"},
            "plugins": [{"name": "demo", "source": {"source": "url", "url": f"{base}/demo.git"}}],
        }
        (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(index))
        bare_repository(market, served / "market.git")
        assert main(["plugin", "marketplace", "add", f"{base}/market.git"]) == 0
        assert main(["plugin", "add", "--yes", "demo@remote"]) == 0, capsys.readouterr().err
    installed = home / "plugins" / "demo"
    assert not (installed / ".git").exists()
    assert (installed / "commands" / "hello.md").is_file()
    (plugin,) = Registry(home).plugins()
    assert plugin.key == "demo@remote" and plugin.source.endswith("/demo.git")
    assert [p.name for p in enabled_plugins(home, Path.cwd())[0]] == ["demo"]


def test_a_clone_that_hangs_is_stopped_at_the_timeout_with_nothing_left(
    tmp_path: Path,
) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/hang.git"
        with pytest.raises(PluginError, match=r"git clone took over 1 s"):
            fetch_source(url, tmp_path / "staging", timeout=1.0)
        assert processes_with(url) == []
    assert list((tmp_path / "staging").iterdir()) == []


def test_git_is_told_which_transports_it_may_use(tmp_path: Path) -> None:
    # A file:// URL is allowed; a redirect or submodule to ext:: would be refused by git
    # itself (GIT_ALLOW_PROTOCOL): shown here with the environment paicli gives it.
    source = write_plugin(tmp_path / "demo")
    bare = bare_repository(source, tmp_path / "demo.git")
    fetched = fetch_source(f"file://{bare}", tmp_path / "staging")
    assert (fetched / ".claude-plugin" / "plugin.json").is_file()
    with pytest.raises(PluginError, match="not a folder nor a git URL"):
        fetch_source("ext::sh -c 'touch /tmp/pwned'", tmp_path / "staging")
