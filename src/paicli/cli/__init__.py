"""The `paicli` command line: argument parsing and dispatch. The only `asyncio.run`.

Command modules are imported only when their command runs, so `paicli --version` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence

from paicli._version import __version__

from ._add_args import ADD_USAGE, SCOPE_HELP, SCOPES, add_options, split_server_command

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


def build_parser(*, full_help: bool = True) -> argparse.ArgumentParser:
    """`full_help=False` leaves out the epilog, whose tables cost imports `--version` and
    every ordinary run can skip."""
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
        metavar="PROMPT",
        help="answer PROMPT once and exit (- reads it from stdin); never asks for approval",
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
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="with -p: the answer as text, one JSON object, or JSON lines of events",
    )
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
        "--max-steps", type=positive_int, default=0, help="model calls per prompt (at least 1)"
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
    commands = parser.add_subparsers(dest="command")
    mcp = commands.add_parser("mcp", help="manage MCP servers")
    sub = mcp.add_subparsers(dest="mcp_command", required=True)
    starts = argparse.ArgumentParser(add_help=False)
    starts.add_argument(
        "--trust-project",
        action="store_true",
        help="run this project's servers without asking (non-interactive runs skip them)",
    )

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
    return parser


def config_files_exist() -> bool:
    """Whether any MCP config file exists (the user's, the project's, the local one)."""
    from pathlib import Path  # noqa: PLC0415 - standard library only, cheap

    from paicli.home import PaicliHome  # noqa: PLC0415
    from paicli.project_root import project_root  # noqa: PLC0415

    home = PaicliHome.from_environ()
    project = project_root(Path.cwd())
    candidates = (
        home.mcp_config,
        project / ".paicli" / "mcp.json",
        project / ".mcp.json",
        home.local_mcp_config(project),
    )
    return any(os.path.exists(path) for path in candidates)


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


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    wants_help = "-h" in args or "--help" in args
    args, server_command = split_server_command(args)
    args = config_files_before_command(args)
    options = build_parser(full_help=wants_help).parse_args(args)
    if server_command is not None:
        options.target = [*options.target, "--", *server_command]
    from paicli.ui.logs import log_to_terminal  # noqa: PLC0415 - keep --version fast

    log_to_terminal()
    try:
        return traced(options)
    except Exception:
        # A bug must cost one redacted line (the traceback goes to the log file), never a
        # traceback on the screen that may quote a secret.
        import logging  # noqa: PLC0415

        logging.getLogger("paicli").error("paicli: internal error", exc_info=True)
        return 1


def traced(options: argparse.Namespace) -> int:
    """`dispatch`, with every MCP session recorded when --trace or PAICLI_TRACE asks, and
    measured when --metrics-port does."""
    trace = options.trace or os.environ.get("PAICLI_TRACE")
    if not trace and options.metrics_port is None:
        return dispatch(options)
    from contextlib import ExitStack  # noqa: PLC0415 - only when asked for
    from pathlib import Path  # noqa: PLC0415

    from paicli.ui.output import err  # noqa: PLC0415

    with ExitStack() as stack:
        if trace:
            from paicli.tools.tracing import recording  # noqa: PLC0415

            try:
                stack.enter_context(recording(Path(trace)))
            except OSError as exc:
                err(f"paicli: cannot write the trace {trace}: {exc.strerror or exc}")
                return 2
        if options.metrics_port is not None:
            from paicli.tools.metrics import MetricsUnavailable, serve  # noqa: PLC0415

            where = f"{options.metrics_host}:{options.metrics_port}"
            try:
                metrics, _port = serve(options.metrics_host, options.metrics_port)
            except MetricsUnavailable as exc:
                err(f"paicli: {exc}")
                return 2
            except (OSError, OverflowError) as exc:
                err(f"paicli: cannot serve metrics on {where}: {getattr(exc, 'strerror', exc)}")
                return 2
            stack.callback(metrics.close)
        return dispatch(options)


def mcp_config_problem(options: argparse.Namespace) -> str | None:
    """Why the `--mcp-config` files cannot be used (the first one that cannot, in one line
    with its line and column), or None: a run with servers missing is not what was asked."""
    if options.strict_mcp_config and not options.mcp_config:
        return "--strict-mcp-config needs --mcp-config FILE"
    if not options.mcp_config:
        return None
    from pathlib import Path  # noqa: PLC0415

    from paicli.servers.config import read_servers_file  # noqa: PLC0415 - only when given

    for name in options.mcp_config:
        problem = read_servers_file(Path(name))
        if problem is not None:
            return problem
    return None


def dispatch(options: argparse.Namespace) -> int:
    """Run the command `options` names."""
    if options.command == "mcp":
        if options.mcp_command == "probe":
            import asyncio  # noqa: PLC0415 - keep --version fast

            from .probe import probe  # noqa: PLC0415

            return asyncio.run(probe(options))
        if options.mcp_command == "replay":
            from .replay import replay  # noqa: PLC0415 - a server starts with few imports

            return replay(options)
        if options.mcp_command == "doctor":
            from .doctor import run as run_doctor  # noqa: PLC0415

            return run_doctor(options)
        if options.mcp_command == "list" and not config_files_exist():
            # The common first run: answer without loading the MCP machinery at all.
            from paicli.ui.output import out  # noqa: PLC0415

            out(NO_SERVERS)
            return 0
        from .mcp_commands import run  # noqa: PLC0415

        return run(options)
    flags = {"provider": options.provider, "model": options.model, "base_url": options.base_url}
    if (problem := check_permission_mode(options)) is not None:
        from paicli.ui.output import err  # noqa: PLC0415

        err(f"paicli: {problem}")
        return 2
    config_problem = mcp_config_problem(options)
    if options.print is not None:
        from ._signals import run_until_signalled  # noqa: PLC0415
        from .errors import UsageError  # noqa: PLC0415
        from .oneshot import no_prompt, read_prompt, run_once  # noqa: PLC0415

        if config_problem is not None:
            return no_prompt(options, config_problem, 2)
        try:
            prompt = read_prompt(options)
        except KeyboardInterrupt:
            return no_prompt(options, "interrupted while reading stdin", 130)
        except UsageError as exc:
            return no_prompt(options, str(exc), 2)
        if prompt is None:
            return no_prompt(options, "the prompt is empty", 2)
        return run_until_signalled(run_once(options, flags, prompt))
    if config_problem is not None:
        from paicli.ui.output import err  # noqa: PLC0415

        err(f"paicli: {config_problem}")
        return 2
    from ._signals import run_until_signalled  # noqa: PLC0415

    if quick_start(options):
        from paicli.ui.prompt_line import quick_repl  # noqa: PLC0415 - prompt_toolkit alone

        return run_until_signalled(quick_repl(options, flags))
    from paicli.ui.repl import repl_main  # noqa: PLC0415
    from paicli.ui.trust_prompt import ask_on_terminal  # noqa: PLC0415

    ask = ask_on_terminal if sys.stdin.isatty() else None
    return run_until_signalled(repl_main(options, flags, ask_trust=ask))


def quick_start(options: argparse.Namespace) -> bool:
    """Whether the REPL may draw its prompt before it loads (`prompt_line.quick_repl`): on a
    terminal, when nothing has to be asked or checked first (a project's servers or rules to
    trust that were not answered with the files as they are now, a conversation to resume)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()) or options.resume is not None:
        return False
    from pathlib import Path  # noqa: PLC0415 - standard library only, cheap

    from paicli.answered_projects import QUESTION_FILES, answered  # noqa: PLC0415
    from paicli.home import PaicliHome  # noqa: PLC0415
    from paicli.project_root import project_root  # noqa: PLC0415

    project = project_root(Path.cwd())
    if not any(os.path.lexists(project / name) for name in QUESTION_FILES):
        return True
    return answered(project, PaicliHome.from_environ())


def check_permission_mode(options: argparse.Namespace) -> str | None:
    """Parse `--permission-mode` in place (`options.mode`); why it cannot be used, if so."""
    options.mode = None
    if options.permission_mode is None:
        return None
    from paicli.tools.approval import Mode  # noqa: PLC0415

    try:
        options.mode = Mode.parse(options.permission_mode)
    except ValueError as exc:
        return str(exc)
    if options.mode is Mode.YOLO and os.geteuid() == 0 and not options.force_root:
        return (
            "refusing --permission-mode yolo as root: every tool call would run with root's "
            "rights unasked; add --force-root if you mean it"
        )
    return None


if __name__ == "__main__":
    sys.exit(main())
