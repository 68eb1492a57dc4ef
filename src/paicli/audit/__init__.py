"""The audit log of tool calls and the auditing wrapper (`log`)."""
