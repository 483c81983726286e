"""The command line's grammar: the ``react-agent`` parser, one function per command for its
arguments, and the option groups several commands share."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn, TypeAlias

from .._lexical import did_you_mean
from .._version import __version__
from ..harness import safe
from ..policies import CONSTRAINED_MODES, ORDER, REVIEW_MODES, ROUTING_MODES, AnswerFloor


class _Parser(argparse.ArgumentParser):
    """argparse's parser (of the command and of every subcommand), with a usage error told in
    one line and a pointer to ``--help``, instead of the whole usage before it; ``commands``
    holds the subcommands' parsers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, _Parser] = {}

    def error(self, message: str) -> NoReturn:
        self.exit(2, safe(f"{self.prog}: error: {message}") +
                  f"\nSee '{self.prog} --help' for the options.\n")

    def options(self) -> list[argparse.Action]:
        """The options of this parser (its own and its parents'), in the order of --help."""
        return [a for a in self._actions if a.option_strings]

    def parse_command(self, argv: list[str] | None) -> argparse.Namespace:
        """``parse_args``, with words no option takes blamed on the subcommand (whose --help
        lists its options), an unknown option with the closest one it has."""
        args, extra = self.parse_known_args(argv)
        if extra:
            command = self.commands.get(args.command, self)
            known = [o[2:] for action in command.options() for o in action.option_strings
                     if o.startswith("--")]  # long options, compared without their dashes
            unknown = next((w.partition("=")[0] for w in extra if w.startswith("--")), "")
            close = did_you_mean(unknown[2:], known).replace(" '", " '--", 1) if unknown else ""
            command.error(f"unrecognized arguments: {' '.join(extra)}{close}")
        return args


_Commands: TypeAlias = "argparse._SubParsersAction[_Parser]"


