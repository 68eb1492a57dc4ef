"""`@path` completion: fuzzy ranking, and the walk behind it (bounded, no credential stores,
no names that would not survive the screen)."""

from __future__ import annotations

from pathlib import Path

from paicli.ui.path_completion import PathIndex, fuzzy_rank


def test_fuzzy_ranks_names_starting_with_it_then_containing_it_then_scattered() -> None:
    paths = ["docs/widget.md", "src/widget_factory.py", "src/my_widget.py", "w/i/d/g/e/t", "x"]
    assert fuzzy_rank("wid", paths) == [
        "docs/widget.md",
        "src/widget_factory.py",
        "src/my_widget.py",
        "w/i/d/g/e/t",
    ]
    assert fuzzy_rank("WFAC", paths) == ["src/widget_factory.py"]
    assert fuzzy_rank("", ["b", "a/"]) == ["b", "a/"]


def test_the_index_walks_the_project_without_secrets_or_hostile_names(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("")
    (tmp_path / "bad\x1b[2J.txt").write_text("")
    (tmp_path / "link").symlink_to("/etc")
    index = PathIndex(tmp_path, None)
    found = index.paths()
    assert "src/" in found and "src/main.py" in found
    assert not [p for p in found if p.startswith((".git", ".ssh")) or "\x1b" in p]
    assert "link/" in found and not [p for p in found if p.startswith("link/") and p != "link/"]
    assert index.complete("src/ma")[0] == "src/main.py"
    assert index.complete("../") == []
