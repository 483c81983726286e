"""The ``react-agent`` command: ``run`` a task (or a JSON Lines file of tasks, or a saved run to
resume), ``chat`` over several turns, ``eval`` the first action on a suite, ``replay`` a trace,
``serve`` an OpenAI-compatible endpoint that gives ``tools=`` to models without function calling,
or ``parse`` a raw reply to see what the parser makes of it. Exit codes: 0 final answer (for
``eval``: the eval ran), 1 the run ended otherwise (or the reply was unusable), 2 usage or
configuration error, 130 interrupted."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import shlex
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from ._lexical import did_you_mean
from .agent._agent import Agent
from .config import AgentConfig
from .errors import ConfigError, ModelError, OutputParseError, install_hint
from .harness._batch import (
    RERUN_STATUSES,
    BatchTask,
    WorkerLocal,
    load_tasks,
    run_batch,
    summary_table,
)
from .harness._display import Printer, progress_bar, safe
from .harness._evaluation import load_suite, report, run_eval, scored
from .harness._otel import OtelCallback, OtelMiddleware, global_tracer_provider
from .harness._trace import TraceWriter, read_trace, replay_events
from .harness._view import SECRET_PATTERNS, ViewEntry, load_view, write_view
from .models._openai_chat import OpenAIChatModel
from .models.base import ChatModel
from .parsing._reply import parse_reply
from .policies import (
    BUILT_IN,
    CONSTRAINED_MODES,
    ORDER,
    REVIEW_MODES,
    ROUTING_MODES,
    AnswerFloor,
    Constrained,
    Policy,
    Review,
    Routing,
    default_policies,
)
from .tools import Tool, Toolbox, load_toolbox
from .types import RunResult

EXIT_CODES = {"final_answer": 0, "interrupted": 130}


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


def build_parser() -> _Parser:
    parser = _Parser(
        prog="react-agent",
        description="A JSON ReAct agent for models without native function calling.",
    )
    parser.add_argument("--version", action="version", version=f"react-agent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    parser.commands = sub.choices

    backend = _Parser(add_help=False)  # options shared by run, chat and eval
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
        help="add a small-model policy the model does not get by default (repeatable), e.g. "
             "held_calls for a small model behind --base-url",
    )
    backend.add_argument(
        "--without-policy", action="append", default=[], choices=ORDER, metavar="NAME",
        help="leave out a small-model policy (repeatable): " + ", ".join(ORDER),
    )

    agent = _Parser(add_help=False, parents=[backend])  # run and chat
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
    agent.add_argument(
        "--yes", action="store_true",
        help="approve every call of tools marked requires_approval (default: ask y/N each time)",
    )
    agent.add_argument("--stream", action="store_true",
                       help="show the model's raw replies as they are generated")
    agent.add_argument("--trace", metavar="FILE",
                       help="write the run to FILE as JSON Lines while it goes (docs: traces.md)")
    _add_otel_options(agent)

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

    chat = sub.add_parser("chat", parents=[agent],
                          help="talk with the agent over several turns (/reset, /save, /exit)")
    chat.add_argument("--load", metavar="FILE", help="continue a conversation saved with /save")
    chat.add_argument("--max-history-tokens", type=int, default=6000,
                      help="summarise older turns beyond this many tokens (default 6000)")

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

    tools = sub.add_parser("tools", help="print the tools as the model sees them (--tools, --mcp)")
    tools.add_argument("--tools", metavar="MODULE:OBJECT",
                       help="a Toolbox, as for run (default: the built-in tools, or none with "
                            "--mcp)")
    tools.add_argument("--json", action="store_true", help="print OpenAI tool specs as JSON")
    _add_mcp_options(tools)

    replay = sub.add_parser("replay", help="print a saved trace as the thought chain")
    replay.add_argument("file", help="a trace written with --trace")
    replay.add_argument("--json", action="store_true", help="print the RunResult(s) as JSON")

    view = sub.add_parser("view", help="write a trace or a results file of run --tasks as one "
                                       "HTML page to open in a browser (offline)")
    view.add_argument("files", nargs="+", metavar="FILE",
                      help="traces (--trace) or results files (run --tasks); several make one "
                           "page with an index")
    view.add_argument("-o", "--out", metavar="FILE.html",
                      help="the page (default: the first FILE with .html)")
    _add_redact_options(view)

    parse = sub.add_parser("parse", help="show what the parser extracts from a raw model reply")
    parse.add_argument("file", help="a file holding the reply, or - for standard input")
    return parser


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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_command(argv)
    _show_warnings()
    commands = {"parse": _parse, "replay": _replay, "chat": _chat, "run": _run, "eval": _eval,
                "serve": _serve, "tools": _tools_command, "view": _view}
    try:
        return commands[args.command](args)
    except ConfigError as exc:
        print(f"react-agent: {safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("react-agent: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`react-agent tools | head`): no traceback, and none at exit
        # when Python flushes stdout (https://docs.python.org/3/library/signal.html#note-on-sigpipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _show_warnings() -> None:
    """The library's warnings (e.g. the embedded model's safe CPU configuration), one line each
    on stderr."""
    logger = logging.getLogger("react_agent")
    if not any(getattr(h, "react_agent_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("react-agent: %(message)s"))
        handler.setLevel(logging.WARNING)
        handler.react_agent_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def _run(args: argparse.Namespace) -> int:
    if sum(map(bool, (args.task, args.tasks, args.resume))) != 1:
        raise ConfigError("run needs one of: a task, --tasks FILE.jsonl, --resume FILE.")
    if args.tasks:
        return _run_tasks(args)
    earlier = _load_run(args.resume) if args.resume else None
    printer = None if args.quiet else Printer(
        sys.stderr if args.json else sys.stdout, tokens=args.stream, usage=True
    )
    with _Session(args, printer) as session:
        agent = session.agent()
        result = agent.resume(earlier) if earlier else agent.run(args.task)
    if args.save:
        result.save(args.save)
    if result.status == "interrupted" and (args.save or args.trace):
        print(safe(f"To go on from here: {_resume_command(args)}"), file=sys.stderr)
    if args.html:
        _write_html(args, ViewEntry("react-agent run", [result], model=session.model.name))
    if args.json:
        print(result.to_json())
    elif args.quiet:
        print(safe(result.final_answer if result.final_answer is not None
                   else result.error or ""))
    return EXIT_CODES.get(result.status, 1)


def _resume_command(args: argparse.Namespace) -> str:
    """The command line that continues this run: ``run --resume`` of its trace (appended to)
    or of its saved run, with the options given to this one (not ``--api-key``: a secret is not
    printed)."""
    words = ["react-agent", "run", "--resume", args.trace or args.save]
    for action in build_parser().commands["run"].options():
        value, flag = getattr(args, action.dest, action.default), action.option_strings[0]
        if action.dest in ("help", "resume", "api_key") or value == action.default:
            continue
        if isinstance(action, argparse.BooleanOptionalAction):
            words.append(flag if value else f"--no-{flag[2:]}")
        elif action.nargs == 0:  # store_true
            words.append(flag)
        elif isinstance(value, list):  # repeatable
            words += [w for item in value for w in (flag, str(item))]
        elif value == action.const:  # --ray with no address
            words.append(flag)
        else:
            words += [flag, "off" if value is None else str(value)]
    shown = shlex.join(words)
    return shown + (" --api-key ..." if args.api_key else "")


def _load_run(path: str) -> RunResult:
    """A RunResult saved with --save / --json, or the last run of a trace file."""
    if path.endswith(".jsonl"):
        return read_trace(path)[-1]
    return RunResult.load(path)


def _run_tasks(args: argparse.Namespace) -> int:
    tasks = load_tasks(args.tasks, strict=args.bad_lines == "stop")
    out = args.out or str(Path(args.tasks).with_suffix("")) + ".results.jsonl"
    for bad in (t for t in tasks if t.problem):  # --bad-lines record: the others run
        print(safe(f"react-agent: {args.tasks}, line {bad.line}: {bad.problem} (recorded as "
                   "failed; the other tasks run)"), file=sys.stderr)
    if args.concurrency is not None and args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1.")
    if (args.ray is not None or (args.concurrency or 1) > 1) and args.trace:
        raise ConfigError("--trace writes one run after another: leave it out with "
                          "--concurrency or --ray (each record holds its whole run).")
    if args.ray is not None:
        if args.mcp:
            raise ConfigError("--mcp cannot be used with --ray: give the workers tools as "
                              "MODULE:OBJECT.")
        from functools import partial

        from .harness._ray import run_batch_ray

        report = run_batch_ray(tasks, out, partial(_batch_agents, args),
                               address=args.ray or None, workers=args.concurrency,
                               progress=_show_progress, fresh_model=args.fresh_model)
    else:
        for spec in {t.tools for t in tasks if t.tools}:  # a bad tools entry fails before loading
            load_toolbox(spec)
        sessions = WorkerLocal(lambda: _Session(args, None))
        shared = None if args.model_per_worker else sessions.get()

        def make_agent(task: BatchTask) -> Agent:  # fresh tools: side effects start clean
            session = shared or sessions.get()
            return session.agent(session.toolbox(task.tools), max_steps=task.max_steps)

        try:
            report = run_batch(tasks, out, make_agent, progress=_show_progress,
                               fresh_model=args.fresh_model, concurrency=args.concurrency or 1)
        finally:
            for session in sessions.instances:
                session.__exit__()
    print(file=sys.stderr)
    if report.skipped:
        print(f"{report.skipped} task(s) already in {out} were skipped.")
    for line in summary_table(report.records):
        print(safe(line))
    if any(r.get("shape") for r in report.records):
        print()
        for line in summary_table(report.records, by="shape"):
            print(safe(line))
    failed = [r for r in report.records if r.get("passed") is False]
    if failed:
        print(f"\nFailed ({len(failed)}):")
        for record in failed:
            problems = "; ".join(record.get("problems") or record["missing"])
            print(safe(f"  {record['id']}: {problems}"))
    again = Counter(r["status"] for r in report.records
                    if r.get("status") in RERUN_STATUSES - {"bad_task"})
    if again:
        print(f"\n{', '.join(f'{n} {status}' for status, n in sorted(again.items()))}: run the "
              "same command again to run these tasks again.")
    print(f"Results: {out}")
    if args.html and Path(out).exists():
        _write_html(args, load_view(out))
    if report.interrupted:
        print("Interrupted: run the same command again to go on.", file=sys.stderr)
        return 130
    ok = all(r["status"] == "final_answer" and r["passed"] is not False for r in report.records)
    return 0 if ok else 1


def _batch_agents(args: argparse.Namespace) -> Callable[[BatchTask], Agent]:
    """The agents of ``run --tasks`` on one Ray worker (``--ray``): this command line's model
    and policies, set up once; fresh tools for each task. Tools marked ``requires_approval``
    are declined there unless ``--yes`` (a worker has no terminal to ask on)."""
    session = _Session(args, None)
    return lambda task: session.agent(session.toolbox(task.tools), max_steps=task.max_steps)


def _chat(args: argparse.Namespace) -> int:
    from .agent._conversation import Conversation

    printer = Printer(sys.stdout, tokens=args.stream, show_task=False)
    with _Session(args, printer) as session:
        agent = session.agent()
        options = {"max_history_tokens": args.max_history_tokens}
        chat = (
            Conversation.load(agent, args.load, **options) if args.load
            else agent.chat(**options)
        )
        if args.load:
            print(f"(continuing {args.load}: {len(chat.turns)} earlier turn(s))")
        print("Chat with the agent. Commands: /reset, /save FILE, /exit.", file=sys.stderr)
        while True:
            try:
                line = input("You: ").strip()
            except (EOFError, KeyboardInterrupt):
                print()
                return 0
            if line in ("/exit", "/quit"):
                return 0
            if line == "/reset":
                chat.reset()
                print("(the conversation was cleared)")
            elif line.startswith("/save"):
                path = line[len("/save"):].strip()
                if path:
                    chat.save(path)
                    print(f"(saved to {path})")
                else:
                    print("(usage: /save FILE)")
            elif line.startswith("/"):
                print("(commands: /reset, /save FILE, /exit)")
            elif line:
                for _ in chat.iter(line):
                    pass


def _eval(args: argparse.Namespace) -> int:
    items = [i for i in load_suite(args.file) if args.category in (None, i.category)]
    if not items:
        raise ConfigError(f"{args.file} has no items of category {args.category!r}.")
    items = items[: args.limit]
    out = args.out or str(Path(args.file).with_suffix("")) + ".results.jsonl"
    model = make_model(args.model, args.base_url, args.api_key, args.max_tokens)
    config = AgentConfig(
        max_steps=1, max_parse_retries=0,
        policies=cli_policies(model, args, off=("best_effort",)),
    )
    settings = {"model": model.name, "base_url": args.base_url,
                "constrained": args.constrained, "routing": args.routing}
    done = len(scored(items, out, settings))
    records = run_eval(
        items, out, lambda toolbox: Agent(model, toolbox, config=config, approver=_approve_all),
        progress=_show_progress, settings=settings,
    )
    print(file=sys.stderr)
    if done:
        print(f"{done} item(s) already scored with these settings in {out} were skipped.")
    for line in report(records):
        print(line)
    print(f"Results: {out}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    if args.api_key is not None and not args.api_key.strip():
        raise ConfigError("--api-key is empty: give the key clients must send (Authorization: "
                          "Bearer KEY), or leave --api-key out on a loopback address.")
    if not args.api_key and not _is_loopback(args.host):
        raise ConfigError(
            f"--host {args.host} exposes the model beyond this machine: also pass --api-key KEY "
            "(clients then send Authorization: Bearer KEY)."
        )
    try:
        import uvicorn

        from .serve._app import LOOPBACK_HOSTS, ServeConfig, create_app, server_options
    except ImportError as exc:
        raise ConfigError(
            f"serve needs the serve extra ({exc.name} is missing): {install_hint('serve')}."
        ) from exc
    config = ServeConfig(
        api_key=args.api_key, concurrency=args.concurrency, queue=args.queue,
        max_connections=args.max_connections,
        max_parse_retries=args.max_parse_retries, thoughts=not args.no_thoughts,
        allowed_hosts=None if args.allow_host is None else
        (*LOOPBACK_HOSTS, *args.allow_host),
        allowed_origins=tuple(args.allow_origin),
    )
    spec = args.model
    if not args.base_url and spec.endswith(".gguf") and not spec.startswith("local:"):
        spec = f"local:{spec}"  # serve --model FILE.gguf
    model = make_model(spec, args.base_url, args.backend_api_key, args.max_tokens)
    if isinstance(model, OpenAIChatModel):
        try:
            model.model_name()  # which model the server serves, asked now if not given
        except ModelError as exc:
            print(f"react-agent: warning: {safe(str(exc))}", file=sys.stderr)
    app: Any = create_app(model, config)
    if args.otel:
        app = OtelMiddleware(app, global_tracer_provider(), model=model.name)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Serving {model.name} at http://{shown}:{args.port}/v1 (OpenAI-compatible; "
          "Ctrl-C stops it)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", **server_options(config))
    return 0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Session:
    """The model, tools, approver and callbacks from the command line, for one or more agents;
    closes the trace file at the end."""

    def __init__(self, args: argparse.Namespace, printer: Printer | None) -> None:
        self.args = args
        self.mcp = _open_mcp(args)  # a server that cannot start fails before loading
        self.default_tools = self.toolbox(args.tools)  # a bad --tools fails before loading
        self.model = make_model(args.model, args.base_url, args.api_key, args.max_tokens,
                                quiet=printer is None)
        self.policies = cli_policies(self.model, args)
        self.callbacks: list[Any] = [printer] if printer else []
        resumed = getattr(args, "resume", None)
        same = bool(args.trace and resumed and _same_file(args.trace, resumed))
        self.trace = TraceWriter(args.trace, model=self.model.name, append=same) \
            if args.trace else None
        if self.trace:
            self.callbacks.append(self.trace)
        if getattr(args, "otel", False) or getattr(args, "otel_content", False):
            self.callbacks.append(OtelCallback(global_tracer_provider(), model=self.model.name,
                                               capture_content=args.otel_content))

    def toolbox(self, spec: str | None) -> Toolbox:
        toolbox = load_toolbox(spec) if spec else Toolbox() if self.mcp is not None \
            else _default_toolbox()
        if self.args.memory:
            from .tools.builtin import memory_tools

            toolbox = Toolbox([*toolbox.values(), *memory_tools(self.args.memory).values()])
        return _with_mcp(toolbox, self.mcp)

    def agent(self, toolbox: Toolbox | None = None, max_steps: int | None = None) -> Agent:
        config = AgentConfig(
            max_steps=max_steps or self.args.max_steps, stream=self.args.stream,
            policies=self.policies,
        )
        approver = _approve_all if self.args.yes else _ask_user
        return Agent(self.model, toolbox or self.default_tools, config=config,
                     approver=approver, callbacks=self.callbacks)

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.mcp is not None:
            self.mcp.close()
        if self.trace:
            self.trace.close()


def cli_policies(model: ChatModel, args: argparse.Namespace, off: tuple[str, ...] = ()
                 ) -> list[Policy]:
    """The policies the command line asks for: the defaults for ``model``, changed by
    ``--with-policy``, ``--constrained``, ``--routing``, ``--review``, ``--answer-floor`` and
    ``--without-policy`` (and ``off``)."""
    use: list[Policy] = [BUILT_IN[name]() for name in args.with_policy]
    use.append(Constrained(mode=args.constrained))
    drop = [*off, *args.without_policy]
    if args.routing != "off":
        use.append(Routing(mode=args.routing))
    review = getattr(args, "review", "auto")
    if review == "off":
        drop.append("review")
    else:
        use.append(Review(mode=review))
    floor = getattr(args, "answer_floor", AnswerFloor.floor)
    if floor is None:
        drop.append("answer_floor")
    else:
        use.append(AnswerFloor(floor=floor))
    return default_policies(model, use=[p for p in use if p.name not in drop], off=drop)


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name the same file (``--trace`` written to the trace resumed)."""
    try:
        return Path(a).resolve() == Path(b).resolve() or Path(a).samefile(b)
    except OSError:
        return False


