"""The version of the paicli application (the `paicli-cli` distribution)."""

__version__ = "0.1.0"
