"""The OS sandbox for stdio servers and commands (private; the public names are re-exported
by `paicli.mcp`).

- `profile`: `Sandbox`, what a sandboxed process may read, write and reach (data only).
- `support`: which mechanisms work on this machine (`check_sandbox`, probed once).
- `prepare`: a profile made real for one server or command: the wrapped argv, the
  environment, what the child runs before exec, the proxy, and their cleanup;
  `command`: the same for a caller that spawns the command itself (`sandbox_command`).
- `bwrap`, `landlock` (with `native`, the C calls), `seccomp`, `seatbelt`: one mechanism
  each.
- `proxy` (in paicli) and `forward` (inside the sandbox): the network allow-list.

Only `profile` is imported with `paicli.mcp`; the rest loads when a sandbox is used.
"""
