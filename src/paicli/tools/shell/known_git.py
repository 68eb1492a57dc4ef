"""What paicli knows of git's options: the options before a subcommand, and each common
subcommand's, with those that write a file, run a program or set configuration."""

from __future__ import annotations

from collections.abc import Mapping

from paicli.tools.shell.options import (
    CONFIG,
    GENERIC,
    RUNS,
    WRITES,
    Command,
    Options,
    never,
    opts,
)

__all__ = ["GIT"]

# git -------------------------------------------------------------------------------------------
_GIT_LEADING = opts(
    "--no-pager -P --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --no-lazy-fetch",
    "-C --git-dir --work-tree --namespace -c --config-env",
    chdir="-C",
    never={
        **never("-c --config-env", CONFIG),
        "--exec-path": RUNS,
        **never("-p --paginate", "it starts the pager, a program the configuration names"),
    },
)
_DIFF = opts(
    "-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat --stat "
    "--compact-summary --numstat --shortstat --dirstat --cumulative --summary -z --name-only "
    "--name-status --submodule --color --no-color --color-moved --no-color-moved "
    "--color-words --word-diff --no-renames --rename-empty --no-rename-empty --check "
    "--full-index --binary --abbrev --no-abbrev --break-rewrites -B --find-renames -M "
    "--find-copies -C --find-copies-harder -D --irreversible-delete -R --relative "
    "--no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b "
    "--ignore-space-change -w --ignore-all-space --ignore-blank-lines -W --function-context "
    "--exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules --no-prefix "
    "--default-prefix --minimal --patience --histogram --indent-heuristic "
    "--no-indent-heuristic --full-diff --cached --staged --merge-base -1 -2 -3 --ours "
    "--theirs --base",
    "-U --unified --inter-hunk-context --diff-algorithm --stat-width --stat-name-width "
    "--stat-count --diff-filter -O --ws-error-highlight --color-moved-ws",
    "-S -G --find-object --src-prefix --dst-prefix --line-prefix -l --anchored --word-diff-regex",
    {
        **never("--output", WRITES),
        "--no-index": "it compares any two files, outside the repository too",
        **never("--ext-diff --textconv", RUNS),
    },
    read_only=True,
)
_REVISIONS = opts(
    "--all --branches --tags --remotes --first-parent --no-merges --merges --reverse "
    "--topo-order --date-order --author-date-order --oneline --graph --decorate "
    "--no-decorate --abbrev-commit --no-abbrev-commit --walk-reflogs -g --follow --left-right "
    "--cherry-pick --cherry-mark --boundary --source --use-mailmap --no-walk --do-walk "
    "--simplify-by-decoration --show-signature --name-only --parents --children "
    "--ignore-missing --count --regexp-ignore-case -i --extended-regexp -E --fixed-strings "
    "-F --invert-grep --all-match --no-notes --notes --show-notes --standard-notes -m "
    "--diff-merges --cc --combined-all-paths --dd --remerge-diff",
    "-n --max-count --skip --since --after --until --before --max-parents --min-parents "
    "--date --pretty --format --encoding --decorate-refs --decorate-refs-exclude "
    "--exclude -L",
    "--author --committer --grep --grep-reflog",
    read_only=True,
    digits=True,
)
_LOG = _DIFF | _REVISIONS
_STATUS = opts(
    "-s --short -b --branch --show-stash --porcelain --long -v --verbose -u "
    "--untracked-files --ignored --ignore-submodules -z --column --no-column "
    "--ahead-behind --no-ahead-behind --renames --no-renames --find-renames",
    read_only=True,
)
_LIST = opts(
    "-a --all -r --remotes -v -vv --verbose --list -l --show-current --merged --no-merged "
    "--contains --no-contains --column --no-column --color --no-color -i --ignore-case "
    "--omit-empty",
    "--sort --points-at --format",
    read_only=True,
)
_BLAME = opts(
    "-b --root --show-stats -f --show-name -n --show-number -s -e --show-email -w -p "
    "--porcelain --line-porcelain --incremental -l -t -c --score-debug --minimal -M -C "
    "--color-lines --color-by-age --progress --no-progress",
    "-L --contents --ignore-rev --ignore-revs-file --since --abbrev --date -S --encoding",
    read_only=True,
)
_LS_FILES = opts(
    "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u "
    "--unmerged -k --killed -z -t -v -f --full-name --recurse-submodules --error-unmatch "
    "--exclude-standard --directory --no-empty-directory --eol --deduplicate --sparse "
    "--debug --abbrev",
    "--exclude-per-directory -X --exclude-from --with-tree --format",
    "-x --exclude",
    read_only=True,
)
_REV_PARSE = opts(
    "--abbrev-ref --symbolic --symbolic-full-name --verify -q --quiet --short --all "
    "--branches --tags --remotes --show-toplevel --show-prefix --show-cdup --git-dir "
    "--absolute-git-dir --git-common-dir --is-inside-work-tree --is-inside-git-dir "
    "--is-bare-repository --is-shallow-repository --show-superproject-working-tree "
    "--local-env-vars --sq --not --default --revs-only --no-revs --flags --no-flags "
    "--show-object-format --show-ref-format",
    "--git-path --resolve-git-dir --since --after --until --before --prefix --disambiguate",
    read_only=True,
)
_GREP = opts(
    "--cached --no-index --untracked --no-exclude-standard --exclude-standard "
    "--recurse-submodules -a --text --textconv --no-textconv -i --ignore-case -I "
    "--max-depth -r --recursive --no-recursive -w --word-regexp -v --invert-match -h -H "
    "--full-name -E --extended-regexp -G --basic-regexp -P --perl-regexp -F "
    "--fixed-strings -n --line-number --column -l --files-with-matches --name-only -L "
    "--files-without-match -z --null -o --only-matching -c --count --color --no-color "
    "--break --heading -p --show-function -W --function-context --and --or --not "
    "--all-match -q --quiet",
    "-A -B -C --context --after-context --before-context --threads -m --max-count",
    "-e",
    {"--no-index": "it searches any folder, outside the repository too", "-O": RUNS,
     "--open-files-in-pager": RUNS},
    operands="pattern",
    patterns="-e",
    read_only=True,
    digits=True,
)  # fmt: skip
_READS = opts(
    "-t -s -e -p --batch --batch-check --batch-all-objects --textconv --filters -r -d -l "
    "--name-only --name-status --full-name --full-tree --abbrev --long --tags --all "
    "--always --contains --dirty --exact-match --first-parent --heads --head --dereference "
    "--hash --verify --quiet -q --exists -n -s --summary --numbered --email -e -c "
    "--is-ancestor --octopus --independent --fork-point -h -v --verbose -z --porcelain",
    "--match --exclude --candidates --sort --format --count --points-at --abbrev --path",
    never={"--textconv": RUNS, "--filters": RUNS},
    read_only=True,
)
_WRITES_MESSAGE = opts(
    "-a --all --amend --no-edit -s --signoff --no-signoff -q --quiet -v --verbose "
    "--allow-empty --allow-empty-message --no-verify -n --dry-run --short --branch "
    "--porcelain --long -z --reset-author --only -o -i --include --no-status --status "
    "--no-gpg-sign --cleanup",
    "--fixup --squash -C --reuse-message -c --reedit-message --date -F --file --template",
    "-m --message --author",
    {**never("-S --gpg-sign -e --edit", RUNS)},
)
_ADD = opts(
    "-A --all --no-all -u --update -N --intent-to-add -f --force -n --dry-run -v "
    "--verbose --ignore-errors --ignore-missing --renormalize --no-warn-embedded-repo "
    "--sparse --refresh",
    never={
        **never("-p --patch -i --interactive -e --edit", "it opens an editor or asks"),
        "--pathspec-from-file": "it reads paths from a file",
    },
)
_BRANCHING = opts(
    "-f --force -q --quiet --progress --no-progress -m --merge --detach -d --track "
    "--no-track --guess --no-guess --ignore-other-worktrees --recurse-submodules "
    "--no-recurse-submodules --ours --theirs --staged -S -W --worktree --discard-changes "
    "--soft --mixed --hard --keep --merge -N --intent-to-add --overlay --no-overlay "
    "--ignore-unmerged",
    "-b -B -c -C --orphan --conflict --source -s",
    never={"-p": "it asks hunk by hunk", "--patch": "it asks hunk by hunk"},
)
_REMOTE_OPS = opts(
    "-u --set-upstream -f --force --force-with-lease --force-if-includes --tags "
    "--follow-tags --dry-run -n -q --quiet -v --verbose --progress --no-progress --all "
    "--prune -p --prune-tags -d --delete --atomic --no-verify --porcelain --ff --ff-only "
    "--no-ff --rebase -r --no-rebase --autostash --no-autostash --unshallow --no-tags "
    "--multiple --append -a --keep -k --update-shallow --set-upstream --recurse-submodules "
    "--no-recurse-submodules --ipv4 -4 --ipv6 -6 --squash --no-squash --commit --no-commit "
    "--stat --no-stat --edit --no-edit",
    "--depth --deepen --shallow-since --shallow-exclude -j --jobs --push-option -o "
    "--server-option --strategy -s --strategy-option -X --repo --negotiation-tip",
    never={**never("--receive-pack --exec --upload-pack", RUNS)},
)
_HISTORY = opts(
    "--continue --abort --skip --quit --no-ff --ff --ff-only --squash --no-squash "
    "--commit --no-commit --no-edit -q --quiet -v --verbose --stat --no-stat --autostash "
    "--no-autostash --signoff -s -x -n --no-verify --allow-unrelated-histories "
    "--keep-empty --empty --root --update-refs --no-update-refs -r --rebase-merges",
    "--onto --strategy -X --strategy-option --mainline",
    "-m --message",
    {**never("-i --interactive -e --edit --exec -x", RUNS)},
)
_FILES = opts(
    "--cached -r -f --force -q --quiet -n --dry-run -k --ignore-unmatch --sparse -v "
    "--verbose -d -x -X -i --interactive",
    "-e --exclude",
    never={"-i": "it asks", "--interactive": "it asks"},
)
_STASH = opts(
    "list show push pop apply drop clear branch save -p --patch -k --keep-index "
    "--no-keep-index -u --include-untracked -a --all -q --quiet --index --staged --stat "
    "--name-only",
    "",
    "-m --message",
)
_CONFIG_READ = opts(
    "--get --get-all --get-regexp --get-urlmatch -l --list --name-only --show-origin "
    "--show-scope --global --system --local --worktree -z --null --type --bool --int "
    "--path --includes --no-includes --default",
    never={
        **never("--add --unset --unset-all --replace-all --rename-section "
                 "--remove-section -e --edit set unset rename-section remove-section edit",
                 "it changes git's configuration, which can name programs to run"),
        **never("-f --file --blob", "it reads another configuration file"),
    },
    read_only=True,
    max_operands=1,
)  # fmt: skip


