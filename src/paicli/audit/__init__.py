"""The audit log of tool calls and the auditing wrapper (`log`), and the one stack of
wrappers every tool call passes, audit outermost (`guard`)."""
