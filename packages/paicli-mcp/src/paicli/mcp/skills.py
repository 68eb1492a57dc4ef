"""The MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): typed skill entries
and the checks a host makes before it uses a skill's bytes.

A server declaring the extension answers `skills/list` and `skills/get` with entries: the URI
of the skill's `SKILL.md`, its front matter verbatim, and every file of the skill with its
SHA-256 digest and size (or `"dynamic"`: no digests). `Skill.from_wire` refuses an entry
that breaks the rules (name and URI disagree, a file outside the skill, a bad digest, more
than MAX_FILES files or MAX_TOTAL_BYTES in all). Nothing is fetched when a skill is listed:
`ClientSession.read_skill` reads one listed file when asked, and `verified` refuses bytes
whose size or digest differ from the entry, or a `SKILL.md` whose front matter differs from
the entry's. A skill without digests cannot be verified, so its files are never read.

hashlib and PyYAML (extra `paicli-mcp[skills]`) are imported when a file is verified or a
front matter parsed, never by `import paicli.mcp`.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ProtocolError, SkillVerificationError

if TYPE_CHECKING:
    from .types import ReadResourceResult

__all__ = [
    "EXTENSION",
    "Skill",
    "SkillContent",
    "SkillFile",
    "SkillVerificationError",
    "split_front_matter",
]

Json = dict[str, Any]

EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
# The extension's limits per skill: servers should not go past them, and this client refuses
# a skill that does rather than read without end.
MAX_FILES = 512
MAX_TOTAL_BYTES = 16 * 1024 * 1024
# A front matter holds a name, a description and a few short fields; a larger one is refused
# before PyYAML reads it.
MAX_FRONT_MATTER_BYTES = 64 * 1024
# Flow collections (`[`, `{`) nested deeper than this are refused before parsing: PyYAML
# would recurse once per level (and slowly) until Python's limit.
MAX_FLOW_DEPTH = 64
# Agent Skills names: 1-64 of a-z, 0-9 and single hyphens inside.
NAME = re.compile(r"[a-z0-9](?:-?[a-z0-9])*")
MAX_NAME = 64
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_EMPTY_FRONT = re.compile(r"\A---[ \t]*\r?\n---[ \t]*(?:\r?\n|\Z)")


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill as its entry lists it; `size` None when the server gave none."""

    uri: str
    digest: str
    size: int | None = None


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill entry of `skills/list` or `skills/get`. `frontmatter` is the server's JSON
    (shallowly frozen, as in `paicli.mcp.types`); `files` is None for a skill published
    without digests (`"dynamic"`), whose files this client does not read."""

    uri: str
    frontmatter: Json
    files: tuple[SkillFile, ...] | None

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        """The skill's folder: its `SKILL.md` URI without `/SKILL.md`."""
        return self.uri[: -len(SKILL_FILE) - 1]

    def file(self, path: str) -> SkillFile:
        """The listed file at `path` (relative to the skill's folder, or a full URI inside
        it); SkillVerificationError for a path out of the skill or a file not listed."""
        uri = path if "://" in path else f"{self.root}/{_relative(path, self.uri)}"
        if uri != self.uri and not _inside(uri, self.root):
            raise SkillVerificationError(f"skill {self.uri}: {path!r:.200} is not in the skill")
        if self.files is None:
            raise SkillVerificationError(
                f"skill {self.uri}: the server publishes no digests for it, so its files "
                "cannot be verified and are not read"
            )
        for listed in self.files:
            if listed.uri == uri:
                return listed
        raise SkillVerificationError(f"skill {self.uri}: {path!r:.200} is not one of its files")

    @classmethod
    def from_wire(cls, data: Any) -> Skill:
        if not isinstance(data, dict):
            raise ProtocolError(f"skill entry: expected an object, got {data!r:.80}")
        uri = data.get("uri")
        if not isinstance(uri, str) or not _skill_uri(uri):
            raise ProtocolError(f"skill entry: 'uri' is not a skill's SKILL.md: {uri!r:.200}")
        front = data.get("frontmatter")
        if not isinstance(front, dict):
            raise ProtocolError(f"skill {uri}: 'frontmatter' must be an object")
        name, description = front.get("name"), front.get("description")
        if not isinstance(name, str) or not isinstance(description, str):
            raise ProtocolError(f"skill {uri}: the front matter needs a name and a description")
        if not valid_name(name) or uri.rsplit("/", 2)[-2] != name:
            raise ProtocolError(f"skill {uri}: its name {name!r:.80} does not match its URI")
        resources = data.get("resources")
        files = None if resources in ("dynamic", None) else _files(resources, uri)
        return cls(uri=uri, frontmatter=front, files=files)


