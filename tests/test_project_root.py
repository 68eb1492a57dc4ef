"""The project a run belongs to is found from any of its subfolders; paicli's own folder in
the home folder does not make the home folder a project."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.project_root import project_root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".paicli").mkdir(parents=True)  # paicli's own folder, as after any run
    return folder


def env(home: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(home), **more}


@pytest.mark.parametrize("marker", [".git", ".mcp.json", ".paicli"])
def test_the_nearest_folder_up_with_a_marker_is_the_project(home: Path, marker: str) -> None:
    project = home / "code" / "app"
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    (project / marker).mkdir() if marker != ".mcp.json" else (project / marker).write_text("{}")
    assert project_root(deep, env(home)) == project
    assert project_root(project, env(home)) == project


def test_the_nearest_marker_wins_over_one_further_up(home: Path) -> None:
    outer, inner = home / "mono", home / "mono" / "packages" / "web"
    (outer / ".git").mkdir(parents=True)
    (inner / ".paicli").mkdir(parents=True)
    (inner / "src").mkdir()
    assert project_root(inner / "src", env(home)) == inner


def test_without_a_marker_the_working_folder_is_the_project(home: Path) -> None:
    loose = home / "notes" / "today"
    loose.mkdir(parents=True)
    assert project_root(loose, env(home)) == loose


def test_paicli_home_does_not_make_the_home_folder_a_project(home: Path, tmp_path: Path) -> None:
    somewhere = home / "Downloads"
    somewhere.mkdir()
    assert project_root(somewhere, env(home)) == somewhere
    # PAICLI_HOME elsewhere: that folder's parent is no project either.
    other = tmp_path / "elsewhere"
    (other / ".paicli").mkdir(parents=True)
    (other / "sub").mkdir()
    moved = env(home, PAICLI_HOME=str(other / ".paicli"))
    assert project_root(other / "sub", moved) == other / "sub"


def test_the_home_folder_with_a_git_of_its_own_is_a_project(home: Path) -> None:
    (home / ".git").mkdir()
    (home / "Downloads").mkdir()
    assert project_root(home / "Downloads", env(home)) == home
