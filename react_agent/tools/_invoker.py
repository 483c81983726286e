"""The safe invoker: one tool call -> one observation string, whatever happens (the arguments
are cleaned and checked first, by :mod:`._arguments`).

Unknown tools, invalid arguments, exceptions and timeouts all become ``Error: ...`` observations
for the model (as in simonw/llm's tool runner); nothing a tool does can crash the run: whatever
it returns or raises (a ``BaseException`` too) becomes an observation of at most ``max_chars``
characters plus the cut marker. Only ``KeyboardInterrupt`` passes, so that Ctrl-C ends the run.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .._json import text_json
from .._lexical import did_you_mean as _did_you_mean
from ..types import ToolCall, ToolResult
from . import schema as json_schema
from ._arguments import (
    _brief,
    _clean_args,
    _invalid,
    _problems,
    _type_name,
    _unchecked,
    _value_problems,
    _what_to_change,
    control_character_problems,
)
from ._toolbox import Tool, Toolbox

_T = TypeVar("_T")

DEFAULT_MAX_OBSERVATION_CHARS = 8000
"""Observations longer than this (characters) are cut, with a marker saying how much was cut."""

Approver = Callable[[Tool, dict[str, Any]], bool]
"""Asked before each call of a tool marked ``requires_approval``: ``approver(tool, args) -> bool``
(``args`` already cleaned and validated). Only ``True`` approves; anything else declines (an
approver that returns what the user typed must not approve by being a non-empty string), and
the model is told so."""


@dataclass
class _Ready:
    """A call that passed cleaning, validation and approval, ready to run."""

    call: ToolCall
    tool: Tool
    args: dict[str, Any]
    cleaning: list[str]
    cleaning_kinds: list[str]


def invoke(
    toolbox: Toolbox,
    call: ToolCall,
    *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    approver: Approver | None = None,
) -> ToolResult:
    """Run one tool call safely and describe the outcome for the model.

    Never raises for anything the model or the tool did: a result or exception that cannot be
    shown as text becomes a placeholder naming its type (``KeyboardInterrupt`` still passes).
    The observation has at most ``max_chars`` characters plus the cut marker. The tool runs in
    the calling thread unless it has a timeout or is ``async def`` (then in a worker thread;
    see :func:`_run`).
    """
    ready = prepare(toolbox, call, approver, max_chars=max_chars)
    return ready if isinstance(ready, ToolResult) else _run(ready, max_chars)


def invoke_all(
    toolbox: Toolbox,
    calls: Sequence[ToolCall],
    *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    max_workers: int = 4,
    approver: Approver | None = None,
    approve: Collection[int] = (),
) -> list[ToolResult]:
    """Run independent calls concurrently, each in its own thread, at most ``max_workers`` at a
    time; results in the order given, one failing call does not affect the others. A single
    call runs like :func:`invoke`: in the caller's thread unless its tool has a timeout.

    The arguments of all the calls are checked within one budget
    (:data:`~react_agent.tools.schema.VALIDATION_SECONDS`, however many calls there are).
    Approvals are asked one call at a time, in order, before any call runs; ``approve``: the
    positions of calls that go to the approver whatever their tool says (a policy asked).
    """
    checked = _all_checked(toolbox, calls, max_chars)
    prepared = [c if isinstance(c, ToolResult) else _approved(c, approver, max_chars, n in approve)
                for n, c in enumerate(checked)]
    ready = [p for p in prepared if isinstance(p, _Ready)]
    width = max(1, max_workers)
    done: list[ToolResult] = []
    if len(ready) == 1:
        done.append(_run(ready[0], max_chars))
    else:
        for start in range(0, len(ready), width):  # each call in its own (daemon) thread
            running = [_start(r) for r in ready[start : start + width]]
            done.extend(_finish(r, max_chars) for r in running)
    results = iter(done)
    return [p if isinstance(p, ToolResult) else next(results) for p in prepared]


async def ainvoke_all(
    toolbox: Toolbox,
    calls: Sequence[ToolCall],
    *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    max_workers: int = 4,
    approver: Approver | None = None,
    approve: Collection[int] = (),
) -> list[ToolResult]:
    """:func:`invoke_all` for asyncio: ``async def`` tools are awaited on the running loop
    (abandoned, cancelled, after their timeout), plain tools run in worker threads (so that
    they do not block the event loop); at most ``max_workers`` at once; results in the order
    given. Cancelling the caller cancels the ``async def`` tools still running.

    The arguments are cleaned and checked in a worker thread too, all within one budget (a
    costly schema takes up to :data:`~react_agent.tools.schema.VALIDATION_SECONDS`); approvals
    are asked on the event loop's thread, in order, before any call runs."""
    checked = await in_worker(lambda: _all_checked(toolbox, calls, max_chars))
    prepared = [c if isinstance(c, ToolResult) else _approved(c, approver, max_chars, n in approve)
                for n, c in enumerate(checked)]
    limit = asyncio.Semaphore(max(1, max_workers))

    async def one(item: ToolResult | _Ready) -> ToolResult:
        if isinstance(item, ToolResult):
            return item
        async with limit:
            if inspect.iscoroutinefunction(item.tool.func):
                return await _run_on_loop(item, max_chars)
            try:
                return await asyncio.to_thread(_run, item, max_chars)
            except RuntimeError as exc:  # no worker thread can be started (_run does not raise)
                return _result(item, "raised", exc, 0.0, max_chars)

    return list(await asyncio.gather(*(one(p) for p in prepared)))