def _show_progress(done: int, total: int, task: Any, record: dict[str, Any] | None) -> None:
    if record is None:
        state = f"{task.id}: running"
    else:
        outcome = record.get("status") or ("correct" if record.get("correct") else "wrong")
        state = f"{task.id}: {outcome}"
    print(f"\r{progress_bar(done, total)} {safe(state[:50]):<50}", end="", file=sys.stderr,
          flush=True)


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


# -- the HTML view (view, run --html) and OpenTelemetry (--otel) -----------------------------
def _view(args: argparse.Namespace) -> int:
    out = Path(args.out or Path(args.files[0]).with_suffix(".html"))
    if any(_same_file(str(out), f) for f in args.files):
        raise ConfigError(f"{out} is one of the files to view: name another page with -o.")
    _write_html(args, load_view(*args.files), out)
    return 0


def _write_html(args: argparse.Namespace, items: Any, out: Path | None = None) -> None:
    """Write the view of ``items`` to ``out`` (``--html``), masking what ``--redact`` and
    ``--redact-pattern`` name."""
    keys = [k for value in args.redact for k in value.split(",") if k.strip()]
    path = write_view(out or args.html, items, redact=keys,
                      patterns=[*SECRET_PATTERNS, *args.redact_pattern])
    print(safe(f"View: {path} ({path.stat().st_size / 1024:.0f} KB; open it in a browser)"),
          file=sys.stderr)


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


