"""A plugin's hook sees its plugin's folder in the command sandbox, and nothing else of the
hidden ~/.paicli that holds it."""

from __future__ import annotations

from pathlib import Path

from paicli.mcp import Sandbox
from paicli.plugins.sandboxed import reaching


def test_only_the_plugins_own_folder_comes_out_of_hiding(tmp_path: Path) -> None:
    store = tmp_path / ".paicli"
    for name in ("plugins/demo/scripts", "plugins/other", "audit"):
        (store / name).mkdir(parents=True)
    for name in ("oauth-tokens.json", "plugins.json"):
        (store / name).write_text("{}")
    profile = Sandbox.for_project(tmp_path / "project", home=tmp_path)
    assert str(store) in profile.hide
    opened = reaching(profile, store / "plugins" / "demo")
    assert str(store) not in opened.hide
    hidden = set(opened.hide) - set(profile.hide)
    assert hidden == {
        str(store / "audit"),
        str(store / "oauth-tokens.json"),
        str(store / "plugins.json"),
        str(store / "plugins" / "other"),
    }
    assert opened.read_only[-1] == str(store / "plugins" / "demo")
    assert set(profile.hide) - {str(store)} <= set(opened.hide)  # the other stores stay hidden