async def in_worker(work: Callable[[], _T]) -> _T:
    """``work()`` in a worker thread, so that the event loop answers others meanwhile; what it
    raises is raised here. If the caller is cancelled, ``work`` (bounded CPU work) is let
    finish first, then the cancellation goes on; with no thread to be had, ``work`` runs
    here."""

    def guarded() -> tuple[bool, Any]:
        try:
            return True, work()
        except BaseException as exc:  # raised below, in the caller
            return False, exc

    task = asyncio.ensure_future(asyncio.to_thread(guarded))
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    try:
        done, value = task.result()
    except RuntimeError:  # no worker thread can be started
        return work()
    if not done:
        raise value
    return cast(_T, value)


async def _run_on_loop(ready: _Ready, max_chars: int) -> ToolResult:
    """Await an ``async def`` tool on the running loop, in a task of its own: after the tool's
    timeout the task is cancelled and abandoned (not awaited: a tool that ignores cancellation
    cannot hold the run). A ``TimeoutError`` the tool raises itself is its error, not a timeout."""
    tool = ready.tool
    started = time.perf_counter()
    try:
        task = asyncio.ensure_future(_outcome(tool.func(**ready.args)))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the call itself failed (e.g. arguments its signature refuses)
        return _result(ready, "raised", exc, time.perf_counter() - started, max_chars)
    try:
        done, _ = await asyncio.wait({task}, timeout=tool.timeout)
    except BaseException:  # the caller was cancelled: the tool goes with it
        task.cancel()
        raise
    seconds = time.perf_counter() - started
    if not done:
        task.cancel()
        return _result(ready, "timeout", None, seconds, max_chars)
    try:
        outcome, value = task.result()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the tool cancelled itself
        return _result(ready, "raised", exc, seconds, max_chars)
    return _result(ready, outcome, value, seconds, max_chars)


async def _outcome(awaitable: Any) -> tuple[str, Any]:
    """``("ok", value)`` or ``("raised", exception)`` of awaiting ``awaitable``. The exception is
    caught inside the task: a ``SystemExit`` (or other ``BaseException``) leaving a task would
    stop the event loop itself. ``KeyboardInterrupt`` and cancellation pass."""
    try:
        return "ok", await awaitable
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except BaseException as exc:
        return "raised", exc


def prepare(
    toolbox: Toolbox, call: ToolCall, approver: Approver | None = None, *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
) -> ToolResult | _Ready:
    """Look the tool up, clean and validate the arguments and ask for approval if the tool needs
    it. Returns the failed :class:`ToolResult` (unknown tool, invalid arguments, declined; its
    observation at most ``max_chars`` characters plus the cut marker) or the call ready to run.

    Arguments no tool can mean are refused before cleaning: nested deeper than
    :data:`MAX_ARGS_DEPTH`, a number that is not finite (``NaN``, ``Infinity``) or an integer
    longer than :data:`MAX_INTEGER_DIGITS` digits. Cleaning and checking take at most
    :data:`~react_agent.tools.schema.VALIDATION_SECONDS` together: arguments that cannot be
    checked within it are refused as invalid (never run unchecked)."""
    checked = _checked(toolbox, call, max_chars)
    if isinstance(checked, ToolResult):
        return checked
    return _approved(checked, approver, max_chars)