@dataclass(frozen=True, slots=True)
class SkillContent:
    """A skill's file as read and verified: its bytes and the MIME type the server gave."""

    uri: str
    data: bytes
    mime_type: str | None = None

    @property
    def text(self) -> str:
        """The bytes as UTF-8 (invalid sequences replaced)."""
        return self.data.decode("utf-8", errors="replace")


def valid_name(name: str) -> bool:
    """Whether `name` follows the Agent Skills naming rules."""
    return len(name) <= MAX_NAME and NAME.fullmatch(name) is not None


def verified(skill: Skill, listed: SkillFile, result: ReadResourceResult) -> SkillContent:
    """The content of `listed` from a `resources/read` result, once its size, digest and (for
    `SKILL.md`) front matter match `skill`; SkillVerificationError otherwise."""
    import hashlib  # noqa: PLC0415  (not loaded by `import paicli.mcp`)

    contents = [c for c in result.contents if c.uri == listed.uri] or result.contents[:1]
    if not contents:
        raise SkillVerificationError(f"skill {skill.uri}: {listed.uri} came back empty")
    content = contents[0]
    data = _raw_bytes(content, skill.uri)
    if listed.size is not None and len(data) != listed.size:
        raise SkillVerificationError(
            f"skill {skill.uri}: {listed.uri} is {len(data)} bytes, its entry says {listed.size}"
        )
    if "sha256:" + hashlib.sha256(data).hexdigest() != listed.digest:
        raise SkillVerificationError(
            f"skill {skill.uri}: {listed.uri} does not match its digest (changed or tampered "
            "with); get the skill's entry again to read its current version"
        )
    if listed.uri == skill.uri:
        try:
            front, _ = split_front_matter(data.decode("utf-8", errors="replace"))
        except ProtocolError as exc:
            raise SkillVerificationError(f"skill {skill.uri}: SKILL.md: {exc}") from exc
        differs = sorted(k for k in {*front, *skill.frontmatter} if _differ(front, skill, k))
        if differs:
            raise SkillVerificationError(
                f"skill {skill.uri}: its SKILL.md front matter differs from the entry's "
                f"({', '.join(repr(k)[:80] for k in differs[:5])})"
            )
    return SkillContent(uri=listed.uri, data=data, mime_type=content.mime_type)


def split_front_matter(text: str) -> tuple[Json, str]:
    """A `SKILL.md`'s YAML front matter (between `---` lines at the top) and the body after
    it. ProtocolError naming the problem for front matter that is missing, too large, not a
    mapping, or not YAML this reader takes (anchors and aliases are refused)."""
    text = text.removeprefix("\ufeff")
    if _EMPTY_FRONT.match(text):
        raise ProtocolError("the front matter is empty")
    match = _FRONT.match(text)
    if match is None:
        raise ProtocolError("no front matter: SKILL.md must start with a '---' line")
    block = match.group(1)
    if len(block.encode("utf-8", errors="replace")) > MAX_FRONT_MATTER_BYTES:
        raise ProtocolError(f"the front matter is over {MAX_FRONT_MATTER_BYTES // 1024} KiB")
    if _flow_depth(block) > MAX_FLOW_DEPTH:
        raise ProtocolError("the front matter is nested too deeply")
    front = _load_yaml(block)
    if not isinstance(front, dict):
        raise ProtocolError("the front matter is not a mapping of keys to values")
    return front, text[match.end() :]


