"""The one atomic-write helper: temporary file beside the target, fsync, rename; files 0600
and new folders 0700 unless told otherwise; a failure leaves the old file and no litter."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from paicli.private_files import make_private_dir, write_atomically


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_and_its_missing_folders_are_private(tmp_path: Path) -> None:
    target = tmp_path / "home" / "audit" / "state.json"
    before = mode(tmp_path)
    write_atomically(target, b"{}\n")
    assert target.read_bytes() == b"{}\n"
    assert mode(target) == 0o600
    assert mode(tmp_path / "home") == 0o700
    assert mode(tmp_path / "home" / "audit") == 0o700
    assert mode(tmp_path) == before  # it existed: left as it was


def test_replacing_makes_the_file_private_unless_its_mode_is_kept(tmp_path: Path) -> None:
    shared, users = tmp_path / "shared.json", tmp_path / "mcp.json"
    for path in (shared, users):
        path.write_text("old")
        path.chmod(0o644)
    write_atomically(shared, b"new")
    write_atomically(users, b"new", keep_mode=True)
    assert (shared.read_text(), mode(shared)) == ("new", 0o600)
    assert (users.read_text(), mode(users)) == ("new", 0o644)


def test_an_explicit_mode_applies_to_a_new_file_even_when_keeping_modes(tmp_path: Path) -> None:
    target = tmp_path / "project.txt"
    write_atomically(target, b"x", mode=0o640, keep_mode=True)
    assert mode(target) == 0o640


def test_an_existing_folder_keeps_its_mode(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o755)
    make_private_dir(folder)
    write_atomically(folder / "f", b"x")
    assert mode(folder) == 0o755


def test_a_failed_replace_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomically(tmp_path / "target", b"x")
    assert sorted(os.listdir(tmp_path)) == ["target"]


def test_a_file_where_a_folder_should_be_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("not a folder")
    with pytest.raises(NotADirectoryError):
        write_atomically(tmp_path / "home" / "f.json", b"x")
    assert (tmp_path / "home").read_text() == "not a folder"


def test_a_dangling_symlink_where_a_folder_should_be_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "home").symlink_to(tmp_path / "missing")
    with pytest.raises(FileExistsError):
        write_atomically(tmp_path / "home" / "f.json", b"x")
    assert not (tmp_path / "missing").exists()
