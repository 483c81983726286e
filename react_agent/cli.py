"""The ``react-agent`` command: ``run`` a task, or ``parse`` a raw reply to see what the parser
makes of it. Exit codes: 0 final answer, 1 the run ended otherwise (or the reply was unusable),
2 usage or configuration error, 130 interrupted."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .agent import Agent, AgentConfig
from .display import Printer
from .errors import ConfigError, OutputParseError
from .models.base import ChatModel
from .parser import parse_reply
from .toolbox import Tool, Toolbox
from .trace import TraceWriter, read_trace, replay_events

EXIT_CODES = {"final_answer": 0, "interrupted": 130}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="react-agent",
        description="A JSON ReAct agent for models without native function calling.",
    )
    parser.add_argument("--version", action="version", version=f"react-agent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a task and print the thought chain")
    run.add_argument("task", help="the task, in any language")
    run.add_argument(
        "--model", default="local",
        help="'local' (the embedded Qwen2.5-Coder-1.5B, default), 'local:PATH.gguf', or a model "
             "name on an OpenAI-compatible server (with --base-url)",
    )
    run.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    run.add_argument("--api-key", help="API key for --base-url (default: $OPENAI_API_KEY)")
    run.add_argument(
        "--tools", metavar="MODULE:OBJECT",
        help="a Toolbox to use, e.g. examples/tools.py:seed003 or mypkg.tools:toolbox "
             "(default: calculator, date/time and read-only file tools for this directory)",
    )
    run.add_argument("--max-steps", type=int, default=10, help="step budget (default 10)")
    run.add_argument("--max-tokens", type=int, default=512, help="cap on one reply (tokens)")
    run.add_argument(
        "--yes", action="store_true",
        help="approve every call of tools marked requires_approval (default: ask y/N each time)",
    )
    run.add_argument("--quiet", action="store_true", help="print only the final answer")
    run.add_argument("--stream", action="store_true",
                     help="show the model's raw replies as they are generated")
    run.add_argument("--trace", metavar="FILE",
                     help="write the run to FILE as JSON Lines while it goes (see README)")
    run.add_argument(
        "--json", action="store_true",
        help="print the RunResult as JSON on stdout (the thought chain goes to stderr)",
    )

    replay = sub.add_parser("replay", help="print a saved trace as the thought chain")
    replay.add_argument("file", help="a trace written with --trace")
    replay.add_argument("--json", action="store_true", help="print the RunResult(s) as JSON")

    parse = sub.add_parser("parse", help="show what the parser extracts from a raw model reply")
    parse.add_argument("file", help="a file holding the reply, or - for standard input")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "parse":
            return _parse(args)
        if args.command == "replay":
            return _replay(args)
        return _run(args)
    except ConfigError as exc:
        print(f"react-agent: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("react-agent: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    toolbox = load_toolbox(args.tools) if args.tools else _default_toolbox()
    model = make_model(args.model, args.base_url, args.api_key, args.max_tokens)
    callbacks: list[Any] = []
    if not args.quiet:
        out = sys.stderr if args.json else sys.stdout
        callbacks.append(Printer(out, tokens=args.stream, usage=True))
    trace = TraceWriter(args.trace, model=model.name) if args.trace else None
    if trace:
        callbacks.append(trace)
    approver = _approve_all if args.yes else _ask_user
    config = AgentConfig(max_steps=args.max_steps, stream=args.stream)
    agent = Agent(model, toolbox, config=config, approver=approver, callbacks=callbacks)
    try:
        result = agent.run(args.task)
    finally:
        if trace:
            trace.close()
    if args.json:
        print(result.to_json())
    elif args.quiet:
        print(result.final_answer if result.final_answer is not None else result.error)
    return EXIT_CODES.get(result.status, 1)


def _replay(args: argparse.Namespace) -> int:
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


def _approve_all(tool: Tool, args: dict[str, Any]) -> bool:
    return True


def _ask_user(tool: Tool, args: dict[str, Any]) -> bool:
    """Ask on the terminal before a tool marked ``requires_approval`` runs; only y/yes approves
    (an empty line or end of input declines)."""
    shown = json.dumps(args, ensure_ascii=False)
    print(f"Allow {tool.name} {shown}? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):
        print(file=sys.stderr)
    return answer.strip().lower() in ("y", "yes")


def _parse(args: argparse.Namespace) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {args.file}: {exc.strerror or exc}") from exc
    try:
        reply = parse_reply(text)
    except OutputParseError as exc:
        print(f"error ({exc.kind}): {exc.problem}\n\nThe model would be sent:\n{exc}")
        return 1
    print(f"stage: {reply.stage}")
    print(f"repairs: {', '.join(reply.repairs) or 'none'}")
    print(f"thought: {reply.thought}")
    if reply.final_answer is not None:
        print(f"final answer: {reply.final_answer}")
    for call in reply.tool_calls:
        print(f"tool call: {call.name} {json.dumps(call.args, ensure_ascii=False)}")
    return 0


def make_model(
    spec: str, base_url: str | None, api_key: str | None, max_tokens: int = 512
) -> ChatModel:
    """The model for ``--model``/``--base-url``/``--api-key``.

    Raises:
        ConfigError: the embedded model is asked for but not installed (the message says how to
            get it or how to use a server instead).
    """
    from .models import LlamaCppModel, OpenAIChatModel

    if base_url:
        name = None if spec == "local" else spec
        return OpenAIChatModel(name, base_url, api_key, max_tokens=max_tokens)
    if spec == "local" or spec.startswith("local:"):
        path = spec.partition(":")[2] or None
        model = LlamaCppModel(path, max_tokens=max_tokens, progress=_progress)
        print(f"Loading {model.name} ...", file=sys.stderr, flush=True)
        model.load()
        return model
    return OpenAIChatModel(spec, None, api_key, max_tokens=max_tokens)


def load_toolbox(spec: str) -> Toolbox:
    """Import ``MODULE:OBJECT`` (or ``path/to/file.py:OBJECT``) and return the Toolbox there.

    ``OBJECT`` may be a Toolbox or a function returning one.

    Raises:
        ConfigError: the module, the attribute or the Toolbox is missing.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"--tools expects MODULE:OBJECT or FILE.py:OBJECT, got {spec!r}.")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name).resolve()
            if not path.is_file():
                raise ConfigError(f"--tools: no file {path}.")
            sys.path.insert(0, str(path.parent))
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ConfigError:
        raise
    except Exception as exc:  # ImportError, SyntaxError, ToolDefinitionError, ...
        raise ConfigError(
            f"--tools: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if not hasattr(module, attr):
        raise ConfigError(f"--tools: {spec!r}: the module has no object {attr!r}.")
    obj: Any = getattr(module, attr)
    if obj is not None and not isinstance(obj, Toolbox) and callable(obj):
        obj = obj()
    if not isinstance(obj, Toolbox):
        raise ConfigError(f"--tools: {spec!r} is not a Toolbox (got {type(obj).__name__}).")
    return obj


def _default_toolbox() -> Toolbox:
    from .builtin_tools import builtin_toolbox

    return builtin_toolbox()


def _progress(done: int, total: int) -> None:
    """A progress line on stderr while the embedded weights are assembled (first run only)."""
    end = "\n" if done >= total else ""
    print(f"\rAssembling the model weights: {done * 100 // total:3d}% "
          f"({done >> 20} of {total >> 20} MiB)", end=end, file=sys.stderr, flush=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