def _load_yaml(block: str) -> object:
    try:
        import yaml  # noqa: PLC0415  (optional: paicli-mcp[skills])
    except ImportError as exc:
        raise ProtocolError("reading a skill needs PyYAML: pip install paicli-mcp[skills]") from exc

    class Loader(yaml.SafeLoader):
        """Safe YAML without aliases (no expansion bombs) and with dates kept as the text
        they were (a JSON front matter has no date type to compare them with)."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases are not allowed in a front matter")
            return super().compose_node(parent, index)

    Loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    try:
        return yaml.load(block, Loader=Loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProtocolError(f"the front matter is not valid YAML{line}: {problem}") from exc
    except RecursionError as exc:
        raise ProtocolError("the front matter is nested too deeply") from exc


def _flow_depth(block: str) -> int:
    depth = deepest = 0
    for char in block:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _differ(front: Json, skill: Skill, key: object) -> bool:
    mine, theirs = front.get(key), skill.frontmatter.get(key)  # type: ignore[call-overload]
    return bool(mine != theirs or type(mine) is not type(theirs))


def _raw_bytes(content: Any, where: str) -> bytes:
    # Loaded by the session the skill was read with, not with this module: a program that
    # reads only local skills (`split_front_matter`) need not load the types.
    from .types import BlobResourceContents  # noqa: PLC0415

    if isinstance(content, BlobResourceContents):
        try:
            return base64.b64decode(content.blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SkillVerificationError(f"skill {where}: {content.uri} is not base64") from exc
    return str(content.text).encode("utf-8")


def _files(resources: object, uri: str) -> tuple[SkillFile, ...]:
    if not isinstance(resources, list):
        raise ProtocolError(f"skill {uri}: 'resources' must be a list or \"dynamic\"")
    if len(resources) > MAX_FILES:
        raise ProtocolError(f"skill {uri}: {len(resources)} files, more than {MAX_FILES}")
    root = uri[: -len(SKILL_FILE) - 1]
    files: dict[str, SkillFile] = {}
    for item in resources:
        listed = _file(item, uri)
        if listed.uri != uri and not _inside(listed.uri, root):
            raise ProtocolError(f"skill {uri}: {listed.uri!r:.200} is outside the skill")
        if listed.uri in files:
            raise ProtocolError(f"skill {uri}: {listed.uri!r:.200} is listed twice")
        files[listed.uri] = listed
    if uri not in files:
        raise ProtocolError(f"skill {uri}: its resources do not list SKILL.md")
    total = sum(f.size or 0 for f in files.values())
    if total > MAX_TOTAL_BYTES:
        raise ProtocolError(f"skill {uri}: {total} bytes in all, more than {MAX_TOTAL_BYTES}")
    return tuple(files.values())


def _file(item: object, uri: str) -> SkillFile:
    if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
        raise ProtocolError(f"skill {uri}: a resource is not an object with a 'uri'")
    digest, size = item.get("digest"), item.get("size")
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise ProtocolError(f"skill {uri}: {item['uri']!r:.200} has no sha256 digest")
    if size is not None and (type(size) is not int or size < 0):
        raise ProtocolError(f"skill {uri}: {item['uri']!r:.200} has a bad size {size!r:.40}")
    return SkillFile(uri=item["uri"], digest=digest, size=size)


def _segments_ok(path: str) -> bool:
    return all(part not in ("", ".", "..") and "\\" not in part for part in path.split("/"))


def _skill_uri(uri: str) -> bool:
    scheme, sep, path = uri.partition("://")
    return bool(
        sep
        and scheme
        and path.endswith("/" + SKILL_FILE)
        and _segments_ok(path)
        and path.count("/")
    )


def _inside(uri: str, root: str) -> bool:
    return uri.startswith(root + "/") and _segments_ok(uri[len(root) + 1 :])


def _relative(path: str, uri: str) -> str:
    clean = path.removeprefix("./")
    if not clean or clean.startswith("/") or not _segments_ok(clean):
        raise SkillVerificationError(f"skill {uri}: {path!r:.200} is not a path inside the skill")
    return clean
