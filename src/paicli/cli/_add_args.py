"""The options of `paicli mcp add`, declared once: for `--help` and the first parse, and for
the second parse of what follows the server's name (argparse leaves everything after the
first positional to the remainder, so `add NAME --env K=V -- CMD` used to save `--env` as the
command). Plain argparse: imported by every run, it must stay cheap."""

from __future__ import annotations

import argparse

from paicli.cli.errors import UsageError

# Where `add`, `add-json`, `import` and `remove` may write.
SCOPES = ("user", "project", "local")
SCOPE_HELP = (
    "where to save it: user (~/.paicli/mcp.json, the default), project (.paicli/mcp.json, "
    "to commit) or local (this project, for you only, kept in ~/.paicli)"
)

ADD_USAGE = (
    "paicli mcp add [OPTIONS] NAME -- COMMAND [ARGS...]   (a stdio server)\n"
    "       paicli mcp add [OPTIONS] NAME URL               (an HTTP server)"
)


def add_options(parser: argparse.ArgumentParser) -> None:
    """Declare add's options on `parser`. Defaults are None (or an empty list) so a second
    parse into the same namespace keeps what the first one found."""
    parser.add_argument("-s", "--scope", choices=SCOPES, help=SCOPE_HELP)
    parser.add_argument(
        "-t",
        "--transport",
        choices=("stdio", "http", "sse"),
        help="default: http for a URL, else stdio",
    )
    parser.add_argument(
        "-H", "--header", action="append", default=[], metavar="'K: V'", help="HTTP header"
    )
    parser.add_argument(
        "-e", "--env", action="append", default=[], metavar="K=V", help="environment variable"
    )
    parser.add_argument(
        "-f", "--force", action="store_true", default=None, help="replace a server of that name"
    )
    parser.add_argument(
        "--protocol",
        metavar="auto|legacy|modern|VERSION",
        help="the MCP protocol to speak: auto (the default) probes the 2026 revision first; "
        "legacy starts with initialize (for servers that exit on the probe)",
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # raise, never exit
        raise UsageError(message)


def split_server_command(args: list[str]) -> tuple[list[str], list[str] | None]:
    """For `paicli ... mcp add ... -- CMD ARGS`: the words before the first `--`, and the
    server's command after it (None for any other command line). argparse would drop that
    `--` when it follows the name at once, and then `add NAME -- CMD -y` could not be told
    from `add NAME CMD -y`."""
    if "--" not in args:
        return args, None
    split = args.index("--")
    head = args[:split]
    if "mcp" not in head or head[head.index("mcp") + 1 : head.index("mcp") + 2] != ["add"]:
        return args, None
    return head, args[split + 1 :]


def parse_rest(words: list[str], namespace: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Options found after the name go into `namespace` (lists extended, flags set); returns
    the other words before `--`, and the words after it."""
    before, after = words, []
    if "--" in words:
        split = words.index("--")
        before, after = words[:split], words[split + 1 :]
    parser = _Parser(prog="paicli mcp add", add_help=False)
    add_options(parser)
    parser.add_argument("words", nargs="*")
    parsed = parser.parse_intermixed_args(before, namespace=namespace)
    rest: list[str] = parsed.words
    del parsed.words
    return rest, after
