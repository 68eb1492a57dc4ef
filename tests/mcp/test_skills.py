"""The MCP Skills extension (SEP-2640): listing, getting and reading skills, every file
verified against the skill's entry, against our skills server (tests/server_programs/
skills_server.py) in memory and, once, as a real process."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from paicli import mcp
from paicli.mcp.skills import MAX_FILES, split_front_matter
from tests.conftest import SERVER_PROGRAMS
from tests.memory_servers import skills_in_memory
from tests.server_programs.skills_server import SkillsServer

SKILL = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
---
Fill forms with references/FORMS.md.
"""


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    (root / "pdf-processing" / "references").mkdir(parents=True)
    (root / "pdf-processing" / "SKILL.md").write_text(SKILL)
    (root / "pdf-processing" / "references" / "FORMS.md").write_text("Form rules.\n")
    (root / "changelog").mkdir()
    (root / "changelog" / "SKILL.md").write_text(
        "---\nname: changelog\ndescription: Write a CHANGELOG entry.\n---\nBody.\n"
    )
    return root


@asynccontextmanager
async def session_with(
    folder: Path, tamper: str | None = None
) -> AsyncIterator[tuple[mcp.ClientSession, SkillsServer]]:
    async with (
        skills_in_memory(folder, tamper=tamper) as (transport, server),
        mcp.ClientSession(transport, name="skills", protocol="legacy") as session,
    ):
        yield session, server


async def test_listing_gives_every_skill_and_reads_no_file(skills: Path) -> None:
    async with session_with(skills) as (session, server):
        listed = await session.list_skills()
        assert [s.name for s in listed] == ["changelog", "pdf-processing"]
        pdf = listed[1]
        assert pdf.uri == "skill://pdf-processing/SKILL.md"
        assert pdf.root == "skill://pdf-processing"
        assert pdf.description == "Extract, fill, and assemble PDF documents"
        assert pdf.files is not None
        assert {f.uri for f in pdf.files} == {pdf.uri, f"{pdf.root}/references/FORMS.md"}
        assert server.reads == []  # no prefetch


async def test_a_skill_and_its_files_are_read_verified(skills: Path) -> None:
    async with session_with(skills) as (session, server):
        skill = await session.get_skill("skill://pdf-processing/SKILL.md")
        document = await session.read_skill(skill)
        assert document.text == SKILL
        front, body = split_front_matter(document.text)
        assert front["name"] == "pdf-processing"
        assert body == "Fill forms with references/FORMS.md.\n"
        forms = await session.read_skill(skill, "references/FORMS.md")
        assert forms.data == b"Form rules.\n"
        assert server.reads == [skill.uri, f"{skill.root}/references/FORMS.md"]


async def test_an_unknown_skill_is_an_rpc_error(skills: Path) -> None:
    async with session_with(skills) as (session, _):
        with pytest.raises(mcp.RpcError) as caught:
            await session.get_skill("skill://nothing/SKILL.md")
        assert caught.value.code == -32602


@pytest.mark.parametrize("tamper", ["digest", "size", "frontmatter"])
async def test_a_tampered_skill_is_refused_and_nothing_more_is_read(
    skills: Path, tamper: str
) -> None:
    async with session_with(skills, tamper) as (session, server):
        skill = await session.get_skill("skill://pdf-processing/SKILL.md")
        with pytest.raises(mcp.SkillVerificationError) as caught:
            await session.read_skill(skill)
        assert {"digest": "digest", "size": "bytes", "frontmatter": "front matter"}[tamper] in str(
            caught.value
        )
        assert server.reads == [skill.uri]


@pytest.mark.parametrize(
    "path",
    [
        "../changelog/SKILL.md",
        "/etc/passwd",
        "references/../../x",
        "",
        "a//b",
        "NOTES.md",
        "skill://changelog/SKILL.md",
        "references\\..\\x",
    ],
)
async def test_a_path_out_of_the_skill_or_unlisted_is_never_requested(
    skills: Path, path: str
) -> None:
    async with session_with(skills) as (session, server):
        skill = await session.get_skill("skill://pdf-processing/SKILL.md")
        with pytest.raises(mcp.SkillVerificationError):
            await session.read_skill(skill, path)
        assert server.reads == []