def _approve_all(tool: Tool, args: dict[str, Any]) -> bool:
    return True


def _ask_user(tool: Tool, args: dict[str, Any]) -> bool:
    """Ask on the terminal before a tool marked ``requires_approval`` runs; only y/yes approves
    (an empty line or end of input declines)."""
    shown = json.dumps(args, ensure_ascii=False)
    with _ASKING:  # one question at a time (--concurrency)
        print(safe(f"Allow {tool.name} {shown}? [y/N] "), end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline()
        if not answer.endswith("\n"):
            print(file=sys.stderr)
    return answer.strip().lower() in ("y", "yes")


_ASKING = threading.Lock()


def _parse(args: argparse.Namespace) -> int:
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


def make_model(
    spec: str, base_url: str | None, api_key: str | None, max_tokens: int = 512,
    quiet: bool = False,
) -> ChatModel:
    """The model for ``--model``/``--base-url``/``--api-key``.

    Raises:
        ConfigError: the embedded model is asked for but not installed (the message says how to
            get it or how to use a server instead).
    """
    from .models import LlamaCppModel

    if base_url:
        name = None if spec == "local" else spec
        return OpenAIChatModel(name, base_url, api_key, max_tokens=max_tokens)
    if spec == "local" or spec.startswith("local:"):
        path = spec.partition(":")[2] or None
        model = LlamaCppModel(path, max_tokens=max_tokens, progress=_progress)
        if not quiet:
            print(f"Loading {model.name} ...", file=sys.stderr, flush=True)
        model.load()
        return model
    return OpenAIChatModel(spec, None, api_key, max_tokens=max_tokens)


def _default_toolbox() -> Toolbox:
    from .tools.builtin import builtin_toolbox

    return builtin_toolbox()


# -- MCP servers (--mcp) -----------------------------------------------------------------------
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


def _open_mcp(args: argparse.Namespace) -> Any:
    """The MCPToolbox of ``--mcp`` (its servers started), or ``None`` without ``--mcp``."""
    if not getattr(args, "mcp", None):
        return None
    from .tools import MCPToolbox

    if args.mcp_timeout <= 0:
        raise ConfigError("--mcp-timeout must be > 0 seconds.")
    return MCPToolbox(*args.mcp, timeout=args.mcp_timeout, allow=args.mcp_allow,
                      deny=args.mcp_deny)


def _with_mcp(toolbox: Toolbox, mcp: Toolbox | None) -> Toolbox:
    """``toolbox`` with the MCP servers' tools added (a name in both is a ConfigError)."""
    if mcp is None:
        return toolbox
    both = sorted(set(toolbox) & set(mcp))
    if both:
        raise ConfigError(
            f"--mcp: the tool name(s) {', '.join(both)} are both in --tools/--memory and on an MCP "
            "server; leave the server's out with --mcp-deny NAME.")
    return Toolbox([*toolbox.values(), *mcp.values()])


def _tools_command(args: argparse.Namespace) -> int:
    """``react-agent tools``: the toolbox as the model sees it (the system prompt's tool list),
    or as OpenAI tool specs with ``--json``; a line per MCP server on stderr."""
    mcp = _open_mcp(args)
    try:
        base = load_toolbox(args.tools) if args.tools else Toolbox() if mcp is not None \
            else _default_toolbox()
        toolbox = _with_mcp(base, mcp)
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


def _progress(done: int, total: int) -> None:
    """A progress line on stderr while the embedded weights are assembled (first run only)."""
    end = "\n" if done >= total else ""
    print(f"\rAssembling the model weights: {done * 100 // total:3d}% "
          f"({done >> 20} of {total >> 20} MiB)", end=end, file=sys.stderr, flush=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
