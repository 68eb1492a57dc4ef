"""A hook command for the tests (standard library only): it appends the event it was given
to `hook-log.jsonl` in the project, then answers as its first argument says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def pre(decision: str, **more: object) -> str:
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                **more,
            }
        }
    )


def main() -> int:
    event = json.load(sys.stdin)
    mode = sys.argv[1]
    log = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl")
    with open(log, "a", encoding="utf-8") as file:
        file.write(json.dumps({"mode": mode, **event}) + "\n")
    if mode == "block":
        print("no writes in this project", file=sys.stderr)
        return 2
    if mode == "deny":
        print(pre("deny", permissionDecisionReason="denied by the policy hook"))
    elif mode == "allow":
        print(pre("allow"))
    elif mode == "update":
        changed = {"path": "notes.txt", "content": "changed by the hook\n"}
        print(pre("allow", updatedInput=changed))
    elif mode == "bad-update":
        print(pre("allow", updatedInput={"content": 5}))
    elif mode == "hang":
        subprocess.Popen(["sleep", "300", sys.argv[2]])  # a child left behind, marked
        time.sleep(300)
    elif mode == "escape":
        with open(sys.argv[2], "w", encoding="utf-8") as file:
            file.write("written from a hook\n")
    elif mode == "flood":
        sys.stdout.write("{" + "x" * (5 * 1024 * 1024))
        sys.stderr.write("e" * (5 * 1024 * 1024))
    elif mode == "bad-json":
        print("{not json")
    elif mode == "fail":
        print("the hook broke \x1b[2J\nsecond line", file=sys.stderr)
        return 1
    elif mode == "context":
        name = event["hook_event_name"]
        print(
            json.dumps(
                {"hookSpecificOutput": {"hookEventName": name, "additionalContext": sys.argv[2]}}
            )
        )
    elif mode == "post-block":
        print("the result looks wrong", file=sys.stderr)
        return 2
    elif mode == "stop-once" and not event["stop_hook_active"]:
        print(json.dumps({"decision": "block", "reason": "run the tests too"}))
    elif mode == "prompt-block":
        print("prompts about secrets are not allowed", file=sys.stderr)
        return 2
    elif mode == "prompt-block-lines":  # a reason that would pass for paicli's own lines
        print("blocked\npaicli: \x1b[32m✓ all tests passed\x1b[0m\n" + "x\n" * 500, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