def build_parser() -> _Parser:
    """The parser of ``react-agent`` and its commands (``parser.commands``: name -> parser)."""
    parser = _Parser(
        prog="react-agent",
        description="A JSON ReAct agent for models without native function calling.",
    )
    parser.add_argument("--version", action="version", version=f"react-agent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    parser.commands = sub.choices
    backend = _backend_options()
    agent = _agent_options(backend)
    _run_command(sub, agent)
    _chat_command(sub, agent)
    _eval_command(sub, backend)
    _serve_command(sub)
    _tools_command(sub)
    _replay_command(sub)
    _view_command(sub)
    _parse_command(sub)
    return parser


def _backend_options() -> _Parser:
    """The options of the model and the policies, shared by run, chat and eval."""
    backend = _Parser(add_help=False)
    backend.add_argument(
        "--model", default="local",
        help="'local' (the embedded Qwen2.5-Coder-1.5B, default), 'local:PATH.gguf', or a model "
             "name on an OpenAI-compatible server (with --base-url)",
    )
    backend.add_argument("--base-url",
                         help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    backend.add_argument("--api-key", help="API key for --base-url (default: $OPENAI_API_KEY)")
    backend.add_argument("--max-tokens", type=int, default=512, help="cap on one reply (tokens)")
    backend.add_argument(
        "--constrained", choices=CONSTRAINED_MODES, default="off",
        help="constrain replies to the JSON Schema of a valid step: auto (where the backend "
             "can; falls back to plain prompting), on (required) or off (default)",
    )
    backend.add_argument(
        "--routing", choices=ROUTING_MODES, default="off",
        help="show only the tools that best match the task: auto (above 7 tools), lexical "
             "(always) or off (default)",
    )
    backend.add_argument(
        "--with-policy", action="append", default=[], choices=ORDER, metavar="NAME",
        help="add a small-model policy the model does not get by default (repeatable): "
             "routing, unknown_args, relevance, stated_values, missed_call, ground_values, "
             "provenance, announced; held_calls for a small model behind --base-url",
    )
    backend.add_argument(
        "--without-policy", action="append", default=[], choices=ORDER, metavar="NAME",
        help="leave out a small-model policy (repeatable): " + ", ".join(ORDER),
    )
    return backend


def _agent_options(backend: _Parser) -> _Parser:
    """The options of the tools and of a run, shared by run and chat (with ``backend``'s)."""
    agent = _Parser(add_help=False, parents=[backend])
    agent.add_argument(
        "--tools", metavar="MODULE:OBJECT",
        help="a Toolbox to use, e.g. tools.py:toolbox or mypkg.tools:toolbox "
             "(default: calculator, date/time and read-only file tools for this directory)",
    )
    agent.add_argument("--memory", metavar="USER",
                       help="add remember/recall tools with a long-term memory for USER")
    _add_mcp_options(agent)
    agent.add_argument("--max-steps", type=int, default=10, help="step budget (default 10)")
    agent.add_argument(
        "--review", choices=(*REVIEW_MODES, "off"), default="auto",
        help="ask for the final answer once more in a focused call (the tool results and the "
             "task only) and keep that one: auto (default) when the draft is in another "
             "script than the task, states none of the tools' values or restates one "
             "wrongly (a time, a date, a sign, a unit); always; off",
    )
    agent.add_argument(
        "--answer-floor", type=_answer_floor, default=AnswerFloor.floor, metavar="P|off",
        help="until a tool is called, give the final answer when the embedded model rates it at "
             f"least P likely where it chooses its action (default {AnswerFloor.floor}; "
             "off: always the likelier branch)",
    )
    _add_framing_option(agent)
    agent.add_argument(
        "--yes", action="store_true",
        help="approve every call of tools marked requires_approval (default: ask y/N each "
             "time); a call a policy doubts (provenance) of any other tool is declined",
    )
    agent.add_argument("--stream", action="store_true",
                       help="show the model's raw replies as they are generated")
    agent.add_argument("--output-schema", metavar="FILE.json",
                       help="a JSON Schema the final answer must fit: it is read, cleaned and "
                            "validated into a typed value, printed as JSON after the final "
                            "answer (docs: typed-results.md)")
    agent.add_argument("--trace", metavar="FILE",
                       help="write the run to FILE as JSON Lines while it goes (docs: traces.md)")
    _add_otel_options(agent)
    return agent


def _run_command(sub: _Commands, agent: _Parser) -> None:
    """``run``: a task, a file of tasks, or a saved run resumed."""
    run = sub.add_parser("run", parents=[agent], help="run a task and print the thought chain")
    run.add_argument("task", nargs="?", help="the task, in any language")
    run.add_argument("--quiet", action="store_true", help="print only the final answer")
    run.add_argument(
        "--json", action="store_true",
        help="print the RunResult as JSON on stdout (the thought chain goes to stderr)",
    )
    run.add_argument("--save", metavar="FILE",
                     help="save the RunResult to FILE at the end (also after Ctrl-C)")
    run.add_argument("--html", metavar="FILE.html",
                     help="write the run (with --tasks: the results) as an HTML page to FILE at "
                          "the end, also after Ctrl-C (see react-agent view)")
    _add_redact_options(run)
    run.add_argument("--resume", metavar="FILE",
                     help="continue a run saved with --save (or the last run of a --trace file) "
                          "with --max-steps more steps")
    run.add_argument("--tasks", metavar="FILE.jsonl",
                     help="run every task of a JSON Lines file instead (docs: batches.md)")
    run.add_argument("--out", metavar="RESULTS.jsonl",
                     help="with --tasks: where results go (default: FILE.results.jsonl); tasks "
                          "already there are skipped")
    run.add_argument("--fresh-model", action=argparse.BooleanOptionalAction, default=True,
                     help="with --tasks: reset the model before each task (the embedded model's "
                          "KV cache), so no task's replies depend on the task before it "
                          "(default: on)")
    run.add_argument("--concurrency", type=int, metavar="N",
                     help="with --tasks: run N tasks at once (default 1; with --ray: N workers, "
                          "default the cluster's CPUs); pays against a server (--base-url): the "
                          "embedded model answers one request at a time")
    run.add_argument("--model-per-worker", action="store_true",
                     help="with --concurrency: one model per worker instead of one shared "
                          "(the embedded model: each copy takes its memory)")
    run.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                     help="with --tasks: run the tasks on a Ray cluster (ADDRESS, else "
                          "$RAY_ADDRESS, else a new local one on loopback); needs the ray extra")
    run.add_argument("--bad-lines", choices=("stop", "record"), default="stop",
                     help="with --tasks: a line that is not a task stops the batch before any "
                          "task runs (stop, default), or is recorded as failed, with its line "
                          "and problem, while the other tasks run (record)")


def _chat_command(sub: _Commands, agent: _Parser) -> None:
    """``chat``: a conversation of several turns."""
    chat = sub.add_parser("chat", parents=[agent],
                          help="talk with the agent over several turns (/reset, /save, /exit)")
    chat.add_argument("--load", metavar="FILE", help="continue a conversation saved with /save")
    chat.add_argument("--max-history-tokens", type=int, default=6000,
                      help="summarise older turns beyond this many tokens (default 6000)")


def _eval_command(sub: _Commands, backend: _Parser) -> None:
    """``eval``: the first action scored on a suite."""
    evaluate = sub.add_parser(
        "eval", parents=[backend],
        help="score the model's first action on a JSON Lines suite (see examples/eval/)",
    )
    evaluate.add_argument("file", help="the suite, e.g. examples/eval/suite.jsonl")
    evaluate.add_argument("--out", metavar="RESULTS.jsonl",
                          help="per-item results (default: FILE.results.jsonl); items already "
                               "there are skipped")
    evaluate.add_argument("--limit", type=int, help="only the first N items")
    evaluate.add_argument("--category", help="only the items of this category")


def _serve_command(sub: _Commands) -> None:
    """``serve``: the OpenAI-compatible endpoint."""
    serve = sub.add_parser(
        "serve", help="an OpenAI-compatible endpoint (/v1/chat/completions) that gives tools= "
                      "to models that have none",
    )
    serve.add_argument(
        "--model", default="local",
        help="'local' (the embedded model, default), a GGUF file (PATH.gguf or local:PATH), or "
             "the model name on the server at --base-url",
    )
    serve.add_argument("--base-url", help="an OpenAI-compatible backend, e.g. "
                                          "http://localhost:11434/v1 (Ollama)")
    serve.add_argument("--backend-api-key",
                       help="API key for --base-url (default: $OPENAI_API_KEY)")
    serve.add_argument("--max-tokens", type=int, default=512, help="cap on one reply (tokens)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument(
        "--api-key",
        help="require this key from clients (Authorization: Bearer KEY; not empty); needed to "
             "bind an address other than loopback",
    )
    serve.add_argument("--concurrency", type=int,
                       help="requests at the backend at once (default: 1 for the embedded "
                            "model, 8 for --base-url)")
    serve.add_argument("--queue", type=int, default=64,
                       help="requests that may wait; more get 503 (default 64)")
    serve.add_argument("--max-connections", type=int, default=256,
                       help="connections open at once; past it, requests get 503 (default 256)")
    serve.add_argument("--max-parse-retries", type=int, default=3,
                       help="unusable model replies asked again within a request (default 3)")
    _add_framing_option(serve)
    serve.add_argument("--no-thoughts", action="store_true",
                       help="send no content next to tool calls (default: the model's thought)")
    serve.add_argument("--allow-host", action="append", metavar="HOST",
                       help="answer requests for this Host name too (repeatable; default: only "
                            "localhost, 127.0.0.1, ::1 and the bound address without --api-key, "
                            "any host with one)")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="let web pages of this origin (https://app.example) call the "
                            "server from a browser (repeatable; default: none)")
    serve.add_argument("--otel", action="store_true",
                       help="an OpenTelemetry span per request, configured by the OTEL_* "
                            "environment variables (the otel extra; see docs/view.md)")
    serve.add_argument(
        "--with-policy", action="append", default=[], choices=ORDER, metavar="NAME",
        help="add a small-model policy to each turn (repeatable): unknown_args, relevance, "
             "stated_values, missed_call, ground_values, provenance, announced; held_calls "
             "for --base-url",
    )
    serve.add_argument(
        "--without-policy", action="append", default=[], choices=ORDER, metavar="NAME",
        help="leave out a policy a turn has by default (repeatable), e.g. held_calls",
    )


