"""The commands that show what the package sees, without a model: ``tools`` (the tools as the
model sees them), ``parse`` (what the parser reads in a reply) and ``replay`` (a saved trace as
the thought chain)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import ConfigError, OutputParseError
from ..harness import Printer, read_trace, replay_events, safe
from ..parsing import parse_reply
from ..tools import Toolbox, load_toolbox
from ._session import EXIT_CODES, default_toolbox, open_mcp, with_mcp


def tools(args: argparse.Namespace) -> int:
    """``react-agent tools``: the toolbox as the model sees it (the system prompt's tool list),
    or as OpenAI tool specs with ``--json``; a line per MCP server on stderr."""
    mcp = open_mcp(args)
    try:
        base = load_toolbox(args.tools) if args.tools else Toolbox() if mcp is not None \
            else default_toolbox()
        toolbox = with_mcp(base, mcp)
        for server in mcp.servers if mcp is not None else []:
            about = server["server"] or {}
            print(safe(f"# MCP server {server['name']} ({server['target']}; "
                       f"{about.get('name', '?')} {about.get('version', '')}, protocol "
                       f"{server['protocol']}): {len(server['tools'])} tool(s)"),
                  file=sys.stderr)
        if args.json:
            print(json.dumps(toolbox.openai_specs(), ensure_ascii=False, indent=2))
        else:
            print(safe(toolbox.describe()) if len(toolbox) else "(no tools)")
    finally:
        if mcp is not None:
            mcp.close()
    return 0


def parse(args: argparse.Namespace) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {args.file}: {exc.strerror or exc}") from exc
    try:
        reply = parse_reply(text)
    except OutputParseError as exc:
        print(safe(f"error ({exc.kind}): {exc.problem}\n\nThe model would be sent:\n{exc}"))
        return 1
    print(f"stage: {reply.stage}")
    print(safe(f"repairs: {', '.join(reply.repairs) or 'none'}"))
    print(safe(f"thought: {reply.thought}"))
    if reply.final_answer is not None:
        print(safe(f"final answer: {reply.final_answer}"))
    for call in reply.tool_calls:
        print(safe(f"tool call: {call.name} {json.dumps(call.args, ensure_ascii=False)}"))
    return 0


def replay(args: argparse.Namespace) -> int:
    runs = read_trace(args.file)
    if args.json:
        data = [r.to_dict() for r in runs]
        print(json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=2))
    else:
        printer = Printer(sys.stdout, usage=True)
        for result in runs:
            for event in replay_events(result):
                printer(event)
    return EXIT_CODES.get(runs[-1].status, 1)
