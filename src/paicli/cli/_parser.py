"""`paicli`'s arguments: the parser of every command and option, and the one rewrite argparse
cannot do itself (`--mcp-config` files ending where the `mcp` command starts).
"""

from __future__ import annotations

import argparse
import textwrap
from typing import TypeAlias

from paicli._version import __version__
from paicli.cli._add_args import ADD_USAGE, SCOPE_HELP, SCOPES, add_options
from paicli.cli._batch_args import batch_command
from paicli.cli._headless_args import add_headless_options
from paicli.cli._plugin_args import plugin_commands
from paicli.cli._rewind_args import rewind_command

PROTOCOLS = (
    "auto",
    "legacy",
    "modern",
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
)
NO_SERVERS = "No MCP servers configured. Add one with: paicli mcp add NAME -- COMMAND ARGS..."


def epilog() -> str:
    """Model settings and the REPL's slash commands, from the same tables the code uses."""
    from paicli.llm.presets import PRESETS  # noqa: PLC0415 - plain data, no openai
    from paicli.ui.commands import help_text  # noqa: PLC0415 - plain data, no rich

    keys = ", ".join(p.key_env[0] for p in PRESETS.values() if p.key_env)
    settings = textwrap.fill(
        "model settings (the most specific wins): flags > environment (PAICLI_PROVIDER, "
        f"PAICLI_MODEL, PAICLI_BASE_URL, PAICLI_API_KEY, or a provider's key: {keys}) > "
        "~/.paicli/config.toml (provider, model, base_url, api_key, context_window; "
        "[permissions] allow/deny rules and mode).",
        width=90,
    )
    return settings + "\n\nin the REPL:\n" + help_text()


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser(*, full_help: bool = True, prompt_last: bool = False) -> argparse.ArgumentParser:
    """`full_help=False` leaves out the epilog, whose tables cost imports `--version` and
    every ordinary run can skip; `prompt_last` (a `-p` run) takes a positional prompt in
    place of the commands."""
    parser = argparse.ArgumentParser(
        prog="paicli",
        description="An MCP-native agent CLI. With no command, opens the interactive REPL.",
        epilog=epilog() if full_help else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"paicli {__version__}")
    parser.add_argument(
        "-p",
        "--print",
        nargs="?",
        const="",
        metavar="PROMPT",
        help="answer PROMPT once and exit (- or none: read it from stdin; it may also come "
        "last); never asks for approval",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="carry on this project's latest conversation",
    )
    parser.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="carry on a saved conversation (without ID: choose from this project's)",
    )
    add_headless_options(parser, positive_int)
    _model_and_tool_options(parser)
    _run_options(parser)
    if prompt_last:
        # `paicli -p -c "and now?"`: with -p there is no command, the prompt may come last.
        parser.add_argument("prompt", nargs="?", help=argparse.SUPPRESS)
        parser.set_defaults(command=None)
        return parser
    commands = parser.add_subparsers(dest="command")
    _sandbox_command(commands)
    _mcp_commands(commands)
    plugin_commands(commands)
    rewind_command(commands)
    commands.add_parser(
        "acp",
        help="serve an editor over the Agent Client Protocol on stdio (Zed, JetBrains, "
        "Neovim); needs paicli-cli[acp]",
    )
    batch_command(commands, positive_int)
    return parser


def _model_and_tool_options(parser: argparse.ArgumentParser) -> None:
    """The model flags and how tool calls are decided (rules, mode, --yes, --sandbox)."""
    model = parser.add_argument_group("model")
    model.add_argument("--provider", help="glm, deepseek, qwen, kimi, openai, openrouter, ollama")
    model.add_argument("--model", help="the model name (default: the provider's default)")
    model.add_argument("--base-url", help="any OpenAI-compatible endpoint")
    acting = parser.add_argument_group("tools")
    acting.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="let calls matching RULE run without asking, e.g. 'mcp__fs__read_*', "
        "'execute_command(git diff:*)', 'write_file(src/**)'; repeatable",
    )
    acting.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="RULE",
        help="never run calls matching RULE (beats every allow); repeatable",
    )
    acting.add_argument(
        "--permission-mode",
        metavar="MODE",
        help="default (ask), accept-edits (file edits run), plan (read-only tools only), "
        "yolo (everything runs; refused as root without --force-root)",
    )
    acting.add_argument(
        "--force-root", action="store_true", help="allow --permission-mode yolo as root"
    )
    acting.add_argument("--yes", action="store_true", help="with -p: let every tool run")
    acting.add_argument(
        "--sandbox",
        choices=("on", "off", "required"),
        help="run commands in the OS sandbox: on (default; where none works, each command "
        "is asked about), required (no command runs uncontained), off",
    )
    acting.add_argument(
        "--max-steps", type=positive_int, default=0, help="model calls per prompt (at least 1)"
    )


