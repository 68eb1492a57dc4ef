"""`paicli plugin ...`'s commands and options (plain argparse, imported by every run)."""

from __future__ import annotations

import argparse

PLUGIN_SCOPES = ("user", "project")


def plugin_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`paicli plugin add|list|remove|enable|disable` and `paicli plugin marketplace ...`."""
    plugin = commands.add_parser("plugin", help="install and manage plugins")
    sub = plugin.add_subparsers(dest="plugin_command", required=True)
    add = sub.add_parser(
        "add",
        help="install a plugin from a folder, a git URL or NAME@MARKETPLACE (shows what it "
        "adds and asks)",
    )
    add.add_argument("source", metavar="PATH|GIT-URL|NAME@MARKETPLACE")
    add.add_argument(
        "-s",
        "--scope",
        choices=PLUGIN_SCOPES,
        default="user",
        help="user: every project (the default); project: this project only "
        "(.paicli/settings.json enabledPlugins)",
    )
    add.add_argument("--ref", help="the branch or tag of a git URL")
    add.add_argument(
        "-y", "--yes", action="store_true", help="install without asking (for scripts)"
    )
    sub.add_parser("list", help="the installed plugins and known marketplaces")
    remove = sub.add_parser("remove", help="uninstall a plugin")
    remove.add_argument("name")
    for verb in ("enable", "disable"):
        switch = sub.add_parser(verb, help=f"{verb} an installed plugin")
        switch.add_argument("name")
        switch.add_argument(
            "-s",
            "--scope",
            choices=PLUGIN_SCOPES,
            default="user",
            help="user: everywhere (the default); project: in this project's .paicli/settings.json",
        )
    market = sub.add_parser("marketplace", help="add, list or remove plugin marketplaces")
    markets = market.add_subparsers(dest="marketplace_command", required=True)
    market_add = markets.add_parser("add", help="add a marketplace from a folder or git URL")
    market_add.add_argument("source", metavar="PATH|GIT-URL")
    market_add.add_argument("--ref", help="the branch or tag of a git URL")
    markets.add_parser("list", help="the known marketplaces and their plugins")
    market_remove = markets.add_parser("remove", help="forget a marketplace")
    market_remove.add_argument("name")
