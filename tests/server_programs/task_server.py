"""A stdio MCP server whose tool `slow` answers with a task, in both protocol eras.

    python task_server.py [--mode MODE] [--polls N] [--poll-ms MS] [--log FILE]

`initialize` gives the 2025-11-25 core tasks (`task` on tools/call, tasks/get, tasks/result,
tasks/list, tasks/cancel, notifications/tasks/status); `server/discover` gives the 2026
extension (`io.modelcontextprotocol/tasks`: a `resultType: "task"` answer, tasks/get with the
result inlined, tasks/update, tasks/cancel, notifications/tasks on subscriptions/listen).
A task completes on its Nth poll (`--polls`, 0: never by polls) or when the tool `release`
is called. MODE: `normal`; `input` (asks for a confirmation first: 2026 inputRequests, or
2025-11-25 an elicitation/create sent while tasks/result waits); `fail`; `flood` (thousands
of status notifications per task); `escape` (task ids with terminal escapes); `huge` (a
result of 300 000 characters); `sync` (never makes a task); `lie` (a status notice says
the task completed before it has). `--log FILE` appends every
method received, one a line. Standard library only; the same class serves in the test
process (`tests/memory_servers.task_in_memory`).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Json = dict[str, Any]
Send = Callable[[Json], Awaitable[None]]
META = "io.modelcontextprotocol/"
EXTENSION = META + "tasks"
MODERN = "2026-07-28"
STAMP = "2026-08-01T10:00:00Z"
FLOOD = 5000
ASK: Json = {
    "method": "elicitation/create",
    "params": {
        "message": "Proceed with the slow job?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}


class Fault(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Task:
    task_id: str
    modern: bool
    text: str
    status: str = "working"
    polls: int = 0
    answer: Any = None
    result: Json | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)


def text_result(text: str) -> Json:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class TaskServer:
    def __init__(self, options: argparse.Namespace, send: Send) -> None:
        self.mode = options.mode
        self.polls = options.polls
        self.poll_ms = options.poll_ms
        self.log_file: Path | None = options.log
        self.send = send
        self.tasks: dict[str, Task] = {}
        self.methods: list[str] = []
        self.listening: set[str] = set()
        self.counter = itertools.count(1)
        self.asks: dict[str, asyncio.Future[Any]] = {}
        self.running: set[asyncio.Task[None]] = set()

    # -- messages ------------------------------------------------------------------------

    def receive(self, message: Json) -> None:
        """Take one client message; requests are answered by their own task."""
        if "method" not in message:
            future = self.asks.pop(str(message.get("id")), None)
            if future is not None and not future.done():
                future.set_result(message.get("result"))
            return
        method = str(message["method"])
        self.methods.append(method)
        if self.log_file is not None:
            with self.log_file.open("a") as out:
                out.write(method + "\n")
        if "id" in message:
            job = asyncio.ensure_future(self.reply(message))
            self.running.add(job)
            job.add_done_callback(self.running.discard)

    async def reply(self, message: Json) -> None:
        params = message.get("params") or {}
        try:
            result = await self.answer(str(message["method"]), params, message["id"])
        except Fault as fault:
            error = {"code": fault.code, "message": str(fault)}
            await self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        if result is not None:
            await self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def answer(self, method: str, params: Json, ident: Any) -> Json | None:
        meta = params.get("_meta") or {}
        modern = META + "protocolVersion" in meta
        if method == "initialize":
            caps: Json = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "tasks": caps},
                "serverInfo": {"name": "tasks", "version": "1"},
            }
        if method == "server/discover":
            return {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
                "_meta": {META + "serverInfo": {"name": "tasks", "version": "1"}},
            }
        if method == "subscriptions/listen":
            wanted = (params.get("notifications") or {}).get("taskIds") or []
            self.listening = {str(t) for t in wanted}
            if self.mode == "lie":  # while the client waits for its first poll
                for task_id in self.listening & set(self.tasks):
                    await self.notify(self.tasks[task_id], status="completed")
            return None  # held open, as a listen request is
        result = await self.task_method(method, params, meta)
        if modern and result is not None:
            result.setdefault("resultType", "complete")
        return result

    async def task_method(self, method: str, params: Json, meta: Json) -> Json | None:
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [tool("slow"), tool("release"), tool("quick")]}
        if method == "tools/call":
            return await self.call(params, meta)
        if method == "tasks/list":
            return {"tasks": [self.wire(t) for t in self.tasks.values()]}
        task = self.tasks.get(str(params.get("taskId")))
        if method.startswith("tasks/") and task is None:
            raise Fault(-32602, "unknown task")
        if method == "tasks/get" and task is not None:
            return await self.get(task)
        if method == "tasks/result" and task is not None:
            return await self.payload(task)
        if method == "tasks/update" and task is not None:
            responses = params.get("inputResponses") or {}
            if "confirm" in responses and task.status == "input_required":
                task.answer = responses["confirm"]
                await self.move(task, "working")
            return {}
        if method == "tasks/cancel" and task is not None:
            if task.status not in ("completed", "failed", "cancelled"):
                await self.move(task, "cancelled")
            return {} if task.modern else self.wire(task)
        raise Fault(-32601, f"Method not found: {method}")

    # -- tools ---------------------------------------------------------------------------

    async def call(self, params: Json, meta: Json) -> Json:
        name = params.get("name")
        text = str((params.get("arguments") or {}).get("text", ""))
        if name == "release":
            for task in list(self.tasks.values()):
                if task.status == "working":
                    await self.complete(task)
            return text_result("released")
        if name == "quick":
            return text_result(f"quick: {text}")
        if name != "slow":
            raise Fault(-32602, f"unknown tool {name!r}")
        caps = meta.get(META + "clientCapabilities") or {}
        modern_task = EXTENSION in (caps.get("extensions") or {})
        legacy_task = "task" in params
        if self.mode == "sync" or not (modern_task or legacy_task):
            return text_result(f"done: {text}")
        number = next(self.counter)
        task_id = f"t\x1b[31m-{number}\x07\r" if self.mode == "escape" else f"task-{number}"
        task = Task(task_id, modern_task, text)
        self.tasks[task_id] = task
        if self.mode == "flood":
            for _ in range(FLOOD):
                await self.notify(task)
        if modern_task:
            return {**self.wire(task), "resultType": "task"}
        return {"task": self.wire(task)}

    # -- task life -----------------------------------------------------------------------

    def wire(self, task: Task) -> Json:
        body: Json = {
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": STAMP,
            "lastUpdatedAt": STAMP,
        }
        body["ttlMs" if task.modern else "ttl"] = 600000
        body["pollIntervalMs" if task.modern else "pollInterval"] = self.poll_ms
        return body

    async def get(self, task: Task) -> Json:
        task.polls += 1
        if self.mode == "lie" and task.polls == 1:  # says it completed; it has not
            await self.notify(task, status="completed")
        if task.status == "working" and self.polls and task.polls >= self.polls:
            if self.mode == "input" and task.answer is None:
                await self.move(task, "input_required")
            else:
                await self.complete(task)
        body = self.wire(task)
        if task.modern and task.status == "completed":
            body["result"] = task.result
        if task.modern and task.status == "failed":
            body["error"] = {"code": -32603, "message": "the slow job broke"}
        if task.modern and task.status == "input_required":
            body["inputRequests"] = {"confirm": ASK}
        return body

    async def payload(self, task: Task) -> Json:
        if task.status == "input_required" and not task.modern:
            task.answer = await self.ask_client(task)
            await self.complete(task)
        await task.ended.wait()
        if task.status == "failed":
            raise Fault(-32603, "the slow job broke")
        if task.status == "cancelled":
            raise Fault(-32603, "cancelled")
        assert task.result is not None
        return task.result

    async def ask_client(self, task: Task) -> Any:
        ident = f"ask-{task.task_id}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.asks[ident] = future
        related = {META + "related-task": {"taskId": task.task_id}}
        params = {**ASK["params"], "_meta": related}
        await self.send({"jsonrpc": "2.0", "id": ident, "method": ASK["method"], "params": params})
        return await future

    async def complete(self, task: Task) -> None:
        if self.mode == "fail":
            await self.move(task, "failed")
            return
        text = "x" * 300_000 if self.mode == "huge" else f"done: {task.text}"
        if task.answer is not None:
            text += f" (answer: {json.dumps(task.answer, sort_keys=True)})"
        task.result = text_result(text)
        await self.move(task, "completed")

    async def move(self, task: Task, status: str) -> None:
        task.status = status
        if status in ("completed", "failed", "cancelled"):
            task.ended.set()
        await self.notify(task)

    async def notify(self, task: Task, status: str | None = None) -> None:
        if not task.modern:
            method = "notifications/tasks/status"
        elif task.task_id in self.listening:
            method = "notifications/tasks"
        else:
            return
        params = {**self.wire(task), **({"status": status} if status else {})}
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})


def tool(name: str) -> Json:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    body: Json = {"name": name, "description": f"The {name} tool.", "inputSchema": schema}
    if name == "slow":
        body["execution"] = {"taskSupport": "optional"}
    return body


def parse_options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    modes = ["normal", "input", "fail", "flood", "escape", "huge", "sync", "lie"]
    parser.add_argument("--mode", choices=modes, default="normal")
    parser.add_argument("--polls", type=int, default=2)
    parser.add_argument("--poll-ms", type=int, default=100)
    parser.add_argument("--log", type=Path)
    return parser.parse_args(argv)


async def main() -> None:
    loop = asyncio.get_running_loop()

    async def send(message: Json) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    server = TaskServer(parse_options(sys.argv[1:]), send)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            server.receive(message)


if __name__ == "__main__":
    asyncio.run(main())