def _run_options(parser: argparse.ArgumentParser) -> None:
    """The project's servers, extra server files, tracing and metrics of a run."""
    parser.add_argument(
        "-C",
        "--cwd",
        metavar="DIR",
        help="run as if started in DIR (its project, servers and relative paths)",
    )
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="also let the file tools and commands use DIR (repeatable)",
    )
    parser.add_argument(
        "--append-system-prompt",
        metavar="TEXT",
        help="add TEXT to the end of paicli's system prompt",
    )
    parser.add_argument(
        "--system-prompt-file",
        metavar="FILE",
        help="use the text of FILE instead of paicli's own system prompt (the project's "
        "memory files and servers' instructions are still added)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="run this project's MCP servers without asking",
    )
    parser.add_argument(
        "--mcp-config",
        action="extend",
        nargs="+",
        default=[],
        metavar="FILE",
        help='also run the servers of FILE ({"mcpServers": ...}) for this run; repeatable',
    )
    parser.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="run only the servers of the --mcp-config files",
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        help="record every MCP message and server stderr line to FILE as JSON lines, "
        "secrets redacted (also PAICLI_TRACE=FILE); read it with: paicli mcp trace FILE",
    )
    parser.add_argument(
        "--accept-tool-changes",
        action="store_true",
        help="with -p: offer tools whose definitions changed since they were pinned",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics (MCP calls, servers, the model's tokens and latency) "
        "on PORT; needs the metrics extra",
    )
    parser.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="the address --metrics-port listens on (default 127.0.0.1: this machine only)",
    )


def _mcp_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`paicli mcp ...`: one subcommand each."""
    mcp = commands.add_parser("mcp", help="manage MCP servers")
    sub = mcp.add_subparsers(dest="mcp_command", required=True)
    starts = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: `paicli --trust-project mcp ...` keeps the value given before the command
    # (a default here would overwrite it with False).
    starts.add_argument(
        "--trust-project",
        action="store_true",
        default=argparse.SUPPRESS,
        help="run this project's servers without asking (non-interactive runs skip them)",
    )

    _mcp_live(sub, starts)
    _mcp_config(sub, starts)
    _mcp_diagnostics(sub, starts)


# (a string: argparse does not make the class subscriptable at run time)
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _mcp_live(sub: Subcommands, starts: argparse.ArgumentParser) -> None:
    """The commands that start the servers and show or call them."""
    listing = sub.add_parser(
        "list", parents=[starts], help="start the configured servers and show their state"
    )
    listing.add_argument("--json", action="store_true")
    get = sub.add_parser("get", parents=[starts], help="details of one server")
    get.add_argument("name")
    get.add_argument("--json", action="store_true")
    tools = sub.add_parser("tools", parents=[starts], help="the tools of every server, or of NAME")
    tools.add_argument("name", nargs="?")
    tools.add_argument("--json", action="store_true")
    tools.add_argument("--full", action="store_true", help="whole descriptions and annotations")
    tools.add_argument("--schema", action="store_true", help="--full and the input schemas")
    call = sub.add_parser(
        "call", parents=[starts], help="call TOOL of server NAME with JSON arguments"
    )
    call.add_argument("name")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", metavar="JSON")
    logs = sub.add_parser("logs", help="the last stderr lines of a stdio server")
    logs.add_argument("name")
    logs.add_argument("-n", "--lines", type=int, default=50)


def _mcp_config(sub: Subcommands, starts: argparse.ArgumentParser) -> None:
    """The commands that change the servers' files, logins, approvals and locks."""
    add = sub.add_parser(
        "add",
        help="add a server: NAME -- CMD ARGS... or NAME URL",
        usage=ADD_USAGE,
        description="Options may come anywhere before --; a URL means an HTTP server.",
    )
    add_options(add)
    add.add_argument("name")
    add.add_argument("target", nargs=argparse.REMAINDER, help="-- CMD ARGS... or URL")
    add_json = sub.add_parser(
        "add-json",
        help="add a server from its JSON entry: NAME '{\"command\": ...}'",
        description="The JSON is one mcpServers entry, checked as loading checks it.",
    )
    add_json.add_argument("-s", "--scope", choices=SCOPES, help=SCOPE_HELP)
    add_json.add_argument(
        "-f", "--force", action="store_true", help="replace a server of that name"
    )
    add_json.add_argument("name")
    add_json.add_argument("json", metavar="JSON")
    importing = sub.add_parser(
        "import",
        help="copy the servers Claude Desktop or Claude Code are set up with",
        description="Shows what it would import and asks (--yes: does not ask).",
    )
    importing.add_argument(
        "--from", dest="source", choices=("claude-desktop", "claude-code"), help="default: both"
    )
    importing.add_argument("-s", "--scope", choices=SCOPES, help=SCOPE_HELP)
    importing.add_argument("--yes", action="store_true", help="import without asking")
    login = sub.add_parser(
        "login",
        parents=[starts],
        help="log in to an OAuth-protected HTTP server (opens the browser)",
    )
    login.add_argument("name")
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="only print the URL to open (for SSH and machines without a browser)",
    )
    approve = sub.add_parser(
        "approve", help="let a project server run (one you declined, or never approved)"
    )
    approve.add_argument("name")
    approve.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="VAR",
        help="also pass it this variable its entry reads, which looks secret (repeatable)",
    )
    logout = sub.add_parser("logout", help="forget an HTTP server's login tokens")
    logout.add_argument("name")
    remove = sub.add_parser("remove", help="remove a server from a config file")
    remove.add_argument("-s", "--scope", choices=SCOPES, default=None)
    remove.add_argument("name")

    lock = sub.add_parser(
        "lock",
        parents=[starts],
        help="compare the servers' tools with their pinned definitions; --update pins them",
    )
    lock.add_argument("name", nargs="?")
    lock.add_argument("--update", action="store_true", help="pin the tools as they are now")
    lock.add_argument(
        "--project",
        action="store_true",
        help="write .paicli/mcp.lock here (commit it so a team pins the same definitions)",
    )
    lock.add_argument("--json", action="store_true")