def _generic_but(reasons: Mapping[str, str]) -> Options:
    """A subcommand paicli reads generically, but for the words that make it run a program
    it is given (an operand such as `foreach` or an option such as `-x`)."""
    return Options(never={**GENERIC.never, **reasons}, any_option=True)


# Subcommands that run a command they are given; the rest of what they do is read generically.
_RUNS_GIVEN = {
    "submodule": _generic_but(never("foreach", "`foreach` runs the command it is given")),
    "bisect": _generic_but(never("run", "`run` runs the command it is given")),
    "difftool": _generic_but(never("-x --extcmd", RUNS)),
    "ls-remote": _generic_but(never("-u --upload-pack", RUNS)),
    "archive": _generic_but(never("--exec --remote", RUNS)),
    "clone": _generic_but(
        {**never("-u --upload-pack", RUNS), **never("-c --config --template", CONFIG)}
    ),
    "send-email": _generic_but(
        never("--smtp-server --to-cmd --cc-cmd --header-cmd --sendmail-cmd", RUNS)
    ),
    "filter-branch": opts(refuse="it runs the commands it is given on every commit"),
}

GIT = Command(
    leading=_GIT_LEADING,
    subcommands={
        "diff": _DIFF,
        "log": _LOG,
        "show": _LOG,
        "whatchanged": _LOG,
        "shortlog": _REVISIONS | opts("-s --summary -n --numbered -e --email -c", read_only=True),
        "reflog": _LOG,
        "rev-list": _LOG,
        "status": _STATUS,
        "branch": _LIST,
        "tag": _LIST | opts("", "-n", read_only=True),
        "remote": opts("-v --verbose show get-url", read_only=True),
        "blame": _BLAME,
        "annotate": _BLAME,
        "ls-files": _LS_FILES,
        "ls-tree": _READS,
        "cat-file": _READS,
        "describe": _READS,
        "show-ref": _READS,
        "for-each-ref": _READS,
        "merge-base": _READS,
        "name-rev": _READS,
        "count-objects": _READS,
        "rev-parse": _REV_PARSE,
        "grep": _GREP,
        "config": _CONFIG_READ,
        "version": opts(read_only=True),
        "add": _ADD,
        "commit": _WRITES_MESSAGE,
        "checkout": _BRANCHING,
        "switch": _BRANCHING,
        "restore": _BRANCHING,
        "reset": _BRANCHING,
        "push": _REMOTE_OPS,
        "fetch": _REMOTE_OPS,
        "pull": _REMOTE_OPS,
        "merge": _HISTORY,
        "rebase": _HISTORY,
        "cherry-pick": _HISTORY,
        "revert": _HISTORY,
        "rm": _FILES,
        "mv": _FILES,
        "clean": _FILES,
        "stash": _STASH,
        "init": opts("-q --quiet --bare", "-b --initial-branch --object-format"),
        **_RUNS_GIVEN,
    },
)
