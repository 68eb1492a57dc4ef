"""Hooks in Claude Code's contract: commands the user (or, once approved, a repository)
configures to run at points of a session, given the event as JSON on stdin, answering by
exit code or JSON. `settings` reads them, `approval` keeps a repository's from running
unapproved, `process` runs one (sandboxed, bounded, killed with its group), `events` decides
what an answer means, and `toolbox` puts PreToolUse/PostToolUse around tool calls."""