def _checked(toolbox: Toolbox, call: ToolCall, max_chars: int) -> ToolResult | _Ready:
    """:func:`prepare` without the approval: CPU work only, bounded, safe in any thread."""
    tool = toolbox.get(call.name)
    if tool is None:
        text = _unknown_tool(toolbox, call.name)
        return ToolResult(call, _cut(text, max_chars), ok=False, error="unknown_tool")
    unusable = _value_problems(call.args)
    if unusable:
        text = _invalid(tool, unusable, f"Call {tool.name} again with corrected args.")
        return ToolResult(call, _cut(text, max_chars), ok=False, error="invalid_args")
    args = call.args  # what a refusal keeps if the cleaning runs out
    cleaning: list[str] = []
    kinds: list[str] = []
    try:
        with json_schema.budget():  # cleaning, checking and the hint: VALIDATION_SECONDS in all
            args, changes = _clean_args(tool.parameters, call.args)
            cleaning, kinds = [words for words, _ in changes], [kind for _, kind in changes]
            problems = control_character_problems(args) + _problems(tool.parameters, args)
            if problems:
                text = _invalid(tool, problems, _what_to_change(toolbox, tool, call.args))
    except json_schema.Unchecked as exc:
        problems = [_unchecked(exc)]
        text = _invalid(tool, problems, f"Call {tool.name} again with simpler args (shorter "
                        "text, fewer items), or use another tool.")
    if problems:
        return ToolResult(call, _cut(text, max_chars), ok=False, error="invalid_args", args=args,
                          cleaning=cleaning, cleaning_kinds=kinds)
    return _Ready(call, tool, args, cleaning, kinds)


def _all_checked(toolbox: Toolbox, calls: Sequence[ToolCall], max_chars: int
                 ) -> list[ToolResult | _Ready]:
    """:func:`_checked` of each call, all within one budget."""
    with json_schema.budget():
        return [_checked(toolbox, c, max_chars) for c in calls]


def _approved(ready: _Ready, approver: Approver | None, max_chars: int, asked: bool = False
              ) -> ToolResult | _Ready:
    """``ready``, or the result saying why it does not run (its tool needs approval, or a
    policy ``asked`` for it, and the approver declined)."""
    if not ready.tool.requires_approval and not asked:
        return ready
    refusal = _ask_approval(approver, ready.tool, ready.args)
    if refusal:
        return ToolResult(ready.call, _cut(refusal, max_chars), False, "declined", ready.args,
                          ready.cleaning, cleaning_kinds=ready.cleaning_kinds)
    return ready

def _ask_approval(approver: Approver | None, tool: Tool, args: dict[str, Any]) -> str | None:
    """``None`` if approved (the approver returned ``True``), else the observation saying why
    the call did not run. An approver that fails (whatever it raises but ``KeyboardInterrupt``)
    declines."""
    if approver is None:
        return f"Error: {tool.name} needs the user's approval and no one can approve it in " \
            "this run, so it was not run. Continue without it."
    try:
        approved = approver(tool, args) is True  # "n", 1 or None approve nothing
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an approver that fails declines
        return f"Error: {tool.name} was not run: asking for approval failed " \
            f"({_exception_text(exc)})."
    if approved:
        return None
    shown = _brief(args, 200)
    return f"Error: the user declined to run {tool.name} {shown}. Do not ask for this call " \
        "again; continue without it or give your final answer."


def _run(ready: _Ready, max_chars: int) -> ToolResult:
    """Run one call where its author expects it: in the calling thread, so that thread-bound
    resources (a ``sqlite3`` connection, thread-locals, GUI objects, signal handlers) work;
    in a worker thread only when the tool has a timeout (a hung worker can be abandoned, the
    calling thread cannot) or is ``async def`` (it needs an event loop of its own)."""
    tool = ready.tool
    if tool.timeout is not None or inspect.iscoroutinefunction(tool.func):
        return _finish(_start(ready), max_chars)
    started = time.perf_counter()
    try:
        value = _settled(tool.func(**ready.args))
    except KeyboardInterrupt:  # Ctrl-C ends the run
        raise
    except BaseException as exc:  # the tool's failure is the model's observation
        return _result(ready, "raised", exc, time.perf_counter() - started, max_chars)
    return _result(ready, "ok", value, time.perf_counter() - started, max_chars)


def _settled(value: Any) -> Any:
    """``value``, or what it resolves to if it is awaitable (a plain function that returned a
    coroutine), run on a fresh event loop: here, or in a worker thread if one runs here."""
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(value))
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_await(value))
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, name="tool:await", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass
class _Running:
    """A tool call running in its own daemon thread (so that a hung tool can be abandoned)."""

    ready: _Ready
    thread: threading.Thread
    box: dict[str, Any]
    started: float


def _start(ready: _Ready) -> _Running:
    box: dict[str, Any] = {}
    tool, args = ready.tool, ready.args

    def target() -> None:
        try:
            result = tool.func(**args)
            if inspect.isawaitable(result):
                result = asyncio.run(_await(result))
            box["value"] = result
        except BaseException as exc:  # the tool's failure is the model's observation
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"tool:{tool.name}", daemon=True)
    running = _Running(ready, thread, box, time.perf_counter())
    try:
        thread.start()
    except RuntimeError as exc:  # no thread can be started (too many abandoned tools hang)
        box["error"] = exc
    return running