def _add_framing_option(parser: _Parser) -> None:
    parser.add_argument(
        "--frame-observations", choices=("on", "off"), default="on",
        help="send each tool result between <data ID> and </data ID> lines, with anything "
             "inside that could pass for the frame, a chat role or a protocol line made "
             "harmless; the observation's header says it is data, never instructions (default on)",
    )


def _tools_command(sub: _Commands) -> None:
    """``tools``: the tools as the model sees them."""
    tools = sub.add_parser("tools", help="print the tools as the model sees them (--tools, --mcp)")
    tools.add_argument("--tools", metavar="MODULE:OBJECT",
                       help="a Toolbox, as for run (default: the built-in tools, or none with "
                            "--mcp)")
    tools.add_argument("--json", action="store_true", help="print OpenAI tool specs as JSON")
    _add_mcp_options(tools)


def _replay_command(sub: _Commands) -> None:
    """``replay``: a saved trace as the thought chain."""
    replay = sub.add_parser("replay", help="print a saved trace as the thought chain")
    replay.add_argument("file", help="a trace written with --trace")
    replay.add_argument("--json", action="store_true", help="print the RunResult(s) as JSON")


def _view_command(sub: _Commands) -> None:
    """``view``: traces or results files as one HTML page."""
    view = sub.add_parser("view", help="write a trace or a results file of run --tasks as one "
                                       "HTML page to open in a browser (offline)")
    view.add_argument("files", nargs="+", metavar="FILE",
                      help="traces (--trace) or results files (run --tasks); several make one "
                           "page with an index")
    view.add_argument("-o", "--out", metavar="FILE.html",
                      help="the page (default: the first FILE with .html)")
    _add_redact_options(view)


