"""`paicli rewind`'s options (plain argparse, imported by every run)."""

from __future__ import annotations

import argparse


def rewind_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`paicli rewind [--session ID] [--to N] [--code-only | --conversation-only] [--force]`."""
    rewind = commands.add_parser(
        "rewind",
        help="list a saved conversation's turns, or bring its files and conversation back "
        "to before turn N (as /rewind)",
    )
    rewind.add_argument(
        "--session",
        metavar="ID",
        help="the conversation (paicli --resume lists them; default: this folder's latest)",
    )
    rewind.add_argument(
        "--to", type=int, metavar="N", help="rewind to before turn N (without: list the turns)"
    )
    only = rewind.add_mutually_exclusive_group()
    only.add_argument(
        "--code-only", action="store_true", help="restore the files, keep the conversation"
    )
    only.add_argument(
        "--conversation-only",
        action="store_true",
        help="cut the conversation, keep the files as they are",
    )
    rewind.add_argument(
        "--force",
        action="store_true",
        help="also overwrite files changed since paicli last changed them (without it, "
        "nothing is restored while there are such files)",
    )
