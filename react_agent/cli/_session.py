"""What the commands that run the agent set up from the command line: the model
(``--model``, ``--base-url``), the tools (``--tools``, ``--memory``, ``--mcp``), the policies,
the approval of tools marked ``requires_approval``, and the callbacks (the printer, ``--trace``,
``--otel``); the exit code of a run's status."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

from .._persist import loads
from ..agent import Agent
from ..config import AgentConfig
from ..engine import output_spec
from ..errors import ConfigError
from ..harness import OtelCallback, Printer, TraceWriter, global_tracer_provider, progress_bar, safe
from ..models import ChatModel, OpenAIChatModel
from ..policies import BUILT_IN, AnswerFloor, Constrained, Policy, Review, Routing, default_policies
from ..tools import Tool, Toolbox, load_toolbox

EXIT_CODES = {"final_answer": 0, "interrupted": 130}

MAX_SCHEMA_BYTES = 1_000_000
"""The largest ``--output-schema`` file read, in bytes."""

# Opening never waits (a FIFO without a writer would block open() itself); the file's kind is
# checked on what was opened, so a swap after a check cannot slip a FIFO or a device in.
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"))


def _read_regular_file(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``, opened without blocking.

    Raises:
        ConfigError: it is not a regular file (a FIFO, a folder, a device, ...); the message
            names ``path`` and what it is.
        OSError: it cannot be opened or read.
    """
    fd = os.open(path, _READ_FLAGS)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "a device")
            raise ConfigError(f"The output schema {path} is {kind}, not a regular file; give a "
                              "JSON Schema file.")
        return f.read(limit)


def read_output_schema(path: str) -> dict[str, Any]:
    """The JSON Schema in the file ``path`` (``--output-schema``), read as hostile data: a
    regular file only (opened without blocking: a FIFO is refused, never waited on), at most
    :data:`MAX_SCHEMA_BYTES`, nesting bounded, then bounded and checked as an output type.

    Raises:
        ConfigError: the file cannot be read, is not a regular file, is too big, is not JSON,
            is not a JSON object, or is not a bounded, valid, self-contained JSON Schema (the
            message names the file).
    """
    try:
        data = _read_regular_file(path, MAX_SCHEMA_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"Cannot read the output schema {path}: {exc.strerror or exc}.") from exc
    if len(data) > MAX_SCHEMA_BYTES:
        raise ConfigError(f"The output schema {path} is larger than {MAX_SCHEMA_BYTES} bytes.")
    try:
        schema = loads(data)
    except ValueError as exc:
        raise ConfigError(f"The output schema {path} is not valid JSON: {exc}.") from exc
    if not isinstance(schema, dict):
        raise ConfigError(f"The output schema {path} is not a JSON object (a JSON Schema).")
    try:
        output_spec(schema, "its schema")
    except ConfigError as exc:
        raise ConfigError(f"The output schema {path}: {exc}") from None
    return schema


class Session:
    """The model, tools, approver and callbacks from the command line, for one or more agents;
    closes the trace file at the end."""

    def __init__(self, args: argparse.Namespace, printer: Printer | None) -> None:
        self.args = args
        self.mcp = open_mcp(args)  # a server that cannot start fails before loading
        self.default_tools = self.toolbox(args.tools)  # a bad --tools fails before loading
        check_policy_options(args)  # and so do the policy options and the output schema
        path = getattr(args, "output_schema", None)
        self.output_schema = read_output_schema(path) if path is not None else None
        self.model = make_model(args.model, args.base_url, args.api_key, args.max_tokens,
                                quiet=printer is None)
        self.policies = cli_policies(self.model, args)
        self.callbacks: list[Any] = [printer] if printer else []
        resumed = getattr(args, "resume", None)
        same = bool(args.trace and resumed and same_file(args.trace, resumed))
        self.trace = TraceWriter(args.trace, model=self.model.name, append=same) \
            if args.trace else None
        if self.trace:
            self.callbacks.append(self.trace)
        if getattr(args, "otel", False) or getattr(args, "otel_content", False):
            self.callbacks.append(OtelCallback(global_tracer_provider(), model=self.model.name,
                                               capture_content=args.otel_content))

    def toolbox(self, spec: str | None) -> Toolbox:
        toolbox = load_toolbox(spec) if spec else Toolbox() if self.mcp is not None \
            else default_toolbox()
        if self.args.memory:
            from ..tools.builtin import memory_tools

            toolbox = Toolbox([*toolbox.values(), *memory_tools(self.args.memory).values()])
        return with_mcp(toolbox, self.mcp)

    def agent(self, toolbox: Toolbox | None = None, max_steps: int | None = None,
              output_schema: dict[str, Any] | None = None) -> Agent:
        """An agent with the command line's model, policies and callbacks; ``toolbox``,
        ``max_steps`` and ``output_schema`` (a task's) in place of the command line's."""
        config = AgentConfig(
            max_steps=max_steps or self.args.max_steps, stream=self.args.stream,
            policies=self.policies,
            frame_observations=getattr(self.args, "frame_observations", "on") == "on",
            output_type=self.output_schema if output_schema is None else output_schema,
        )
        approver = approve_all if self.args.yes else ask_user
        return Agent(self.model, toolbox or self.default_tools, config=config,
                     approver=approver, callbacks=self.callbacks)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.mcp is not None:
            self.mcp.close()
        if self.trace:
            self.trace.close()


