"""What paicli knows of common commands' options, as data: which options take a value, which
values are paths, which options make a reading command write, run another program or reach
outside the project (`never`), and which subcommands write nothing.

An allow rule covers a known command only when every option is one listed here: an option
paicli does not know is not covered (it asks). A command not listed here is read generically
(`GENERIC`): any option, but none that names an output file. The lists are deliberately
short; growing one is a data change, never a code change.
"""

from __future__ import annotations

from paicli.tools.shell.known_git import GIT
from paicli.tools.shell.options import (
    CONFIG,
    FOLLOWS,
    OUTSIDE,
    RUNS,
    WRITES,
    Command,
    never,
    opts,
)

__all__ = ["COMMANDS"]

# the file readers and searchers ---------------------------------------------------------------
_FIND_TESTS = (
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -printf "
    "-regextype -type -xtype -maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin "
    "-user -group -perm -links -inum -uid -gid -used -fstype"
)
_FIND = opts(
    "-print -print0 -ls -prune -quit -empty -readable -writable -executable -true -false "
    "-not -a -o -and -or -depth -xdev -mount -nouser -nogroup -daystart -noleaf "
    "-H -P ! ( ) ,",
    "-newer -anewer -cnewer -samefile",
    _FIND_TESTS,
    {**never("-exec -execdir -ok -okdir", RUNS), "-delete": "it deletes what it finds",
     **never("-fprint -fprint0 -fprintf -fls", WRITES), **never("-L -follow", FOLLOWS)},
    read_only=True,
    clusters=False,
)  # fmt: skip
_SED = opts(
    "-n --quiet --silent -E -r --regexp-extended -s --separate -u --unbuffered -z "
    "--null-data --posix --debug --sandbox --follow-symlinks",
    "-l --line-length",
    "-e --expression",
    {**never("-i --in-place", "it edits files in place"),
     **never("-f --file", "it reads its script from a file, which paicli does not read")},
    operands="pattern",
    patterns="-e --expression",
    read_only=True,
)  # fmt: skip
_GREP_CMD = opts(
    "-i -y -v -w -x -c -l -L -o -q -s -b -n -H -h -Z -z -a -I -r -E -F -G -P -U -T "
    "--ignore-case --no-ignore-case --invert-match --word-regexp --line-regexp --count "
    "--files-with-matches --files-without-match --only-matching --quiet --silent "
    "--no-messages --byte-offset --line-number --with-filename --no-filename --null "
    "--null-data --text --recursive --extended-regexp "
    "--fixed-strings --basic-regexp --perl-regexp --line-buffered --initial-tab --color "
    "--colour",
    "-f --file -m --max-count -A -B -C --after-context --before-context --context "
    "--exclude-from --binary-files -d --directories -D --devices",
    "-e --regexp --include --exclude --exclude-dir --label",
    never("-R --dereference-recursive", FOLLOWS),
    operands="pattern",
    patterns="-e --regexp -f --file",
    read_only=True,
    digits=True,
)
_RG = opts(
    "-i -s -S -w -x -v -c -l -n -N -H -I -F -o -q -u -uu -uuu -a -z -U -P -0 -p -b "
    "--ignore-case --case-sensitive --smart-case --word-regexp --line-regexp "
    "--invert-match --count --count-matches --files-with-matches --files-without-match "
    "--line-number --no-line-number --with-filename --no-filename --fixed-strings "
    "--only-matching --quiet --hidden --no-hidden --no-ignore --no-ignore-vcs "
    "--no-ignore-parent --no-ignore-dot --text --search-zip --multiline --pcre2 "
    "--null --pretty --files --no-heading --heading --vimgrep --json --column --trim "
    "--stats --sort-files --no-messages --type-list --unrestricted --no-config --passthru "
    "--crlf --byte-offset --color",
    "-f --file --ignore-file -t --type -T --type-not -A -B -C --after-context "
    "--before-context --context -m --max-count --max-depth -d --maxdepth --max-filesize -j "
    "--threads --sort --sortr --path-separator --engine -M --max-columns --encoding -E",
    "-e --regexp -g --glob --iglob -r --replace --type-add --colors",
    {**never("--pre --pre-glob", RUNS), **never("-L --follow", FOLLOWS)},
    operands="pattern",
    patterns="-e --regexp -f --file",
    read_only=True,
)
_LS = opts(
    "-a -A -l -h -R -t -r -S -1 -d -F -G -i -n -p -s -X -U -c -u -g -o -Q -x -m -C -H "
    "-k -N -v -Z --all --almost-all --human-readable --recursive --classify "
    "--group-directories-first --full-time --color --time --sort --time-style "
    "--indicator-style --format --quoting-style --si --directory --inode --numeric-uid-gid "
    "--reverse --size --literal --author --context --file-type",
    "-w --width -T --tabsize --block-size",
    "-I --ignore --hide",
    never("-L --dereference", FOLLOWS),
    read_only=True,
)
_CAT = opts(
    "-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number "
    "--squeeze-blank --show-tabs --show-nonprinting",
    read_only=True,
)
_HEAD = opts(
    "-q -v -z -f -F --quiet --silent --verbose --zero-terminated --follow --retry",
    "-n -c --lines --bytes -s --sleep-interval --pid",
    read_only=True,
    digits=True,
)
_WC = opts(
    "-c -m -l -L -w --bytes --chars --lines --max-line-length --words",
    "--files0-from",
    read_only=True,
)

