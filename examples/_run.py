"""What the examples share: the three ways to run one, and canned replies for ``--scripted``.

    python examples/NAME.py                            # the embedded model (the local extra)
    python examples/NAME.py --base-url URL [--model M] # any OpenAI-compatible server
    python examples/NAME.py --scripted                 # canned replies: no model needed

A canned reply is what a model would write: one JSON object with a ``thought`` and an
``action``, either a tool call (:func:`reply_call`, or several at once with :func:`reply_calls`)
or the final answer (:func:`reply_answer`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from react_agent import ChatModel, ConfigError, ScriptedModel
from react_agent.models import LlamaCppModel, OpenAIChatModel


def command_line(
    doc: str | None, options: Callable[[argparse.ArgumentParser], Any] | None = None,
    base_url: str | None = None, argv: Sequence[str] | None = None,
) -> argparse.Namespace:
    """The example's arguments: ``--scripted``, ``--base-url`` (default ``base_url``: none,
    the embedded model), ``--model`` and any that ``options(parser)`` adds; ``doc`` (the
    example's docstring) is its ``--help``."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scripted", action="store_true",
                        help="run on canned replies (ScriptedModel): no model needed")
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. "
                        f"{base_url or 'http://localhost:11434/v1'}")
    parser.add_argument("--model", help="the model name on that server (default: its first)")
    if options:
        options(parser)
    args = parser.parse_args(argv)
    if args.scripted and (args.base_url or args.model):
        parser.error("--scripted runs on canned replies: leave out --base-url and --model")
    if args.model and not (args.base_url or base_url):
        parser.error("--model needs --base-url")
    args.base_url = args.base_url or base_url
    return args


def pick_model(args: argparse.Namespace, canned: Sequence[str]) -> ChatModel:
    """The model ``args`` ask for: ``canned`` replies, a server, or the embedded model (loaded
    now; the first run assembles its weights, which takes a while)."""
    if args.scripted:
        return ScriptedModel(canned)
    if args.base_url:
        return OpenAIChatModel(model=args.model, base_url=args.base_url)
    try:
        model = LlamaCppModel()
        print(f"Loading {model.name} ...", file=sys.stderr, flush=True)
        model.load()
    except ConfigError as exc:  # not installed: the message says how to get it
        raise SystemExit(f"error: {exc}\n(or try --scripted, or --base-url URL)") from exc
    return model


def reply_call(thought: str, tool: str, **args: Any) -> str:
    """A canned reply that calls ``tool`` with ``args``."""
    return _reply(thought, {"name": tool, "args": args})


def reply_calls(thought: str, *calls: tuple[str, dict[str, Any]]) -> str:
    """A canned reply that makes independent calls at once: ``(tool, args)`` pairs."""
    return _reply(thought, [{"name": tool, "args": args} for tool, args in calls])


def reply_answer(thought: str, answer: str) -> str:
    """A canned reply that gives the final answer."""
    return _reply(thought, {"final_answer": answer})


def _reply(thought: str, action: Any) -> str:
    return json.dumps({"thought": thought, "action": action}, ensure_ascii=False)