def _finish(running: _Running, max_chars: int) -> ToolResult:
    """Wait for the call until its tool's timeout (counted from its start); its result. A
    ``KeyboardInterrupt`` the tool raised is raised here."""
    timeout = running.ready.tool.timeout
    left = None if timeout is None else max(0.0, running.started + timeout - time.perf_counter())
    if running.thread.ident is not None:  # started
        running.thread.join(left)
    seconds = time.perf_counter() - running.started
    if running.thread.is_alive():
        return _result(running.ready, "timeout", None, seconds, max_chars)
    if "error" in running.box:
        if isinstance(running.box["error"], KeyboardInterrupt):
            raise running.box["error"]
        return _result(running.ready, "raised", running.box["error"], seconds, max_chars)
    return _result(running.ready, "ok", running.box.get("value"), seconds, max_chars)


def _result(ready: _Ready, outcome: str, value: Any, seconds: float, max_chars: int) -> ToolResult:
    """The observation for ("ok", value) | ("raised", exception) | ("timeout", None); never
    raises (but ``KeyboardInterrupt``)."""
    tool, rest = ready.tool, (ready.args, ready.cleaning, seconds, ready.cleaning_kinds)
    if outcome == "timeout":
        text = (
            f"Error: {tool.name} did not finish within {tool.timeout or 0:g} seconds and was "
            "abandoned. Try simpler arguments or another approach."
        )
        return ToolResult(ready.call, _cut(text, max_chars), False, "timeout", *rest)
    if outcome == "raised":
        text = f"Error: {_exception_text(value)}"
        return ToolResult(ready.call, _cut(text, max_chars), False, "tool_error", *rest)
    return ToolResult(ready.call, _cut(format_result(value), max_chars), True, None, *rest)


def _exception_text(exc: BaseException) -> str:
    """``Type: message``; ``Type (its message cannot be shown: Error)`` when ``str(exc)`` fails.
    Never raises (but ``KeyboardInterrupt``)."""
    name = _type_name(exc)
    try:
        message = str.__str__(str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException as failure:
        return f"{name} (its message cannot be shown: {_type_name(failure)})"
    return f"{name}: {message}"

def format_result(value: Any) -> str:
    """A tool's return value as observation text: strings as they are, ``None`` as a stated
    empty result, JSON where possible, ``repr`` otherwise; a value neither can show (an integer
    past Python's digit limit for text, a ``repr`` that raises, nesting too deep for either) as
    a placeholder naming its type. Never raises (but ``KeyboardInterrupt``); always a plain
    ``str``."""
    if issubclass(type(value), str):  # type(): an object cannot pose as a string
        text = str.__str__(value)
        return text if text.strip() else "(the tool returned an empty string)"
    if value is None:
        return "(the tool returned no result)"
    failure: BaseException | None = None
    for show in (_as_json, repr):
        try:
            return str.__str__(show(value))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # next way, or the placeholder
            failure = exc
    if issubclass(type(value), int):
        digits = int(int.bit_length(value) * 0.30102999566398120) + 1  # log10(2)
        return f"(the tool returned an integer of about {digits} digits, too long to show)"
    return f"(the tool returned a {_type_name(value)} that cannot be shown as text: " \
        f"{_type_name(failure)})"


def _as_json(value: Any) -> str:
    return text_json(value)


_SURROGATE = re.compile("[\ud800-\udfff]")


def observation_text(value: Any, max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS) -> str:
    """``value`` (a tool's return value, or the text a client sent as one) as an observation:
    :func:`format_result`, then at most ``max_chars`` characters and a marker saying how many
    were cut, as the invoker writes every observation."""
    return _cut(format_result(value), max_chars)


def _cut(text: str, max_chars: int) -> str:
    """``text`` as an observation: at most ``max_chars`` characters, then a marker saying how
    many were cut. A surrogate pair written as two characters becomes the one character it
    means, a lone surrogate (which no encoding can write) U+FFFD, before the cut, so that the
    cut cannot split a pair either."""
    if _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    return f"{text[:max_chars]}\n[... {cut} more characters cut; the result was too long]"


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _unknown_tool(toolbox: Toolbox, name: str) -> str:
    """The observation for a call of a tool that does not exist: a close name is suggested; with
    none, the model is told it may answer without a tool (small models invent a tool for what
    they should do themselves, such as translating)."""
    available = ", ".join(toolbox.names) or "none"
    close = _did_you_mean(name, toolbox.names)
    text = f"Error: there is no tool named {name!r}{close}. Available tools: {available}."
    if not close:
        text += " If none of them does what the task needs, call no tool: give the final " \
            "answer yourself."
    return text
