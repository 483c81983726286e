"""An MCP server that misbehaves on request, for the MCP toolbox's tests and benchmark.

Built on the ``mcp`` SDK's low-level ``Server``, so that its tool list is written by hand as
servers really write them: schemas with ``$defs`` and references (one of them to itself), draft-07
``definitions``, ``anyOf`` with ``null``, ``const``, missing ``properties``, defaults that do not
fit, patterns Python cannot read; names that break the Toolbox's rule; results with several
parts, images, audio, resources, structured content, errors, huge text. The tool list comes in two
pages.

    python mcp_fault_server.py [--http PORT] [--name NAME] [--crash-at-start] [--silent]
                               [--flood BYTES] [--pid-file PATH] [--marker PATH]
                               [--banner] [--garbage N] [--order ts|middle] [--tools-file PATH]
                               [--many N] [--long] [--pages-forever]

- ``--http PORT``: serve streamable HTTP on 127.0.0.1:PORT (path ``/mcp``); default: stdio.
- ``--crash-at-start``: write a complaint to stderr and exit with status 3 at once.
- ``--silent``: start, then never answer anything (no ``initialize`` either).
- ``--flood BYTES``: write BYTES of noise to stderr before serving (and 1 MB per ``shout``).
- ``--pid-file PATH``: write this process's id there first (before anything else is imported).
- ``--marker PATH``: ``slow`` creates this file when it starts.
- ``--banner``: greet on stdout first (a line that is not JSON-RPC).
- ``--garbage N``: write N lines that are not JSON-RPC on stdout first.
- ``--order ts|middle``: write each message's members in another order: ``ts`` as the
  TypeScript SDK does (``{"result": ..., "jsonrpc": "2.0", "id": 7}``), ``middle`` with the id
  between the result and one more member (``{"jsonrpc": ..., "result": ..., "id": 7, "x": 0}``).
- ``--tools-file PATH``: list the tools in this JSON file (``[{"name", "description",
  "inputSchema"}]``) instead of the built-in ones, in one page.
- ``--many N``: list N more tools (``tool_0``, ...), and one whose name is 300 characters long;
  with ``--long``, each with a long description and long argument descriptions.
- ``--pages-forever``: every page of the tool listing says there is another one.

Tools: ``echo``, ``slow`` (sleeps), ``die`` (stderr, then exits mid-call), ``fail`` (an
``isError`` result), ``mixed`` (every kind of content), ``structured``, ``huge``, ``nothing``,
``shout`` (floods stderr), ``add`` (a trivial tool for the benchmark), and schema tools that answer
with the arguments they received.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
from typing import Any

if "--pid-file" in sys.argv[:-1]:  # first, before the SDK's imports (slow on a busy machine)
    with open(sys.argv[sys.argv.index("--pid-file") + 1], "w") as pid:
        pid.write(str(os.getpid()))

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(1200)).decode()
WAV = base64.b64encode(b"RIFF" + bytes(3000)).decode()
BLOB = base64.b64encode(bytes(range(256)) * 40).decode()

NODE = {
    "type": "object",
    "title": "Node",
    "properties": {
        "value": {"type": "integer", "title": "Value"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
    },
    "required": ["value"],
}

SCHEMAS: dict[str, dict[str, Any]] = {
    # pydantic's way: $defs, $ref, a model that contains itself, titles everywhere
    "tree_sum": {
        "$defs": {"Node": NODE},
        "properties": {"root": {"$ref": "#/$defs/Node", "description": "The tree to add up."}},
        "required": ["root"],
        "title": "tree_sumArguments",
        "type": "object",
    },
    # what FastMCP / pydantic write for Optional, Literal, Enum and a nested model
    "search": {
        "$defs": {
            "Order": {"enum": ["newest", "oldest"], "title": "Order", "type": "string"},
            "Filters": {
                "type": "object",
                "properties": {
                    "author": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    "year": {"type": "integer", "minimum": 1900},
                },
            },
        },
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None,
                      "title": "Limit"},
            "order": {"$ref": "#/$defs/Order", "default": "newest"},
            "filters": {"$ref": "#/$defs/Filters"},
            "mode": {"const": "fast"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
    },
    # zod-to-json-schema's way: draft-07, definitions
    "book": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"isbn": {"type": "string", "pattern": "^[0-9-]{10,17}$"}},
        "type": "object",
        "properties": {
            "isbn": {"$ref": "#/definitions/isbn"},
            "copies": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        },
        "required": ["isbn"],
        "additionalProperties": False,
    },
    # no properties at all; a default that does not fit; a pattern Python cannot read
    "ping": {"type": "object"},
    "untyped": {"type": "object", "properties": {"x": {"type": "string", "default": None},
                               "word": {"type": "string", "pattern": "^\\p{L}+$"}}},
    "external": {"type": "object",
                 "properties": {"spec": {"$ref": "https://example.com/schema.json"}}},
}

PLAIN: dict[str, dict[str, Any]] = {
    "echo": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "slow": {"type": "object", "properties": {"seconds": {"type": "number"}},
             "required": ["seconds"]},
    "add": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]},
    "huge": {"type": "object", "properties": {"chars": {"type": "integer"}},
             "required": ["chars"]},
    "die": {"type": "object", "properties": {}},
    "fail": {"type": "object", "properties": {}},
    "mixed": {"type": "object", "properties": {}},
    "structured": {"type": "object", "properties": {}},
    "nothing": {"type": "object", "properties": {}},
    "shout": {"type": "object", "properties": {}},
    "get weather/now": {"type": "object", "properties": {"city": {"type": "string"}}},
    "2fa-code": {"type": "object", "properties": {}},
    "données": {"type": "object", "properties": {}},
    "a" * 80: {"type": "object", "properties": {}},
}

OPTIONS = argparse.Namespace(marker=None, flood=0, tools_file=None, many=0, long=False,
                             pages_forever=False)


def many_tools() -> list[types.Tool]:
    words = " ".join(["Use this tool with care and read what it returns."] * 40)
    text = words if OPTIONS.long else "A tool among many."
    schema = {"type": "object", "properties": {
        name: {"type": "string", "description": words if OPTIONS.long else name}
        for name in ("first", "second", "third")}}
    tools = [types.Tool(name=f"tool_{i}", description=text, input_schema=schema)
             for i in range(OPTIONS.many)]
    tools.append(types.Tool(name="n" * 300, description="A long name.", input_schema=schema))
    return tools


def all_tools() -> list[types.Tool]:
    if OPTIONS.tools_file:
        with open(OPTIONS.tools_file) as f:
            return [types.Tool(name=t["name"], description=t["description"],
                               input_schema=t["inputSchema"]) for t in json.load(f)]
    tools = [types.Tool(name=name, description=f"The {name} tool.", input_schema=schema)
             for name, schema in {**PLAIN, **SCHEMAS}.items()]
    tools[0] = types.Tool(name="echo", description="Say the text back.", input_schema=PLAIN["echo"])
    tools.append(types.Tool(name="colors",  # what a terminal would act on
                            description="Paint \x1b[31mred\x1b[0m, then \u202eevil.",
                            input_schema={"type": "object", "properties": {}}))
    tools.append(types.Tool(name="evil\x1b]0;pwned\x07", description="A name with escapes.",
                            input_schema={"type": "object",
                                          "properties": {"x": {"$ref": "http://x/s.json"}}}))
    return tools + many_tools() if OPTIONS.many else tools


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None
                     ) -> types.ListToolsResult:
    tools = all_tools()
    if OPTIONS.pages_forever:
        page = int((params.cursor if params and params.cursor else "page-0").split("-")[1])
        return types.ListToolsResult(tools=tools[:1] if page == 0 else [],
                                     next_cursor=f"page-{page + 1}")
    if OPTIONS.tools_file:
        return types.ListToolsResult(tools=tools)
    half = len(tools) // 2
    if params is None or not params.cursor:
        return types.ListToolsResult(tools=tools[:half], next_cursor="page-2")
    return types.ListToolsResult(tools=tools[half:])


class ReorderedStdout:
    """The server's stdout, each message written with its members in another order."""

    def __init__(self, order: str) -> None:
        self.order = order

    async def write(self, line: str) -> None:
        message = json.loads(line)
        first = {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}
        if self.order == "ts":
            message = {**first, "jsonrpc": message["jsonrpc"], **(
                {"id": message["id"]} if "id" in message else {})}
        elif "id" in message:
            message = {"jsonrpc": message["jsonrpc"], **first, "id": message["id"], "x": 0}
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")

    async def flush(self) -> None:
        sys.stdout.flush()


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, dict(params.arguments or {})
    if name == "echo":
        return types.CallToolResult(content=[text(str(args.get("text")))])
    if name == "add":
        return types.CallToolResult(content=[text(str(args["a"] + args["b"]))])
    if name == "slow":
        if OPTIONS.marker:
            with open(OPTIONS.marker, "w") as f:
                f.write("started")
        await asyncio.sleep(float(args["seconds"]))
        return types.CallToolResult(content=[text(f"slept {args['seconds']} s")])
    if name == "die":
        print("fault server: fatal: the disk is on fire", file=sys.stderr, flush=True)
        os._exit(7)
    if name == "fail":
        return types.CallToolResult(content=[text("No such city: Atlantis")], is_error=True)
    if name == "mixed":
        return types.CallToolResult(
            content=[
                text("Here is everything:"),
                types.ImageContent(type="image", data=PNG, mime_type="image/png"),
                types.AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
                types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                    uri="file:///notes.txt", mime_type="text/plain", text="a note")),
                types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
                    uri="file:///data.bin", mime_type="application/octet-stream", blob=BLOB)),
                types.ResourceLink(type="resource_link", name="report", uri="file:///report.pdf",
                                   mime_type="application/pdf"),
            ],
            structured_content={"count": 6},
        )
    if name == "structured":
        data = {"temperature": 21.5, "unit": "C", "city": "Zürich"}
        return types.CallToolResult(content=[text(json.dumps(data, indent=2))],
                                    structured_content=data)
    if name == "huge":
        return types.CallToolResult(content=[text("x" * int(args["chars"]))])
    if name == "nothing":
        return types.CallToolResult(content=[])
    if name == "shout":
        sys.stderr.write("noise " * 200_000)
        sys.stderr.flush()
        return types.CallToolResult(content=[text("shouted")])
    return types.CallToolResult(content=[text(json.dumps({"tool": name, "args": args},
                                                         ensure_ascii=False))])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--name", default="faulty")
    parser.add_argument("--crash-at-start", action="store_true")
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--flood", type=int, default=0)
    parser.add_argument("--pid-file")
    parser.add_argument("--marker")
    parser.add_argument("--banner", action="store_true")
    parser.add_argument("--garbage", type=int, default=0)
    parser.add_argument("--order", choices=["ts", "middle"])
    parser.add_argument("--tools-file")
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--pages-forever", action="store_true")
    args = parser.parse_args()
    OPTIONS.marker, OPTIONS.flood = args.marker, args.flood
    OPTIONS.tools_file, OPTIONS.many, OPTIONS.long = args.tools_file, args.many, args.long
    OPTIONS.pages_forever = args.pages_forever
    if args.crash_at_start:
        print("fault server: cannot open the database /nonexistent/db.sqlite", file=sys.stderr)
        sys.exit(3)
    if args.flood:
        chunk = "flood " * 10_000 + "\n"
        for _ in range(max(1, args.flood // len(chunk))):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    if args.banner:  # servers that greet on stdout: not JSON-RPC
        print("Fault server v1.0 ready, listening on stdio", flush=True)
    for i in range(args.garbage):  # log lines, progress, a stray JSON log line
        log = json.dumps({"level": "info", "n": i})
        print(f"[{i}] progress {'#' * (i % 40)}" if i % 2 else log, flush=True)
    if args.silent:
        while True:
            import time

            time.sleep(3600)
    server = Server(args.name, version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    if args.http:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.http,
                    log_level="warning")
        return

    async def serve() -> None:
        stdout: Any = ReorderedStdout(args.order) if args.order else None
        async with stdio_server(stdout=stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    asyncio.run(serve())


if __name__ == "__main__":
    main()