def entry(**changes: Any) -> dict[str, Any]:
    data = b"x"
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    base: dict[str, Any] = {
        "uri": "skill://acme/tools/pdf/SKILL.md",
        "frontmatter": {"name": "pdf", "description": "PDFs"},
        "resources": [{"uri": "skill://acme/tools/pdf/SKILL.md", "digest": digest, "size": 1}],
    }
    base.update(changes)
    return base


def test_an_entry_under_a_prefix_is_read() -> None:
    skill = mcp.Skill.from_wire(entry())
    assert (skill.name, skill.root) == ("pdf", "skill://acme/tools/pdf")


@pytest.mark.parametrize(
    "changes",
    [
        {"uri": "skill://acme/other/SKILL.md"},  # name and URI disagree
        {"uri": "skill://acme/../pdf/SKILL.md"},
        {"uri": "skill://pdf/README.md"},
        {"frontmatter": {"name": "pdf"}},
        {"frontmatter": {"name": "PDF--x", "description": "d"}, "uri": "skill://PDF--x/SKILL.md"},
        {"resources": [{"uri": "skill://acme/tools/pdf/SKILL.md", "digest": "md5:00"}]},
        {"resources": [{"uri": "skill://elsewhere/x", "digest": "sha256:" + "0" * 64}]},
        {"resources": []},  # SKILL.md not listed
        {"resources": "everything"},
        {
            "resources": [
                {"uri": f"skill://acme/tools/pdf/{n}", "digest": "sha256:" + "0" * 64}
                for n in ["SKILL.md", *range(MAX_FILES)]
            ]
        },
        {
            "resources": [
                {
                    "uri": "skill://acme/tools/pdf/SKILL.md",
                    "digest": "sha256:" + "0" * 64,
                    "size": 17 * 1024 * 1024,
                }
            ]
        },
    ],
)
def test_an_entry_breaking_the_rules_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(mcp.ProtocolError):
        mcp.Skill.from_wire(entry(**changes))


def test_a_skill_without_digests_is_listed_but_its_files_are_not_read() -> None:
    skill = mcp.Skill.from_wire(entry(resources="dynamic"))
    assert skill.files is None
    with pytest.raises(mcp.SkillVerificationError, match="no digests"):
        skill.file("SKILL.md")


async def test_a_malformed_entry_is_left_out_of_the_list(skills: Path) -> None:
    (skills / "Bad Name").mkdir()
    (skills / "Bad Name" / "SKILL.md").write_text("---\nname: Bad Name\ndescription: x\n---\n")
    async with session_with(skills) as (session, _):
        assert [s.name for s in await session.list_skills()] == ["changelog", "pdf-processing"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter\n", "no front matter"),
        ("---\n---\nbody", "empty"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\na: &x [1]\nb: *x\n---\n", "aliases"),
        ("---\n" + "x: " + "[" * 5000 + "\n---\n", "nested too deeply"),
        ("---\nd: '" + "y" * 70_000 + "'\n---\n", "KiB"),
    ],
)
def test_a_hostile_front_matter_is_one_clear_problem(text: str, problem: str) -> None:
    with pytest.raises(mcp.ProtocolError, match=problem):
        split_front_matter(text)


def test_dates_in_a_front_matter_stay_text() -> None:
    front, body = split_front_matter("---\nname: x\nupdated: 2026-01-02\n---\nbody\n")
    assert front == {"name": "x", "updated": "2026-01-02"}
    assert body == "body\n"


@pytest.mark.real
async def test_skills_from_a_real_server_process(skills: Path, tmp_path: Path) -> None:
    reads = tmp_path / "reads"
    server = mcp.StdioServer(
        sys.executable,
        args=[str(SERVER_PROGRAMS / "skills_server.py"), str(skills), "--reads", str(reads)],
    )
    async with mcp.connect(server) as session:
        assert "io.modelcontextprotocol/skills" in session.server_capabilities["extensions"]
        listed = await session.list_skills()
        assert not reads.exists()
        pdf = next(s for s in listed if s.name == "pdf-processing")
        assert (await session.read_skill(pdf, "references/FORMS.md")).text == "Form rules.\n"
    assert reads.read_text().splitlines() == ["skill://pdf-processing/references/FORMS.md"]
