"""The sandbox as data and as text: profiles, the config key, what each mechanism is told
(bwrap's command line, the Seatbelt profile, the seccomp program, Landlock's grants) and
the one-line verdicts of `SandboxSupport`. No process is started here."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

import paicli.mcp as m
from paicli.mcp._sandbox import bwrap, seatbelt, seccomp
from paicli.mcp._sandbox.landlock import cover
from paicli.mcp._sandbox.profile import check_host, secret_paths

HOME = "/home/ada"


def test_a_profile_hides_the_users_secret_stores_unless_told_otherwise() -> None:
    profile = m.Sandbox.for_project("/work/app", home=HOME, network="loopback")
    assert profile.read == ("/",)
    assert profile.write == ("/work/app",)
    assert profile.network == "loopback"
    for store in (".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".docker", ".netrc"):
        assert f"{HOME}/{store}" in profile.hide
    assert f"{HOME}/.paicli" in profile.hide and "/run" in profile.hide
    assert profile.read_only == ("/work/app/.git/hooks", "/work/app/.git/config")
    assert m.Sandbox(hide=()).hide == ()
    assert len(m.Sandbox().hide) == len(secret_paths())  # the default hides them too


def test_paths_are_normalised_and_must_be_absolute() -> None:
    listed = ["/a/b/../c/", "/a/c"]  # a list, as a config file gives it, is accepted too
    assert m.Sandbox(write=listed).write == ("/a/c",)  # type: ignore[arg-type]
    with pytest.raises(m.ServerConfigError, match="'write': 'relative' is not an absolute"):
        m.Sandbox(write=("relative",))
    with pytest.raises(m.ServerConfigError, match="'read' must be a list of paths"):
        m.Sandbox(read="/")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("entry", "normalised"),
    [
        ("Example.COM.", "example.com"),
        ("*.example.com:443", "*.example.com:443"),
        ("10.0.0.1", "10.0.0.1"),
        ("[::1]:8080", "[::1]:8080"),
    ],
)
def test_allowed_hosts_are_normalised(entry: str, normalised: str) -> None:
    assert check_host(entry) == normalised


@pytest.mark.parametrize("entry", ["exa mple.com", "a.*.com", "host:99999", "", "x/y"])
def test_a_bad_allowed_host_is_refused_by_name(entry: str) -> None:
    with pytest.raises(m.ServerConfigError):
        check_host(entry)


def test_the_network_is_none_loopback_or_hosts() -> None:
    assert m.Sandbox(network=("a.com", "A.com")).network == ("a.com",)
    assert m.Sandbox(network=("a.com",)).hosts == ("a.com",)
    assert m.Sandbox(network=()).network == "none"
    with pytest.raises(m.ServerConfigError, match="'network' must be"):
        m.Sandbox(network="everything")  # type: ignore[arg-type]


def test_the_sandbox_key_of_a_server_entry(tmp_path: Path) -> None:
    def spec(value: object) -> m.StdioServer:
        entry = {"command": "srv", "cwd": str(tmp_path), "sandbox": value}
        server = m.server_from_dict(entry, name="s")
        assert isinstance(server, m.StdioServer)
        return server

    assert spec(False).sandbox is None
    assert m.server_from_dict({"command": "srv"}).sandbox is None  # type: ignore[union-attr]
    whole = spec(True).sandbox
    assert whole is not None and whole.write == (str(tmp_path),)
    narrow = spec({"write": ["out", "~/cache"], "network": ["pypi.org"], "env": ["PATH"]}).sandbox
    assert narrow is not None
    assert narrow.write == (str(tmp_path / "out"), os.path.expanduser("~/cache"))
    assert (narrow.hosts, narrow.env) == (("pypi.org",), ("PATH",))
    with pytest.raises(m.ServerConfigError, match="server 's': sandbox: unknown key 'hosts'"):
        spec({"hosts": []})
    with pytest.raises(m.ServerConfigError, match="server 's': 'sandbox' must be true, false"):
        spec("yes")


def test_bwrap_mounts_in_an_order_where_the_later_mount_wins(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".env").write_text("SECRET=1")
    secret_dir, secret_file = "/usr", "/etc/hostname"  # exist everywhere this runs
    profile = m.Sandbox(
        write=(str(project),),
        read_only=(str(project / ".git" / "hooks"), str(project / ".git" / "config")),
        hide=(secret_dir, secret_file, str(project / ".env"), str(tmp_path / "other")),
    )
    argv = bwrap.bwrap_argv("bwrap", profile, ["cmd", "arg"], cwd=str(project), seccomp_fd=5)
    text = " ".join(argv)
    order = [
        "--ro-bind / /",
        f"--bind {project} {project}",
        f"--ro-bind {project}/.git/hooks {project}/.git/hooks",
        f"--tmpfs {secret_dir} --remount-ro {secret_dir}",
        f"--ro-bind /dev/null {project}/.env",
    ]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    assert f"{project}/.git/config" not in text  # missing: nothing to protect
    if os.path.exists(secret_file):
        assert f"--ro-bind /dev/null {secret_file}" in text
    assert "--unshare-net --unshare-pid --unshare-ipc --die-with-parent --cap-drop ALL" in text
    assert argv[-7:] == ["--seccomp", "5", "--chdir", str(project), "--", "cmd", "arg"]
    assert "--new-session" in argv


def test_bwrap_reports_a_signal_as_128_plus_n() -> None:
    assert [bwrap.exit_status(c) for c in (0, 3, 128, 137, 152, 200)] == [0, 3, 128, -9, -24, 200]


def test_the_seatbelt_profile_denies_writes_secrets_and_the_network() -> None:
    profile = m.Sandbox.for_project('/Users/ada/my "app"', home="/Users/ada")
    text = seatbelt.seatbelt_profile(profile, temp="/var/folders/xy/T")
    lines = text.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    assert '(subpath "/Users/ada/my \\"app\\"")' in lines[3]
    assert lines[3].startswith("(allow file-write* ") and '(literal "/dev/null")' in lines[3]
    hidden = next(line for line in lines if line.startswith("(deny file-read* file-write*"))
    assert '(subpath "/Users/ada/.ssh")' in hidden
    assert "(deny network*)" in lines and "(allow network" not in text
    assert lines[-1] == '(deny mach-lookup (global-name "com.apple.SecurityServer"))'
    proxied = seatbelt.seatbelt_profile(m.Sandbox(network=("pypi.org",)), proxy_port=4321)
    assert '(allow network-outbound (remote ip "localhost:4321"))' in proxied
    loopback = seatbelt.seatbelt_profile(m.Sandbox(network="loopback"))
    assert '(allow network-outbound (remote ip "localhost:*"))' in loopback
    argv = seatbelt.seatbelt_argv(m.Sandbox(), ["ls", "-l"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-2:] == ["ls", "-l"]


def run_filter(program: bytes, arch: int, nr: int, *args: int) -> int:
    """A classic-BPF interpreter for the instructions the filter uses."""
    data = struct.pack("<II8x6Q", nr, arch, *(list(args) + [0] * 6)[:6])
    ops: list[tuple[int, int, int, int]] = [
        struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)
    ]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:
            (acc,), pc = struct.unpack_from("<I", data, k), pc + 1
        elif code in (0x15, 0x35):
            hit = acc == k if code == 0x15 else acc >= k
            pc += 1 + (jt if hit else jf)
        else:
            assert code == 0x06
            return k


X86 = seccomp.ARCHES["x86_64"]
ALLOW, EPERM, EACCES = seccomp.RET_ALLOW, seccomp.RET_ERRNO | 1, seccomp.RET_ERRNO | 13


@pytest.mark.parametrize("sockets", ["any", "unix", "none"])
def test_the_seccomp_filter_refuses_terminal_injection_in_every_profile(sockets: str) -> None:
    program = seccomp.program(sockets, "x86_64")  # type: ignore[arg-type]
    assert run_filter(program, X86.audit, X86.ioctl, 1, seccomp.TIOCSTI) == EPERM
    assert run_filter(program, X86.audit, X86.ioctl, 1, (1 << 32) | seccomp.TIOCSTI) == EPERM
    assert run_filter(program, X86.audit, X86.ioctl, 1, 0x5401) == ALLOW  # TCGETS
    assert run_filter(program, X86.audit, 0) == ALLOW  # read
    assert run_filter(program, 0x40000003, 41) == seccomp.RET_KILL_PROCESS  # i386
    assert run_filter(program, X86.audit, 0x40000000 | 41) == seccomp.RET_KILL_PROCESS  # x32


def test_the_seccomp_filter_refuses_sockets_by_family() -> None:
    unix_only, none, anything = (seccomp.program(s, "x86_64") for s in ("unix", "none", "any"))
    for family, unix_verdict in ((1, ALLOW), (2, EACCES), (10, EACCES), (16, EACCES)):
        assert run_filter(unix_only, X86.audit, X86.socket, family) == unix_verdict
        assert run_filter(none, X86.audit, X86.socket, family) == EACCES
        assert run_filter(anything, X86.audit, X86.socket, family) == ALLOW
    assert run_filter(none, X86.audit, X86.io_uring_setup) == EACCES
    arm = seccomp.ARCHES["aarch64"]
    assert run_filter(seccomp.program("none", "aarch64"), arm.audit, arm.socket, 2) == EACCES


def test_landlock_grants_a_folder_whole_unless_a_hidden_path_is_inside(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for folder in (".ssh", ".config/gcloud", ".config/app", "code"):
        (home / folder).mkdir(parents=True)
    (home / ".bashrc").write_text("")
    (home / "keys").symlink_to(home / ".ssh")  # a link to a secret grants nothing
    hidden = [str(home / ".ssh"), str(home / ".config" / "gcloud")]
    granted = set(cover([str(tmp_path)], hidden))
    assert granted == {str(home / "code"), str(home / ".bashrc"), str(home / ".config" / "app")}
    assert cover([str(home / "code")], hidden) == [str(home / "code")]


def test_support_picks_a_mechanism_and_says_in_one_line_why_none_fits() -> None:
    works = m.SandboxSupport(None, None, None, "macOS only")
    assert works.mechanism(m.Sandbox(network=("a.com",))) == "bubblewrap"
    landlock_only = m.SandboxSupport("bwrap is not installed", None, None, "macOS only")
    assert landlock_only.mechanism(m.Sandbox()) == "landlock"
    assert landlock_only.mechanism(m.Sandbox(network="loopback")) is None
    assert landlock_only.missing(m.Sandbox(network="loopback")) == (
        "no sandbox works here (bubblewrap: bwrap is not installed; "
        "Landlock cannot give network loopback: that needs bubblewrap)"
    )
    assert works.describe() == [
        "bubblewrap: works",
        "landlock: works",
        "seccomp: works",
        "seatbelt: macOS only",
    ]