def _parse_command(sub: _Commands) -> None:
    """``parse``: what the parser reads in a reply."""
    parse = sub.add_parser("parse", help="show what the parser extracts from a raw model reply")
    parse.add_argument("file", help="a file holding the reply, or - for standard input")


def _answer_floor(text: str) -> float | None:
    """``--answer-floor``: a probability in (0, 1], or ``off``."""
    if text == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a probability in (0, 1] or off, got {text!r}")
    return value


def _add_mcp_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mcp", action="append", default=[], metavar="SERVER",
        help="an MCP server whose tools the model may use: a command line in quotes "
             "(\"python -m mcp_server_time\") or a streamable HTTP URL (repeatable; without "
             "--tools, the model gets only the servers' tools)",
    )
    parser.add_argument("--mcp-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="seconds one MCP tool call may take (default 60)")
    parser.add_argument("--mcp-allow", action="append", metavar="PATTERN",
                        help="use only the MCP tools matching this name pattern (repeatable; "
                             "fnmatch: 'get_*')")
    parser.add_argument("--mcp-deny", action="append", default=[], metavar="PATTERN",
                        help="leave out the MCP tools matching this name pattern (repeatable)")


def _add_redact_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redact", action="append", default=[], metavar="KEY,...",
                        help="in the HTML page, mask the values of these argument names "
                             "wherever they appear (repeatable)")
    parser.add_argument("--redact-pattern", action="append", default=[], metavar="REGEX",
                        help="in the HTML page, also mask what matches REGEX (repeatable; API "
                             "keys such as sk-... and Bearer tokens are always masked)")


def _add_otel_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--otel", action="store_true",
                        help="emit OpenTelemetry spans (run, model calls, tool calls), configured "
                             "by the OTEL_* environment variables (the otel extra; see "
                             "docs/view.md)")
    parser.add_argument("--otel-content", action="store_true",
                        help="with --otel: also record prompts, replies, tool arguments and "
                             "results in the spans (they may hold personal or secret data)")