def _mcp_diagnostics(sub: Subcommands, starts: argparse.ArgumentParser) -> None:
    """The doctor, traces, replays and probes."""
    doctor = sub.add_parser(
        "doctor",
        parents=[starts],
        help="start each server alone and say what is wrong with it: NAME... or -- CMD ARGS...",
    )
    doctor.add_argument("--json", action="store_true", help="the findings as JSON")
    doctor.add_argument(
        "--timeout", type=float, default=None, help="handshake timeout (s; default: the server's)"
    )
    doctor.add_argument(
        "--slow", type=float, default=None, help="report a handshake slower than this (s; 2)"
    )
    doctor.add_argument("target", nargs=argparse.REMAINDER, help="NAME... or -- COMMAND [ARGS...]")

    trace = sub.add_parser(
        "trace", help="a recorded trace (--trace FILE) as a timeline with latencies"
    )
    trace.add_argument("file", metavar="FILE")
    trace.add_argument("--server", metavar="NAME", help="only this server's records")
    trace.add_argument(
        "--slow", type=float, metavar="MS", help="mark requests that took at least MS ms"
    )
    replay = sub.add_parser(
        "replay", help="a stdio MCP server answering from a recorded trace (for bug reports)"
    )
    replay.add_argument("file", metavar="FILE")
    replay.add_argument("--server", metavar="NAME", help="which server of the trace to play")
    probe = sub.add_parser("probe", help="start one stdio server, negotiate, list its tools")
    probe.add_argument("--protocol", default="auto", choices=PROTOCOLS)
    probe.add_argument("--call", metavar="TOOL", help="call TOOL instead of listing tools")
    probe.add_argument("--args", default="{}", metavar="JSON", help="arguments for --call")
    probe.add_argument("--timeout", type=float, default=30.0, help="handshake timeout (s)")
    probe.add_argument("server", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")


def config_files_before_command(args: list[str]) -> list[str]:
    """`--mcp-config a.json b.json mcp list`: the files end where the `mcp` command starts
    (argparse would take `mcp` for one more file). Each file becomes `--mcp-config=FILE`."""
    out: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word != "--mcp-config":
            out.append(word)
            continue
        files: list[str] = []
        while index < len(args) and not args[index].startswith("-") and args[index] != "mcp":
            files.append(args[index])
            index += 1
        if not files:
            out.append(word)  # argparse says what is missing
        out += [f"--mcp-config={name}" for name in files]
    return out


def _sandbox_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`paicli sandbox [--profile NAME] [--network ...] -- CMD ...` and `paicli sandbox --check`."""
    sandbox = commands.add_parser(
        "sandbox",
        help="run one command in the OS sandbox as execute_command would, or --check what works",
    )
    sandbox.add_argument(
        "--check", action="store_true", help="say which sandbox mechanisms work here"
    )
    sandbox.add_argument(
        "--profile",
        choices=("command", "server"),
        default="command",
        help="command: as execute_command runs (the default); server: as a project's MCP "
        "server runs",
    )
    sandbox.add_argument(
        "--network",
        metavar="none|loopback|HOST,...",
        help="the network the command may reach (default: [sandbox] allow_hosts, else none)",
    )
    sandbox.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS")
