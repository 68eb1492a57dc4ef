"""Custom slash commands from Markdown files (Claude Code's format): `files` finds and reads
them, `expand` puts a call's arguments into a body."""
