"""Saved conversations: written private and whole after each turn, found again per project,
and never read from a name or a file they should not be."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from paicli.agent.sessions import SessionStore
from paicli.llm.messages import Message

TALK: list[Message] = [
    {"role": "system", "content": "you are paicli"},
    {"role": "user", "content": "the code word is KIWI\nremember it"},
    {"role": "assistant", "content": "noted"},
]


def test_a_saved_conversation_comes_back_without_its_system_prompt(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", tmp_path / "project")
    first = store.new_id()
    store.save(first, TALK, "scripted")
    saved = store.latest()
    assert saved is not None and saved.id == first
    assert [m["role"] for m in saved.messages] == ["user", "assistant"]
    assert saved.title == "the code word is KIWI remember it" and saved.model == "scripted"
    path = tmp_path / "sessions" / f"{first}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_each_project_sees_its_own_conversations_newest_first(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    here, there = SessionStore(folder, tmp_path / "a"), SessionStore(folder, tmp_path / "b")
    ids = []
    for word in ("one", "two"):
        ids.append(here.new_id() + "")
        here.save(ids[-1], [{"role": "user", "content": word}])
    there.save(there.new_id(), [{"role": "user", "content": "elsewhere"}])
    titles = [s.title for s in here.recent()]
    assert set(titles) == {"one", "two"} and "elsewhere" not in titles
    assert [s.title for s in there.recent()] == ["elsewhere"]


def test_an_empty_conversation_is_not_saved(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", tmp_path)
    store.save(store.new_id(), [{"role": "system", "content": "x"}])
    assert store.latest() is None


def test_an_id_that_is_not_one_never_becomes_a_file_name(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", tmp_path)
    (tmp_path / "secret.json").write_text(json.dumps({"messages": []}))
    for hostile in ("../secret", "/etc/passwd", "20261204-024500-abcdef/../../x", ""):
        assert store.load(hostile) is None


def test_a_damaged_file_is_skipped_and_odd_messages_dropped(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    store = SessionStore(folder, tmp_path)
    good = store.new_id()
    store.save(good, TALK)
    folder.joinpath("20200101-000000-aaaaaa.json").write_text("{not json")
    odd = {"project": store.project, "messages": [{"role": "evil"}, {"role": "user"}, 7]}
    folder.joinpath("20200101-000000-bbbbbb.json").write_text(json.dumps(odd))
    found = {s.id: s for s in store.recent()}
    assert good in found and "20200101-000000-aaaaaa" not in found
    assert [m["role"] for m in found["20200101-000000-bbbbbb"].messages] == ["user"]
