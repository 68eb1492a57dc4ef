"""Checkpoints against a tampered store: paths climbing out through `..`, a blob whose
content no longer matches its name, session ids that are paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.checkpoints.store import CheckpointStore
from tests.checkpoints.test_checkpoints import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


async def test_a_tampered_path_climbing_out_through_dot_dot_is_never_written(
    project: Project, tmp_path: Path
) -> None:
    project.begin("make a file")
    await project.tool("write_file", {"path": "a.txt", "content": "x"})
    project.end()
    store = project.store()
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    climbing = str(project.root / "sub" / ".." / ".." / "victim.txt")
    change = store.turns[0].files.pop(str(project.root / "a.txt"))
    store.turns[0].files[climbing] = change  # before: absent, so a rewind would remove it
    store.current[climbing] = change.after
    store.save()
    restored, skipped = project.rewind(1, overwrite=True)
    assert (restored, skipped) == ([], [climbing])
    assert victim.read_text() == "x"


async def test_a_blob_whose_content_was_swapped_is_not_restored(project: Project) -> None:
    (project.root / "a.txt").write_text("original\n")
    project.begin("edit")
    await project.tool("write_file", {"path": "a.txt", "content": "changed\n"})
    project.end()
    store = project.store()
    before = store.turns[0].files[str(project.root / "a.txt")].before
    assert isinstance(before, str)
    blob = store.folder / "blobs" / before
    blob.chmod(0o600)
    blob.write_text("planted by someone else\n")
    restored, skipped = project.rewind(1, overwrite=True)
    assert restored == []
    assert (project.root / "a.txt").read_text() == "changed\n"
    assert skipped == [str(project.root / "a.txt")]


@pytest.mark.parametrize("session", ["../../x", "/etc", "20261204-221500-abcdef/..", ""])
def test_a_session_id_that_is_a_path_names_no_folder(tmp_path: Path, session: str) -> None:
    assert not CheckpointStore.exists(tmp_path, session)
    with pytest.raises(ValueError, match="not a session id"):
        CheckpointStore(tmp_path, session)
