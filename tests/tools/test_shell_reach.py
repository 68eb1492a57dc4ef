"""What an allow rule may vouch for: a command's options read from the tables in
`tools/shell/known*.py`, its paths against the project, its sed script, and what a shell would
still expand."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from paicli.tools.shell.line import invocations, line_invocations
from paicli.tools.shell.reach import canonical, rule_prefix, uncovered
from paicli.tools.shell.sed import sed_reason

ROOT = Path("/work/project")


def why(command: str, *, root: Path = ROOT) -> str | None:
    return uncovered(shlex.split(command), root, root)


@pytest.mark.parametrize(
    "command",
    [
        "git diff",
        "git diff --stat HEAD~1 -- src",
        "git diff -U5 --cached",
        "git -C sub log -n5 --oneline --author=me",
        "git log -p --grep=/etc/passwd",  # a pattern, not a path
        "git status -sb",
        "git config --get user.name",
        "git commit -m 'fix /etc/hosts parsing'",
        "ls -la src",
        "cat README.md",
        "head -20 README.md",
        "sed -n '1,5p;/x/d' README.md",
        "sed -e 's/a/b/g' -e 'y/ab/cd/' README.md",
        "find . -name '*.py' -type f -newer setup.py",
        "grep -rn -e foo -- src",
        "grep -3 '/api/v1' src",
        "rg --glob '*.py' -i foo src",
        "npm test -- --watch",
        "npm run build --if-present",
        "cargo test --release -p core -- --nocapture",
        "go test -run TestX -count=1 ./...",
        "make -j4 test",
        "python -m pytest -x tests",
        "python3.12 -c 'import os'",
        "pytest -x -k 'not slow'",
        "cat /dev/null",
        "curl https://example.invalid/a/../b",
    ],
)
def test_reading_commands_are_covered(command: str) -> None:
    assert why(command) is None


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("git diff --output=README.md", "`--output`: it names a file to write"),
        ("git diff --no-index a b", "`--no-index`"),
        ("git diff --ext-diff", "it runs another program"),
        ("git -c core.pager=evil log", "`-c`: it sets configuration"),
        ("git --exec-path=/tmp log", "it runs another program"),
        ("git -C /tmp status", "`/tmp` is outside the project"),
        ("git -C .. status", "`..` is outside the project"),
        ("git log -- ../other", "`../other` is outside the project"),
        ("git diff --frobnicate", "`--frobnicate` is not an option paicli knows for `git diff`"),
        ("git config core.pager evil", "`git config` with more than 1 operand writes"),
        ("git push --receive-pack=evil", "it runs another program"),
        ("cat /etc/passwd", "`/etc/passwd` is outside the project"),
        ("cat ~/.ssh/id_ed25519", "is outside the project"),
        ("cat id_ed25519", "a private key file"),
        ("cat .env", "is an environment file"),
        ("grep -r TOKEN .env.local", "is an environment file"),
        ("ls -lZq", "`-q` (in `-lZq`) is not an option"),
        ("sed -i s/a/b/ x", "`-i`: it edits files in place"),
        ("sed -ni p x", "`-i` (in `-ni`)"),
        ("sed 's/a/b/w out' x", "the sed flag `w`"),
        ("sed -n 'w out' x", "the sed command `w`"),
        ("sed 'e date' x", "the sed command `e`"),
        ("sed -f script.sed x", "reads its script from a file"),
        ("find . -name x -exec rm {} +", "`-exec`: it runs another program"),
        ("find . -delete", "`-delete`"),
        ("find / -name x", "`/` is outside the project"),
        ("find . -fprint out", "it names a file to write"),
        ("rg --pre cat foo", "`--pre`: it runs another program"),
        ("grep -r foo /etc", "`/etc` is outside the project"),
        ("npm install -g left-pad", "it installs for the whole machine"),
        ("npm audit fix", "`fix`: it changes the installed packages"),
        ("pip install --user x", "it installs outside the environment"),
        ("go install example.invalid/x", "`go install`"),
        ("go test -exec evil ./...", "`-exec`: it runs another program"),
        ("go env -w GOFLAGS=x", "it changes the user's go settings"),
        ("make --eval 'x: ; evil'", "`--eval`"),
        ("make -C /tmp", "`/tmp` is outside the project"),
        ("cargo build --config 'x=1'", "`--config`"),
        ("pytest -o cache_dir=/tmp/x", "`-o`: it names a file to write"),
        ("mytool --output=x", "`--output`: it names a file to write"),
        ("mytool ../../etc/passwd", "is outside the project"),
        ("cat $HOME/.bashrc", "expands a variable"),
        ("cat {README.md,/etc/passwd}", "expands to several words"),
        ("cat .*/.bashrc", "can match `..`"),
    ],
)
def test_arguments_that_write_run_or_reach_outside_are_not_covered(
    command: str, reason: str
) -> None:
    found = why(command)
    assert found is not None and reason in found, found


def test_a_link_out_of_the_project_is_outside_it(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "secret").write_text("x")
    (root / "innocent.txt").symlink_to(tmp_path / "secret")
    assert "outside the project" in (why("cat innocent.txt", root=root) or "")
    assert why("cat innocent.txt", root=root) is not None
    (root / "real.txt").write_text("x")
    assert why("cat real.txt", root=root) is None


def test_a_changed_folder_moves_where_relative_paths_point() -> None:
    # `git -C sub log -- ../x` reads sub/../x, which is in the project; from `..` it is not.
    assert why("git -C sub log -- ../x") is None
    assert why("git -C sub log -- ../../x") is not None


def test_argv_words_are_literal_and_never_expanded() -> None:
    assert uncovered(["cat", "$HOME"], ROOT, ROOT, shell=False) is None
    assert uncovered(["cat", "$HOME"], ROOT, ROOT, shell=True) is not None


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["git", "-C", ".", "-c", "a=b", "--no-pager", "push"], ["git", "push"]),
        (["git", "--git-dir=.git", "push", "-f"], ["git", "push", "-f"]),
        (["/usr/bin/git", "push"], ["/usr/bin/git", "push"]),
        (["ls", "-la"], ["ls", "-la"]),
    ],
)
def test_the_options_before_a_subcommand_are_left_out_of_what_rules_read(
    argv: list[str], words: list[str]
) -> None:
    assert canonical(argv) == words


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git diff HEAD", ["git", "diff"]),
        ("git -C . status", ["git", "status"]),
        ("npm t", ["npm", "t"]),
        ("ls -la", ["ls"]),
        ("make test", None),
        ("python x.py", None),
        ("git diff --output=x", None),
        ("./git diff", None),
        ("git frobnicate", None),
    ],
)
def test_a_prefix_is_offered_only_for_known_subcommands_used_as_covered(
    command: str, prefix: list[str] | None
) -> None:
    assert rule_prefix(shlex.split(command), ROOT, ROOT) == prefix


@pytest.mark.parametrize(
    ("line", "programs", "opaque"),
    [
        ("env git push", [("git", "push")], False),
        ("command git push", [("git", "push")], False),
        ("nice -n 5 nohup timeout -s KILL 5 stdbuf -oL git push", [("git", "push")], False),
        ("time -p git push", [("git", "push")], False),
        ("time -o out git push", [("git", "push")], True),
        ("sh -c 'git push'", [("git", "push")], False),
        ("bash -lc 'env git push'", [("git", "push")], False),
        ("bash -c 'git push' x y", [("git", "push")], True),
        ("sh -c 'git status; git push'", [("git", "status"), ("git", "push")], True),
        ("eval 'git push'", [("git", "push")], True),
        ("env FOO=1 git push", [("git", "push")], True),
        ("FOO=1 git push", [("git", "push")], True),
        ("env -S 'git push'", [("git", "push")], True),
        ("xargs -n1 git push", [("git", "push")], True),
        ("sudo -u root git push", [("git", "push")], True),
        ("command -v git", [("command", "-v", "git")], False),
    ],
)
def test_wrappers_are_seen_through_and_say_when_a_rule_cannot_vouch(
    line: str, programs: list[tuple[str, ...]], opaque: bool
) -> None:
    found = line_invocations(line)
    assert [i.argv for i in found] == programs
    assert all((i.opaque is not None) is opaque for i in found), found


def test_command_substitutions_are_read_as_commands_of_their_own() -> None:
    assert ("git", "push") in [i.argv for i in line_invocations("echo $(git push)")]
    assert ("git", "push") in [i.argv for i in line_invocations("echo `git push`")]


def test_shells_nested_past_the_limit_are_opaque() -> None:
    line = "git push"
    for _ in range(6):
        line = f"sh -c {shlex.quote(line)}"
    (found,) = invocations(shlex.split(line))
    assert found.opaque is not None and "push" in " ".join(found.argv)


@pytest.mark.parametrize(
    ("script", "covered"),
    [
        ("p", True),
        ("1,5p", True),
        ("/start/,/end/d", True),
        ("s/a/b/gI", True),
        ("s|/etc/passwd|x|", True),
        ("s/a\\/w/b/", True),  # an escaped delimiter, not a flag
        ("$!N;P;D", True),
        ("a\\\nappended text with w and e", True),
        ("s/a/b/w /tmp/x", False),
        ("s/a/b/e", False),
        ("r /etc/passwd", False),
        ("1R /etc/passwd", False),
        ("W out", False),
        ("s/unterminated", False),
        ("v", False),
    ],
)
def test_a_sed_script_is_covered_only_when_it_edits_the_stream(script: str, covered: bool) -> None:
    assert (sed_reason(script) is None) is covered