OWN_OPTION = {"review": "--review", "constrained": "--constrained",
              "answer_floor": "--answer-floor", "routing": "--routing"}
"""The policies the command line sets with an option of their own, not ``--with-policy``."""


def check_policy_options(args: argparse.Namespace) -> None:
    """Refuse policy options that contradict each other, before any model is loaded.

    Raises:
        ConfigError: ``--with-policy`` names a policy set by its own option, or a policy that
            ``--without-policy`` also names.
    """
    for name in args.with_policy:
        if name in OWN_OPTION:
            raise ConfigError(f"--with-policy {name}: this policy is set with "
                              f"{OWN_OPTION[name]} (see --help).")
        if name in args.without_policy:
            raise ConfigError(f"--with-policy {name} and --without-policy {name} contradict "
                              "each other: give one.")


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


def make_model(
    spec: str, base_url: str | None, api_key: str | None, max_tokens: int = 512,
    quiet: bool = False,
) -> ChatModel:
    """The model for ``--model``/``--base-url``/``--api-key``.

    Raises:
        ConfigError: the embedded model is asked for but not installed (the message says how to
            get it or how to use a server instead).
    """
    from ..models import LlamaCppModel

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


def _progress(done: int, total: int) -> None:
    """A progress line on stderr while the embedded weights are assembled (first run only)."""
    end = "\n" if done >= total else ""
    print(f"\rAssembling the model weights: {done * 100 // total:3d}% "
          f"({done >> 20} of {total >> 20} MiB)", end=end, file=sys.stderr, flush=True)


def default_toolbox() -> Toolbox:
    from ..tools.builtin import builtin_toolbox

    return builtin_toolbox()


def open_mcp(args: argparse.Namespace) -> Any:
    """The MCPToolbox of ``--mcp`` (its servers started), or ``None`` without ``--mcp``."""
    if not getattr(args, "mcp", None):
        return None
    from ..tools import MCPToolbox

    if args.mcp_timeout <= 0:
        raise ConfigError("--mcp-timeout must be > 0 seconds.")
    return MCPToolbox(*args.mcp, timeout=args.mcp_timeout, allow=args.mcp_allow,
                      deny=args.mcp_deny)


def with_mcp(toolbox: Toolbox, mcp: Toolbox | None) -> Toolbox:
    """``toolbox`` with the MCP servers' tools added (a name in both is a ConfigError)."""
    if mcp is None:
        return toolbox
    both = sorted(set(toolbox) & set(mcp))
    if both:
        raise ConfigError(
            f"--mcp: the tool name(s) {', '.join(both)} are both in --tools/--memory and on an MCP "
            "server; leave the server's out with --mcp-deny NAME.")
    return Toolbox([*toolbox.values(), *mcp.values()])


def approve_all(tool: Tool, args: dict[str, Any]) -> bool:
    """``--yes``: approve every call of a tool marked ``requires_approval``; a call a policy
    sends for approval (``Provenance``: a value only a tool result named) of a tool not so
    marked is declined: ``--yes`` answers what the tools ask, never what a policy doubts."""
    return tool.requires_approval


def ask_user(tool: Tool, args: dict[str, Any]) -> bool:
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


def same_file(a: str, b: str) -> bool:
    """Whether two paths name the same file (``--trace`` written to the trace resumed)."""
    try:
        return Path(a).resolve() == Path(b).resolve() or Path(a).samefile(b)
    except OSError:
        return False


def show_progress(done: int, total: int, task: Any, record: dict[str, Any] | None) -> None:
    if record is None:
        state = f"{task.id}: running"
    else:
        outcome = record.get("status") or ("correct" if record.get("correct") else "wrong")
        state = f"{task.id}: {outcome}"
    print(f"\r{progress_bar(done, total)} {safe(state[:50]):<50}", end="", file=sys.stderr,
          flush=True)
