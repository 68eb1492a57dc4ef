"""The `paicli` command line: argument parsing and dispatch. `asyncio.run` appears only in
this package: `_signals.run_until_signalled` for the REPL, `-p` and `paicli mcp ...`, and once
each for `paicli mcp probe` and `paicli sandbox`.

Command modules are imported only when their command runs, so `paicli --version` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Sequence

from paicli.cli._add_args import split_server_command
from paicli.cli._headless_args import fold_tool_flags, headless_problem, printing
from paicli.cli._parser import NO_SERVERS, build_parser, config_files_before_command

__all__ = ["build_parser", "config_files_before_command", "main"]


def config_files_exist() -> bool:
    """Whether any MCP config file exists (the user's, the project's, the local one), or
    an installed plugin may bring servers."""
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
        home.root / "plugins.json",
    )
    return any(os.path.exists(path) for path in candidates)


# What a shell reports for a program SIGPIPE ended (`yes | head -1`): 128 + SIGPIPE.
READER_GONE = 141


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): stop quietly, as a tool SIGPIPE ends
        # would.
        from paicli.ui.output import stdout_gone  # noqa: PLC0415

        stdout_gone()
        return READER_GONE


def _main(argv: Sequence[str] | None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if "--ray" in args and "batch" in args:
        # `paicli batch --ray`: Ray's start is the batch's longest wait, each step needing
        # the one before (importing Ray, joining, the actors' new Ray workers), so it begins
        # before paicli's own (the rest of the command line is read after it; without Ray,
        # the command says so once it runs).
        from paicli.batch.ray_run import RayUnavailable, import_ray  # noqa: PLC0415

        with contextlib.suppress(RayUnavailable):
            import_ray()
    if printing(args) and argv is None:
        # `-p`: no cycle collection until the model client has loaded (`oneshot._start`
        # turns it back on). The start makes modules, classes and functions that live as
        # long as the process, and collecting among them was 3% of the first line's time.
        # (Only in paicli's own process: tests run main(argv) in theirs.)
        gc.disable()
    wants_help = "-h" in args or "--help" in args
    args, server_command = split_server_command(args)
    args = config_files_before_command(args)
    options = build_parser(full_help=wants_help, prompt_last=printing(args)).parse_args(args)
    if server_command is not None:
        options.target = [*options.target, "--", *server_command]
    problem = headless_options(options)
    if problem is not None:
        from paicli.ui.output import err  # noqa: PLC0415

        err(f"paicli: {problem}")
        return 2
    if options.cwd is not None:
        # As if paicli were started there (git's -C): the project, its servers and every
        # relative path on the command line are that folder's.
        try:
            os.chdir(options.cwd)
        except OSError as exc:
            from paicli.ui.output import err  # noqa: PLC0415

            err(f"paicli: -C {options.cwd}: {exc.strerror or exc}")
            return 2
    if (problem := added_dirs(options)) is not None:
        from paicli.ui.output import err  # noqa: PLC0415

        err(f"paicli: --add-dir {problem}")
        return 2
    if options.system_prompt_file is not None:
        problem = read_system_prompt(options)
        if problem is not None:
            from paicli.ui.output import err  # noqa: PLC0415

            err(f"paicli: --system-prompt-file {problem}")
            return 2
    from paicli.ui.logs import log_to_terminal  # noqa: PLC0415 - keep --version fast

    log_to_terminal()
    try:
        return traced(options)
    except BrokenPipeError:
        raise
    except Exception as exc:
        if isinstance(exc, ExceptionGroup) and exc.split(BrokenPipeError)[1] is None:
            # A task group's errors, each the reader gone (`paicli batch ... | head`).
            raise BrokenPipeError from exc
        # A bug must cost one redacted line (the traceback goes to the log file), never a
        # traceback on the screen that may quote a secret.
        import logging  # noqa: PLC0415

        logging.getLogger("paicli").error("paicli: internal error", exc_info=True)
        return 1


def headless_options(options: argparse.Namespace) -> str | None:
    """The prompt in one place (`-p PROMPT`, or `-p ... PROMPT`), Claude Code's tool flags
    folded into the rule flags; why the headless options cannot be used, if so."""
    prompt = getattr(options, "prompt", None)
    if prompt is not None:
        if options.print:
            return f"-p: two prompts given ({options.print!r} and {prompt!r}); quote one"
        options.print = prompt
    fold_tool_flags(options)
    return headless_problem(options)


def added_dirs(options: argparse.Namespace) -> str | None:
    """Each `--add-dir` made absolute (after -C), or what is wrong with the first that is no
    folder (`DIR: no such folder`)."""
    folders = []
    for given in options.add_dir:
        folder = os.path.abspath(os.path.expanduser(given))
        if not os.path.isdir(folder):
            why = "not a folder" if os.path.exists(folder) else "no such folder"
            return f"{given}: {why}"
        folders.append(folder)
    options.add_dir = folders
    return None


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
            from paicli.observe.tracing import recording  # noqa: PLC0415

            try:
                stack.enter_context(recording(Path(trace)))
            except OSError as exc:
                err(f"paicli: cannot write the trace {trace}: {exc.strerror or exc}")
                return 2
        if options.metrics_port is not None:
            from paicli.observe.metrics import MetricsUnavailable, serve  # noqa: PLC0415

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
    if options.command == "sandbox":
        from paicli.cli.sandbox import run as run_sandbox  # noqa: PLC0415

        return run_sandbox(options)
    if options.command == "plugin":
        from paicli.cli.plugin_commands import run as run_plugin  # noqa: PLC0415

        return run_plugin(options)
    if options.command == "rewind":
        from paicli.cli.rewind import run as run_rewind  # noqa: PLC0415

        return run_rewind(options)
    if options.command == "mcp":
        return _mcp(options)
    flags = {"provider": options.provider, "model": options.model, "base_url": options.base_url}
    if (problem := check_permission_mode(options)) is not None:
        from paicli.ui.output import err  # noqa: PLC0415

        err(f"paicli: {problem}")
        return 2
    config_problem = mcp_config_problem(options)
    if options.print is not None:
        from paicli.cli._signals import run_until_signalled  # noqa: PLC0415
        from paicli.cli.errors import UsageError  # noqa: PLC0415
        from paicli.cli.oneshot import no_prompt, read_prompt, run_once  # noqa: PLC0415

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
    from paicli.cli._signals import run_until_signalled  # noqa: PLC0415

    if options.command == "batch":
        from paicli.cli.batch import run as run_batch  # noqa: PLC0415

        return run_batch(options, flags)
    if options.command == "acp":
        from paicli.cli.acp import run as run_acp  # noqa: PLC0415 - the SDK only when asked

        return run_acp(options, flags)
    if quick_start(options):
        from paicli.ui.prompt_line import quick_repl  # noqa: PLC0415 - prompt_toolkit alone

        return run_until_signalled(quick_repl(options, flags))
    from paicli.ui.repl_start import repl_main  # noqa: PLC0415
    from paicli.ui.trust_prompt import ask_on_terminal  # noqa: PLC0415

    ask = ask_on_terminal if sys.stdin.isatty() else None
    return run_until_signalled(repl_main(options, flags, ask_trust=ask))


def _mcp(options: argparse.Namespace) -> int:
    """Run the `paicli mcp ...` command `options` names."""
    if options.mcp_command == "probe":
        import asyncio  # noqa: PLC0415 - keep --version fast

        from paicli.cli.probe import probe  # noqa: PLC0415

        return asyncio.run(probe(options))
    if options.mcp_command == "replay":
        from paicli.cli.replay import replay  # noqa: PLC0415 - a server starts with few imports

        return replay(options)
    if options.mcp_command == "doctor":
        from paicli.cli.doctor import run as run_doctor  # noqa: PLC0415

        return run_doctor(options)
    if options.mcp_command == "list" and not options.mcp_config and not config_files_exist():
        # The common first run: answer without loading the MCP machinery at all.
        from paicli.ui.output import out  # noqa: PLC0415

        out(NO_SERVERS)
        return 0
    if (problem := mcp_config_problem(options)) is not None:
        # As for a run: a missing or broken --mcp-config file is no silent "no servers".
        from paicli.ui.output import err  # noqa: PLC0415

        err(f"paicli: {problem}")
        return 2
    from paicli.cli.mcp_commands import run  # noqa: PLC0415

    return run(options)


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
    from paicli.permissions.approval import Mode  # noqa: PLC0415

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


def read_system_prompt(options: argparse.Namespace) -> str | None:
    """Read `--system-prompt-file` into `options.system_prompt_text` through the safe reader
    (a regular file, capped, no blocking open); why not, when it cannot be read."""
    from pathlib import Path  # noqa: PLC0415 - keep --version fast

    from paicli.config_files import ConfigFileError, read_config_text  # noqa: PLC0415

    name = options.system_prompt_file
    try:
        text = read_config_text(Path(name), name)
    except ConfigFileError as exc:
        return str(exc)
    if text is None or not text.strip():
        return f"{name}: no such file, or it is empty"
    options.system_prompt_text = text
    return None
