"""`paicli batch`: many headless runs, each in its own copy of its folder and its own
process. `tasks` reads and checks the tasks file; `workspace` makes each task's copy (a git
worktree or a copy) and its diff; `run_task` runs one task as `paicli -p` would, inside a
worker (`worker`), whose MCP servers stay warm across tasks (`warm`); `process` owns a
worker process (timeouts, crashes, memory); `local` runs N of them here, and `ray_run` one
per Ray actor on a cluster; `results` shapes result lines and reads them back for resume.

Nothing here prints: the command (`paicli.cli.batch`) writes results and progress.
"""
