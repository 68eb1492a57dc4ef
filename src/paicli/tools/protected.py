"""Paths the built-in tools never touch without asking: the agent's own controls and the
user's credentials.

A prompt-injected model that may write files could otherwise rewrite what governs it (paicli's
settings, saved permissions and servers), plant a command that runs later (git hooks and
config, shell and SSH startup files, editor tasks, MCP server lists), or read keys and
tokens. A path is protected when one of its names, or a run of its names, matches a rule of
`RULES` after NFKC normalisation and case folding (`.GIT` and a fullwidth `.git` count), or
when it lies in PaicliHome. Writes to any of them always ask; reads ask for credential stores,
environment files, key and credential files, and paicli's own folders. Commands
(`execute_command`) are opaque and not covered.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RULES", "ProtectedPaths", "Rule", "project_root_warning"]


@dataclass(frozen=True)
class Rule:
    """Consecutive path names (fnmatch patterns, lower case) and what they hold."""

    names: tuple[str, ...]
    what: str
    reads: bool = False  # a credential store: reading it asks too


def _rules(names: str, what: str, *, reads: bool = False) -> list[Rule]:
    return [Rule(tuple(each.split("/")), what, reads) for each in names.split()]


_STARTUP = "a shell or login startup file, run in the user's next shell or session"
_KEY = "a credential store (keys, tokens or passwords)"

RULES: tuple[Rule, ...] = (
    # Read-protected too: a home folder's .paicli holds the settings file with its API keys.
    *_rules(".paicli", "paicli's own settings and servers", reads=True),
    *_rules(".mcp.json", "a list of MCP servers that agents start"),
    *_rules(".git", "git's internals, whose config and hooks run commands"),
    *_rules(
        ".gitconfig .config/git",
        "git's user config, where core.fsmonitor, core.pager and aliases run commands",
    ),
    *_rules(".vscode .idea", "editor settings, whose tasks and run configurations run commands"),
    *_rules(".claude .cursor", "another agent's settings, whose hooks run commands"),
    # Read-protected too: its values are the project's secrets (issue 24: `read_file(".env")`
    # put them in the model's context unasked).
    *_rules(
        ".env*", "an environment file (programs and direnv load it; it holds secrets)", reads=True
    ),
    *_rules(
        ".bashrc .bash_profile .bash_login .bash_logout .profile .zshrc .zshenv .zprofile "
        ".zlogin .zlogout .cshrc .tcshrc .kshrc .login .inputrc .xprofile .xinitrc "
        ".xsession .xsessionrc .pam_environment .config/fish .config/autostart "
        ".config/systemd .config/environment.d",
        _STARTUP,
    ),
    *_rules(".ssh", "SSH keys and config (authorized_keys lets others log in)", reads=True),
    *_rules(
        ".aws .gnupg .config/gcloud .config/gh .azure .kube .docker/config.json .netrc "
        ".npmrc .pypirc .git-credentials .cargo/credentials* .vault-token .password-store "
        ".local/share/keyrings",
        _KEY,
        reads=True,
    ),
    *_rules(
        "*.pem *.key *.p12 *.pfx *.p8 *.ppk *.jks *.keystore *.kdbx id_rsa id_dsa id_ecdsa "
        "id_ed25519 id_rsa_* id_dsa_* id_ecdsa_* id_ed25519_*",
        "a private key file",
        reads=True,
    ),
    # Files that hold credentials in a project (cloud and service keys, app secrets, database
    # passwords, Terraform state with every resource's secrets in plain text).
    *_rules(
        "credentials.json client_secret*.json service-account*.json secrets.json secrets.yaml "
        "secrets.yml secrets.toml .pgpass .my.cnf .htpasswd .boto .s3cfg *.tfstate "
        "*.tfstate.backup",
        "a credential file (keys, tokens or passwords)",
        reads=True,
    ),
)


def _normal(path: Path) -> str:
    """`path` with each name NFKC-normalised and case-folded, joined by "/" (a name that NFKC
    turns into one with "/", from a fullwidth solidus, keeps it as NUL: it is one name)."""
    return "".join(
        "/" + unicodedata.normalize("NFKC", name).casefold().replace("/", "\0")
        for name in path.parts[1:]
    )


def _name_regex(pattern: str) -> str:
    return "[^/]*".join(re.escape(piece) for piece in pattern.split("*"))


def _regex(rules: list[Rule]) -> re.Pattern[str]:
    """One regex for `rules` over a normalised path; group `r{i}` names the rule matched."""
    alternatives = [
        f"(?P<r{index}>/{'/'.join(_name_regex(part) for part in rule.names)}(?=/|$))"
        for index, rule in enumerate(rules)
    ]
    return re.compile("|".join(alternatives))


def _last_names(rules: list[Rule]) -> re.Pattern[str]:
    """A regex that a normalised name must fully match to end a match of one of `rules`."""
    return re.compile("|".join(_name_regex(rule.names[-1]) for rule in rules))


@functools.cache
def _patterns(*, writing: bool) -> tuple[list[Rule], re.Pattern[str], re.Pattern[str]]:
    """The rules for writing (all) or reading, their regex and their last-name regex:
    compiled once, at the first check (not at startup, where they cost milliseconds)."""
    rules = list(RULES) if writing else [rule for rule in RULES if rule.reads]
    return rules, _regex(rules), _last_names(rules)


class ProtectedPaths:
    """Answers whether a path is protected, and why, for writing or for reading."""

    def __init__(self, paicli_home: Path | None) -> None:
        homes = () if paicli_home is None else (paicli_home, Path(os.path.realpath(paicli_home)))
        # Compared normalised too: on a case-insensitive disk ~/.PAICLI is the same folder.
        self._homes = tuple(_normal(Path(os.path.abspath(home))) for home in homes)
        self._home_names = frozenset(home.rsplit("/", 1)[-1] for home in self._homes)

    def reason_below(self, folder: Path, name: str, *, writing: bool) -> str | None:
        """`reason` for `folder / name` when `folder` is known not to be protected (as in a
        walk): only a rule ending at `name` can match, so most names are settled by one
        short match instead of the whole path."""
        normal = _normal(Path("/", name))[1:]
        _, _, last = _patterns(writing=writing)
        if normal not in self._home_names and last.fullmatch(normal) is None:
            return None
        return self.reason(folder / name, writing=writing)

    def reason(self, path: Path, *, writing: bool) -> str | None:
        """Why a tool must ask before writing (or reading) the absolute `path`, or None."""
        normal = _normal(path)
        if any(normal == home or normal.startswith(home + "/") for home in self._homes):
            return "paicli's home (settings, saved permissions, trusted servers, logs)"
        rules, regex, _ = _patterns(writing=writing)
        found = regex.search(normal)
        if found is None or found.lastgroup is None:
            return None
        return rules[int(found.lastgroup[1:])].what


def project_root_warning(root: Path, user_home: Path) -> str | None:
    """A warning when the project root is the user's home folder, `/` or a folder above the
    home: the built-in tools then reach every file below it. None for an ordinary project."""
    real = Path(os.path.realpath(root))
    home = Path(os.path.realpath(user_home))
    if real == home:
        where = "your home folder"
    elif real == Path(real.anchor):
        where = "the file system root"
    elif home.is_relative_to(real):
        where = "a folder that holds your home folder"
    else:
        return None
    return (
        f"warning: paicli started in {where} ({root}), so the whole folder is the project: "
        "the file tools can read and write anything below it (credential stores and "
        "startup files still ask first). Start paicli in a project folder instead."
    )
