"""The terminal UI: the REPL (prompt_toolkit for input, rich for output). The only package
that imports rich or prompt_toolkit."""
