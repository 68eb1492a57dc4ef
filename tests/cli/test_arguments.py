"""How paicli's command line is read before argparse sees it (no process: the parser only)."""

from __future__ import annotations

from paicli.cli import build_parser, config_files_before_command


def parsed(*args: str) -> object:
    return build_parser().parse_args(config_files_before_command(list(args)))


def test_config_files_end_where_the_mcp_command_starts() -> None:
    options = parsed("--mcp-config", "a.json", "b.json", "mcp", "list")
    assert options.mcp_config == ["a.json", "b.json"]  # type: ignore[attr-defined]
    assert (options.command, options.mcp_command) == ("mcp", "list")  # type: ignore[attr-defined]


def test_config_files_still_end_at_the_next_option() -> None:
    options = parsed("--mcp-config", "a.json", "--strict-mcp-config", "-p", "hi")
    assert options.mcp_config == ["a.json"]  # type: ignore[attr-defined]
    assert options.strict_mcp_config and options.print == "hi"  # type: ignore[attr-defined]


def test_a_file_named_like_the_command_is_given_with_a_path() -> None:
    options = parsed("--mcp-config", "./mcp", "mcp", "list")
    assert options.mcp_config == ["./mcp"]  # type: ignore[attr-defined]


def test_other_arguments_pass_unchanged() -> None:
    args = ["-p", "--mcp-config", "--allow", "x"]
    assert config_files_before_command(["mcp", "add", "n", "--", "mcp"]) == [
        "mcp",
        "add",
        "n",
        "--",
        "mcp",
    ]
    assert config_files_before_command(args) == args


def test_trust_project_before_the_mcp_command_is_kept() -> None:
    for args, trusted in (
        (("--trust-project", "mcp", "list"), True),
        (("mcp", "list", "--trust-project"), True),
        (("mcp", "list"), False),
    ):
        assert vars(parsed(*args))["trust_project"] is trusted
