"""Example MCP server: in-memory notes, as tools, resources and a prompt (stdlib only).

Notes live only as long as the process. Each note is the resource `note://<title>` (the title
percent-encoded) next to the fixed `note://readme`; every change to the notes sends
`notifications/resources/list_changed`. Run it by hand with `python3 notes.py`.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

# Run as a script, this file's folder is on sys.path, so the shared helper imports directly.
from _mcp_stdio import INVALID_PARAMS, Call, Json, RpcFault, Server, Tool, ToolFailure

RESOURCE_NOT_FOUND = -32002  # the MCP code for resources/read of an unknown URI (<= 2025-11-25)
README_URI = "note://readme"
README = """\
# notes: an example MCP server shipped with paicli

Keeps short text notes in memory while it runs (nothing is written to disk).

- Tools: add_note(title, text), list_notes(), read_note(title), delete_note(title).
- Resources: note://readme (this text) and one note://<title> per note.
- Prompt: summarize_notes asks the model for a summary of every note.
"""
SAMPLE_NOTES = {
    "welcome": "This is the notes example server. Add, read and delete notes with its tools.",
    "shopping": "milk\neggs\ncoffee",
}
MAX_TITLE = 100

TITLE: Json = {"type": "string", "description": "The note's title (1-100 characters)."}


def _schema(properties: Json) -> Json:
    return {"type": "object", "properties": properties, "required": list(properties)}


class Notes:
    """The notes and the MCP methods over them."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.notes: dict[str, str] = dict(SAMPLE_NOTES)

    def _existing(self, title: str) -> str:
        if title not in self.notes:
            raise ToolFailure(f"no note titled {title!r}")
        return title

    def _changed(self) -> None:
        self.server.notify("notifications/resources/list_changed")

    def add(self, arguments: Json, call: Call) -> str:
        title, text = arguments["title"].strip(), arguments["text"]
        if not title or len(title) > MAX_TITLE:
            raise ToolFailure(f"a title must have 1 to {MAX_TITLE} characters")
        if _uri(title) == README_URI:
            raise ToolFailure("the title 'readme' is reserved for the server's own resource")
        verb = "Replaced" if title in self.notes else "Added"
        self.notes[title] = text
        self._changed()
        return f"{verb} note {title!r}."

    def list(self, arguments: Json, call: Call) -> str:
        if not self.notes:
            return "No notes."
        return "\n".join(f"- {title}" for title in self.notes)

    def read(self, arguments: Json, call: Call) -> str:
        return self.notes[self._existing(arguments["title"])]

    def delete(self, arguments: Json, call: Call) -> str:
        del self.notes[self._existing(arguments["title"])]
        self._changed()
        return f"Deleted note {arguments['title']!r}."

    def list_resources(self, params: Json) -> Json:
        readme: Json = {
            "uri": README_URI,
            "name": "readme",
            "title": "About the notes server",
            "mimeType": "text/markdown",
        }
        notes = [
            {
                "uri": _uri(title),
                "name": title,
                "mimeType": "text/plain",
                "size": len(text.encode()),
            }
            for title, text in self.notes.items()
        ]
        return {"resources": [readme, *notes]}

    def read_resource(self, params: Json) -> Json:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcFault(INVALID_PARAMS, "resources/read needs a string 'uri'")
        if uri == README_URI:
            return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": README}]}
        title = unquote(uri.removeprefix("note://")) if uri.startswith("note://") else None
        if title is None or title not in self.notes:
            raise RpcFault(RESOURCE_NOT_FOUND, f"resource not found: {uri}")
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": self.notes[title]}]}

    def list_prompts(self, params: Json) -> Json:
        focus = {"name": "focus", "description": "What the summary should concentrate on."}
        prompt = {
            "name": "summarize_notes",
            "description": "Ask for a short summary of every note.",
            "arguments": [{**focus, "required": False}],
        }
        return {"prompts": [prompt]}

    def get_prompt(self, params: Json) -> Json:
        if params.get("name") != "summarize_notes":
            raise RpcFault(INVALID_PARAMS, f"unknown prompt: {params.get('name')!r}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RpcFault(INVALID_PARAMS, "prompt arguments must be an object")
        listing = "\n\n".join(f"## {title}\n{text}" for title, text in self.notes.items())
        focus = arguments.get("focus")
        request = "Summarize these notes in a few bullet points"
        request += f", concentrating on {focus}." if focus else "."
        text = f"{request}\n\n{listing or '(there are no notes)'}"
        return {
            "description": f"Summary of {len(self.notes)} notes",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }


def _uri(title: str) -> str:
    return "note://" + quote(title, safe="")


def main() -> None:
    server = Server(
        "paicli-example-notes",
        "0.1.0",
        capabilities={"resources": {"listChanged": True}, "prompts": {"listChanged": False}},
        instructions="Short text notes kept in memory; see the resource note://readme.",
    )
    notes = Notes(server)
    server.add_tools(
        Tool(
            "add_note",
            "Create a note, or replace the note with the same title.",
            _schema({"title": TITLE, "text": {"type": "string", "description": "The body."}}),
            notes.add,
        ),
        Tool("list_notes", "List the titles of all notes.", _schema({}), notes.list, True),
        Tool(
            "read_note", "Return the text of one note.", _schema({"title": TITLE}), notes.read, True
        ),
        Tool("delete_note", "Delete one note.", _schema({"title": TITLE}), notes.delete),
    )
    server.methods.update(
        {
            "resources/list": notes.list_resources,
            "resources/read": notes.read_resource,
            "prompts/list": notes.list_prompts,
            "prompts/get": notes.get_prompt,
        }
    )
    try:
        server.serve()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