# package managers and builds ------------------------------------------------------------------
_NPM_COMMON = opts(
    "-s --silent -q --quiet -d --loglevel --if-present --ignore-scripts --no-audit "
    "--no-fund --prefer-offline --offline --workspaces --include-workspace-root --json "
    "--color --no-color -y --yes --foreground-scripts --legacy-peer-deps --strict-peer-deps",
    "-w --workspace --prefix --omit --include",
    never={**never("-g --global --location", "it installs for the whole machine"),
           **never("--userconfig --globalconfig --script-shell --node-options", RUNS)},
)  # fmt: skip
_NPM_RUN = _NPM_COMMON
_NPM_INSTALL = _NPM_COMMON | opts(
    "-D --save-dev -S --save -O --save-optional -E --save-exact --no-save -P --save-prod "
    "--production --no-package-lock --package-lock-only --dry-run --force --install-links"
)
_NPM_READ = _NPM_COMMON | opts("-a --all --long -l --parseable -p --depth", read_only=True)
_NPM = Command(
    leading=_NPM_COMMON,
    subcommands={
        "test": _NPM_RUN,
        "run": _NPM_RUN,
        "run-script": _NPM_RUN,
        "start": _NPM_RUN,
        "ci": _NPM_INSTALL,
        "install": _NPM_INSTALL,
        "ls": _NPM_READ,
        "list": _NPM_READ,
        "outdated": _NPM_READ,
        "view": _NPM_READ,
        "audit": _NPM_READ | opts(never={"fix": "it changes the installed packages"}),
    },
    aliases={"t": "test", "tst": "test", "i": "install", "rum": "run", "urn": "run"},
)
_PIP_COMMON = opts(
    "-q --quiet -v --verbose --no-cache-dir --disable-pip-version-check --no-input "
    "--isolated --no-color --require-virtualenv",
    "--cache-dir --log --timeout --retries",
)
_PIP_INSTALL = _PIP_COMMON | opts(
    "-U --upgrade --no-deps --pre --dry-run --force-reinstall -I --ignore-installed "
    "--no-build-isolation --require-hashes --no-binary --only-binary --prefer-binary "
    "--upgrade-strategy --no-index --compile --no-compile --no-warn-script-location",
    "-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url "
    "-f --find-links --python-version --platform --report",
    never={**never("-t --target --prefix --root --user --src", "it installs outside the "
                    "environment"), **never("--config-settings -C --global-option", CONFIG)},
)  # fmt: skip
_PIP_READ = _PIP_COMMON | opts(
    "-o --outdated -u --uptodate -l --local --user --not-required --files -f --all",
    "--format --exclude --path",
    read_only=True,
)
_PIP = Command(
    leading=_PIP_COMMON,
    subcommands={
        "install": _PIP_INSTALL,
        "list": _PIP_READ,
        "show": _PIP_READ,
        "freeze": _PIP_READ,
        "check": _PIP_READ,
        "uninstall": _PIP_COMMON | opts("-y --yes", "-r --requirement"),
    },
)
_CARGO_COMMON = opts(
    "-q --quiet -v -vv --verbose --release -r --locked --offline --frozen --all-features "
    "--no-default-features --workspace --all --all-targets --lib --bins --tests --benches "
    "--examples --no-run --no-fail-fast --doc --keep-going --ignore-rust-version --timings "
    "--check --future-incompat-report",
    "-p --package --features -F --bin --test --example --bench --target -j --jobs "
    "--profile --exclude --color --message-format --manifest-path --target-dir "
    "--lockfile-path --artifact-dir",
    never={"--config": CONFIG, "-Z": "it turns on unstable behaviour"},
)
_CARGO_RUN = _CARGO_COMMON
_CARGO_SUBCOMMANDS = (
    *("build", "b", "check", "c", "test", "t", "run", "r", "clippy", "fmt", "doc", "d"),
    *("bench", "tree", "metadata", "clean", "update", "fetch", "version"),
)
_CARGO = Command(
    leading=opts("-q --quiet -v --verbose --locked --offline --frozen --color",
                 never={"--config": CONFIG, "-Z": "it turns on unstable behaviour"}),
    subcommands=dict.fromkeys(_CARGO_SUBCOMMANDS, _CARGO_RUN),
)  # fmt: skip
_GO_FLAGS = opts(
    "-v -x -n -a -race -msan -asan -cover -short -trimpath -json -failfast -benchmem -i "
    "-buildvcs -linkshared -modcacherw -work -m -u -e -l -d -w -s",
    "-count -benchtime -timeout -mod -p -covermode -coverpkg -coverprofile -cpuprofile "
    "-memprofile -parallel -shuffle -buildmode -compiler -installsuffix -pkgdir -o -C",
    "-run -skip -bench -tags -f",
    never={
        **never("-exec -toolexec", RUNS),
        **never("-overlay -modfile", OUTSIDE),
        # Flags for the compiler, assembler and linker: `-extld=PROGRAM`, `-o FILE`.
        **never("-ldflags -gcflags -asmflags", "it passes flags that can run a program or write"),
    },
    chdir="-C",
    clusters=False,
)
_GO_SUBCOMMANDS = ("build", "test", "vet", "run", "list", "fmt", "mod", "generate", "doc", "clean")
_GO = Command(
    leading=opts("", "-C", chdir="-C", clusters=False),
    subcommands={
        **dict.fromkeys(_GO_SUBCOMMANDS, _GO_FLAGS),
        "version": opts(read_only=True),
        "env": opts("-json", never={**never("-w -u", "it changes the user's go settings")},
                    read_only=True, clusters=False),
        "install": opts(refuse="it installs programs outside the project"),
    },
)  # fmt: skip
_MAKE = opts(
    "-k --keep-going -n --dry-run --just-print -s --silent --quiet -B --always-make -i "
    "--ignore-errors -q --question -r --no-builtin-rules -R --no-builtin-variables -S "
    "--no-keep-going -w --print-directory --no-print-directory --trace -d --debug",
    "-j --jobs -l --load-average -C --directory -f --file --makefile -O --output-sync",
    chdir="-C --directory",
    never={"--eval": RUNS, "-e": "it lets the environment override the makefile",
           "--environment-overrides": "it lets the environment override the makefile"},
    assignments="it sets a make variable, which can name programs to run (SHELL, CC)",
)  # fmt: skip
_PYTHON = opts(
    "-B -b -bb -d -E -I -O -OO -q -s -S -u -v -x -h -V --version -P -i",
    "-W -X --check-hash-based-pycs",
    "-m -c",
    operands="program",
    ends="-m -c",
)

COMMANDS: dict[str, Command] = {
    "git": GIT,
    "find": Command(options=_FIND),
    "sed": Command(options=_SED),
    "grep": Command(options=_GREP_CMD),
    "egrep": Command(options=_GREP_CMD),
    "fgrep": Command(options=_GREP_CMD),
    "rg": Command(options=_RG),
    "ls": Command(options=_LS),
    "cat": Command(options=_CAT),
    "head": Command(options=_HEAD),
    "tail": Command(options=_HEAD),
    "wc": Command(options=_WC),
    "npm": _NPM,
    "pip": _PIP,
    "pip3": _PIP,
    "cargo": _CARGO,
    "go": _GO,
    "make": Command(options=_MAKE),
    "gmake": Command(options=_MAKE),
    "python": Command(options=_PYTHON),
    "python3": Command(options=_PYTHON),
}
