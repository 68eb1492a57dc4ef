"""Checkpoints on real files, in process: the file tools record before they change, a
rewind brings files back (and refuses what it must), the store stays private and bounded."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.checkpoints.recorder import Checkpoints, fingerprint
from paicli.checkpoints.restore import apply, conversation_cut, plan_code
from paicli.checkpoints.store import ABSENT, UNKNOWN, CheckpointStore, Limits, Turn, prune_old
from paicli.checkpoints.toolbox import CheckpointingToolbox
from paicli.tools.base import ToolOutcome
from paicli.tools.builtin.paths import Confinement
from paicli.tools.builtin.toolbox import BuiltinToolbox

SESSION = "20261204-221500-abcdef"


class Project:
    def __init__(self, tmp_path: Path, limits: Limits | None = None) -> None:
        self.root = tmp_path / "project"
        self.root.mkdir()
        self.home = tmp_path / "home"
        self.builtin = BuiltinToolbox(self.root)
        self.checkpoints = Checkpoints(self.home, [self.root], limits=limits)
        self.toolbox = CheckpointingToolbox(self.builtin, self.checkpoints, self.builtin.paths)
        self.messages: list[dict[str, object]] = []

    async def tool(self, name: str, arguments: Mapping[str, object]) -> ToolOutcome:
        spec = next(s for s in self.toolbox.specs() if s.name == name)
        early = self.toolbox.precheck(spec, arguments)
        return early if early is not None else await self.toolbox.call(spec, arguments)

    def begin(self, prompt: str) -> None:
        self.checkpoints.begin(SESSION, prompt, len(self.messages))
        self.messages.append({"role": "user", "content": prompt})

    def end(self) -> None:
        self.messages.append({"role": "assistant", "content": "done"})
        self.checkpoints.end(self.messages)

    def store(self) -> CheckpointStore:
        return CheckpointStore(self.home, SESSION)  # as read back by another process

    def rewind(self, number: int, *, overwrite: bool = False) -> tuple[list[str], list[str]]:
        store = self.store()
        paths = Confinement(self.root)
        plan = plan_code(store, number, paths)
        assert plan is not None
        done = apply(plan, store, paths, overwrite=overwrite)
        return done.written + done.removed, [path for path, _ in done.skipped]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


async def test_a_rewind_brings_back_edited_files_and_removes_created_ones(
    project: Project,
) -> None:
    (project.root / "a.txt").write_text("one\n")
    project.begin("change a, make b")
    await project.tool("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"})
    await project.tool("write_file", {"path": "sub/b.txt", "content": "new\n"})
    project.end()
    project.begin("again")
    await project.tool("edit_file", {"path": "a.txt", "old_string": "two", "new_string": "three"})
    project.end()
    assert [t.number for t in project.store().turns] == [1, 2]
    assert set(project.store().turns[0].files) == {
        str(project.root / "a.txt"),
        str(project.root / "sub" / "b.txt"),
    }

    restored, skipped = project.rewind(2)
    assert (project.root / "a.txt").read_text() == "two\n"
    assert (skipped, restored) == ([], [str(project.root / "a.txt")])
    project.rewind(1)
    assert (project.root / "a.txt").read_text() == "one\n"
    assert not (project.root / "sub" / "b.txt").exists()
    project.rewind(3 - 1)  # forward again: the state before turn 2, after a code rewind
    assert (project.root / "a.txt").read_text() == "two\n"
    assert (project.root / "sub" / "b.txt").read_text() == "new\n"


async def test_a_file_changed_since_is_left_alone_unless_overwritten(project: Project) -> None:
    (project.root / "a.txt").write_text("one\n")
    project.begin("edit")
    await project.tool("write_file", {"path": "a.txt", "content": "model\n"})
    project.end()
    (project.root / "a.txt").write_text("the user's own work\n")
    store = project.store()
    plan = plan_code(store, 1, Confinement(project.root))
    assert plan is not None and [s.path for s in plan.conflicts] == [str(project.root / "a.txt")]
    restored, skipped = project.rewind(1)
    assert (restored, skipped) == ([], [str(project.root / "a.txt")])
    assert (project.root / "a.txt").read_text() == "the user's own work\n"
    project.rewind(1, overwrite=True)
    assert (project.root / "a.txt").read_text() == "one\n"


async def test_a_refused_or_failed_write_records_nothing(project: Project) -> None:
    (project.root / "a.txt").write_text("one\n")
    project.begin("fail")
    outcome = await project.tool(
        "edit_file", {"path": "a.txt", "old_string": "x", "new_string": "y"}
    )
    assert outcome.is_error
    await project.tool("write_file", {"path": "../outside.txt", "content": "x"})
    project.end()
    assert project.store().turns[0].files == {}
    assert not (project.root.parent / "outside.txt").exists()


async def test_a_restore_never_follows_a_symlink_swapped_in_since(
    project: Project, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project.root / "sub").mkdir()
    (project.root / "sub" / "a.txt").write_text("one\n")
    project.begin("edit")
    await project.tool("write_file", {"path": "sub/a.txt", "content": "two\n"})
    project.end()
    (project.root / "sub" / "a.txt").unlink()
    (project.root / "sub").rmdir()
    (project.root / "sub").symlink_to(elsewhere)  # the folder now leads out of the project
    restored, skipped = project.rewind(1, overwrite=True)
    assert (restored, skipped) == ([], [str(project.root / "sub" / "a.txt")])
    assert list(elsewhere.iterdir()) == []


async def test_commands_changes_are_found_and_what_was_not_kept_is_said(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    (project.root / "keep.txt").write_text("before\n")
    (project.root / "gone.txt").write_text("delete me\n")
    (project.root / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
    project.begin("!run a command")
    project.checkpoints.before_command()  # what the toolbox does around execute_command
    (project.root / "keep.txt").write_text("after\n")
    (project.root / "gone.txt").unlink()
    (project.root / "made.txt").write_text("new\n")
    (project.root / "big.bin").write_bytes(b"y" * 10)
    project.checkpoints.after_command("sh -c 'change things'")
    project.end()
    turn = project.store().turns[0]
    assert turn.commands == ["sh -c 'change things'"]
    assert turn.files[str(project.root / "big.bin")].before == UNKNOWN
    assert turn.files[str(project.root / "made.txt")].before is ABSENT
    plan = plan_code(project.store(), 1, Confinement(project.root))
    assert plan is not None
    assert plan.lost == [str(project.root / "big.bin")]
    assert "turn 1 ran commands (`sh -c 'change things'`)" in plan.notes[0]
    assert "is not undone" in plan.notes[0]
    project.rewind(1)
    assert (project.root / "keep.txt").read_text() == "before\n"
    assert (project.root / "gone.txt").read_text() == "delete me\n"
    assert not (project.root / "made.txt").exists()
    assert (project.root / "big.bin").read_bytes() == b"y" * 10  # said, not touched


def test_the_store_is_private_and_bounded(tmp_path: Path) -> None:
    limits = Limits(blob_bytes=10, store_bytes=25, turns=2)
    store = CheckpointStore(tmp_path, SESSION, limits)
    assert store.put(b"x" * 11) == UNKNOWN  # over one blob's cap
    first = store.put(b"a" * 10)
    second = store.put(b"b" * 10)
    assert store.put(b"c" * 10) == UNKNOWN  # the store is full
    assert store.get(str(first)) == b"a" * 10 and second != UNKNOWN
    store.save()
    for path in (store.folder, store.folder / "blobs"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
    for path in [store.folder / "index.json", *(store.folder / "blobs").iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(ValueError, match="not a session id"):
        CheckpointStore(tmp_path, "../../etc")


async def test_only_the_last_turns_are_kept_with_the_blobs_they_need(tmp_path: Path) -> None:
    project = Project(tmp_path, Limits(turns=2))
    for number in range(4):
        project.begin(f"turn {number}")
        await project.tool("write_file", {"path": f"f{number}.txt", "content": f"{number}\n"})
        await project.tool("write_file", {"path": "same.txt", "content": f"v{number}\n"})
        project.end()
    store = project.store()
    assert [t.number for t in store.turns] == [3, 4]
    kept = {p.name for p in (store.folder / "blobs").iterdir()}
    needed = {
        s for t in store.turns for c in t.files.values() for s in (c.before, c.after) if s
    } | {s for s in store.current.values() if s}
    assert kept == needed


def test_a_broken_index_is_an_empty_store(tmp_path: Path) -> None:
    folder = tmp_path / SESSION
    folder.mkdir()
    (folder / "index.json").write_text(
        '{"turns": [{"n": "x"}, {"n": 1, "messages": 0, "files": {"relative": {"before": null}}}]}'
    )
    store = CheckpointStore(tmp_path, SESSION)
    assert [t.number for t in store.turns] == [1] and store.turns[0].files == {}


def test_the_conversation_is_cut_where_the_turn_began_even_after_compaction() -> None:
    project_messages: list[Mapping[str, object]] = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ]
    turn = Turn(2, "second", "", 2, first=fingerprint(project_messages[2]))
    assert conversation_cut(turn, project_messages) == 2
    compacted = [{"role": "user", "content": "summary"}, project_messages[2]]
    assert conversation_cut(turn, compacted) == 1
    assert conversation_cut(turn, [{"role": "user", "content": "summary"}]) is None


async def test_outside_a_turn_nothing_is_recorded(project: Project) -> None:
    await project.tool("write_file", {"path": "a.txt", "content": "x"})
    assert not CheckpointStore.exists(project.home, SESSION)
    assert (project.root / "a.txt").read_text() == "x"


async def test_a_tampered_path_outside_the_project_is_never_written(
    project: Project, tmp_path: Path
) -> None:
    project.begin("make a file")
    await project.tool("write_file", {"path": "a.txt", "content": "x"})
    project.end()
    store = project.store()
    victim = tmp_path / "victim.txt"
    victim.write_text("x")  # as if paicli had left it so: no conflict to stop the rewind
    change = store.turns[0].files.pop(str(project.root / "a.txt"))
    store.turns[0].files[str(victim)] = change  # before: absent, so a rewind would remove it
    store.current[str(victim)] = change.after
    store.save()
    restored, skipped = project.rewind(1, overwrite=True)
    assert (restored, skipped) == ([], [str(victim)])
    assert victim.read_text() == "x"


def test_checkpoints_a_month_old_are_deleted_and_nothing_else(tmp_path: Path) -> None:
    old, recent = "20261001-100000-aaaaaa", SESSION
    for session in (old, recent):
        CheckpointStore(tmp_path, session).save()
    stale, starting = "20261001-100000-bbbbbb", "20261204-225900-cccccc"
    for folder in (stale, starting, "not-a-session"):  # (no index: a first turn, or nothing)
        (tmp_path / folder).mkdir()
    month = 31 * 86_400
    for path in (tmp_path / old / "index.json", tmp_path / stale):
        os.utime(path, (0, path.stat().st_mtime - month))
    assert sorted(prune_old(tmp_path)) == [old, stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == [recent, starting, "not-a-session"]


async def test_what_a_command_may_change_is_kept_when_older_turns_are_dropped(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path, Limits(turns=1))
    (project.root / "a.txt").write_text("one\n")
    project.begin("look first")
    project.checkpoints.before_command()  # a.txt kept, no turn refers to it
    project.checkpoints.after_command("true")
    project.end()
    project.begin("now a command changes it")
    # A write saves the index: turn 1 is dropped, and the blobs no turn needs are collected.
    await project.tool("write_file", {"path": "b.txt", "content": "b\n"})
    project.checkpoints.before_command()
    (project.root / "a.txt").write_text("two\n")
    project.checkpoints.after_command("echo two > a.txt")
    project.end()
    project.rewind(2)
    assert (project.root / "a.txt").read_text() == "one\n"


def test_a_new_conversation_keeps_its_own_copy_of_what_a_command_may_change(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    (project.root / "a.txt").write_text("one\n")
    project.begin("a command in the first conversation")
    project.checkpoints.before_command()
    project.checkpoints.after_command("true")
    project.end()
    other = "20261204-230000-bbbbbb"  # /clear: the next turn is another conversation's
    project.checkpoints.begin(other, "a command in the second", 0)
    project.checkpoints.before_command()
    (project.root / "a.txt").write_text("two\n")
    project.checkpoints.after_command("echo two > a.txt")
    project.checkpoints.end([{"role": "user", "content": "a command in the second"}])
    store = CheckpointStore(project.home, other)
    plan = plan_code(store, 1, Confinement(project.root))
    assert plan is not None and plan.lost == []
    apply(plan, store, Confinement(project.root), overwrite=False)
    assert (project.root / "a.txt").read_text() == "one\n"


def test_conversations_share_one_copy_of_a_content_until_none_keeps_it(tmp_path: Path) -> None:
    first, second = (
        CheckpointStore(tmp_path, SESSION),
        CheckpointStore(tmp_path, "20261001-100000-aaaaaa"),
    )
    key = first.put(b"the same file")
    assert second.put(b"the same file") == key and second.get(str(key)) == b"the same file"
    inode = (first.folder / "blobs" / str(key)).stat()
    assert inode.st_ino == (second.folder / "blobs" / str(key)).stat().st_ino
    assert inode.st_nlink == 3  # the two conversations, and the shared link
    first.save()
    second.save()
    month = 31 * 86_400
    for store in (first, second):
        index = store.folder / "index.json"
        os.utime(index, (0, index.stat().st_mtime - month))
    prune_old(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blobs"]
    assert list((tmp_path / "blobs").iterdir()) == []
