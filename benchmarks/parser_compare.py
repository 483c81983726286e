"""Side by side: react-agent's reply parser and the parsers a user would otherwise pick, on the
same public cases (the shared catalogue ``tests/data/parser_cases.jsonl`` and the project's own
``tests/data/parser_cases_local.jsonl``).

    python3 -m venv /tmp/bench
    /tmp/bench/bin/pip install -e . json_repair langchain-core smolagents agent-tool-parser
    /tmp/bench/bin/python benchmarks/parser_compare.py [--repeat 3]

(Those packages go into a separate virtualenv, never into the project's.) A parser whose package
is missing is skipped, and named.

Per parser and per set of cases it counts:

- ``exact``: the reply read as intended: the same tool calls (names and args, in order) or the
  same final answer, or an error where the case expects one;
- ``silent wrong``: an action where the case expects an error, or an action other than the one
  expected: a tool would run with arguments the model did not write (the worst outcome);
- ``acc. error``: no action where one was expected (an error fed back to the model: a wasted
  turn, not a wrong call);
- ``crashed``: the cases on which it raised something other than a ``ValueError`` (its way of
  saying "no JSON"), such as ``RecursionError`` or a panic of a Rust extension: counted as errors
  above, and a crash of the agent loop if not caught;
- ``parses/s``: how many of the cases it reads per second (all cases, the adversarial ones of 100
  KB and 20,000 braces included; the median of ``--repeat`` runs).

Only the action is compared, not the thought.

How each parser's output becomes an action:

- react-agent: :func:`react_agent.parse_reply` (an ``OutputParseError`` is an error).
- The JSON readers (``json_repair.loads``; ``langchain_core.utils.json.parse_json_markdown``,
  which reads a Markdown fence or the whole text with ``parse_partial_json``;
  ``smolagents.utils.parse_json_blob``, the text from the first ``{`` to the last ``}``;
  agent-tool-parser's ``extract_json_objects`` then ``safe_json_loads`` of the first object) give
  a JSON value, read by one small adapter that does the obvious mapping: the value's
  ``"action"`` (or the value itself if it has none) is a list of calls, a ``{"name", "args"}``
  call (missing or null args are ``{}``; args that are not an object are an error), or a
  ``{"final_answer": ...}`` (a string, or anything else but null as its JSON text); anything
  else, or an exception, is an error. No aliases, no placeholders, no second envelope.
- agent-tool-parser also through its own API (``ToolParser(tool_aliases={},
  param_aliases={}).try_parse_all``: its default aliases, which rename tools and arguments such
  as ``query`` to ``pattern``, are turned off): the calls it returns, or an error if none; it has
  no final answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
CASE_FILES = {"shared": DATA / "parser_cases.jsonl", "local": DATA / "parser_cases_local.jsonl"}

ERROR = "error"
Reader = Callable[[str], Any]  # reply -> "error", a list of calls, or {"final_answer": str}


def adapt(value: Any) -> Any:
    """A JSON value -> the action it holds (the obvious mapping; see the module docstring)."""
    if isinstance(value, dict) and "action" in value:
        value = value["action"]
    if isinstance(value, list):
        calls = [_call(item) for item in value]
        return calls if calls and all(c is not None for c in calls) else ERROR
    if not isinstance(value, dict):
        return ERROR
    if "final_answer" in value:
        answer = value["final_answer"]
        if answer is None:
            return ERROR
        return {"final_answer": answer if isinstance(answer, str)
                else json.dumps(answer, ensure_ascii=False)}
    call = _call(value)
    return [call] if call is not None else ERROR


def _call(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    args = item.get("args")
    if args is None:
        args = {}
    return {"name": item["name"], "args": args} if isinstance(args, dict) else None


def react_agent_reader() -> Reader:
    from react_agent import OutputParseError, parse_reply

    def read(text: str) -> Any:
        try:
            reply = parse_reply(text)
        except OutputParseError:
            return ERROR
        if reply.final_answer is not None:
            return {"final_answer": reply.final_answer}
        return [c.to_dict() for c in reply.tool_calls]

    return read


def json_repair_reader() -> Reader:
    import json_repair

    return lambda text: adapt(json_repair.loads(text))


def langchain_reader() -> Reader:
    from langchain_core.utils.json import parse_json_markdown

    return lambda text: adapt(parse_json_markdown(text))


def smolagents_reader() -> Reader:
    from smolagents.utils import parse_json_blob

    return lambda text: adapt(parse_json_blob(text)[0])


def agent_tool_parser_json_reader() -> Reader:
    import agent_tool_parser

    def read(text: str) -> Any:
        found = agent_tool_parser.extract_json_objects(text)
        return adapt(agent_tool_parser.safe_json_loads(found[0])) if found else ERROR

    return read


def agent_tool_parser_native_reader() -> Reader:
    import agent_tool_parser

    parser = agent_tool_parser.ToolParser(tool_aliases={}, param_aliases={})

    def read(text: str) -> Any:
        calls = parser.try_parse_all(text)
        return [{"name": c.name, "args": dict(c.args)} for c in calls] if calls else ERROR

    return read


PARSERS: dict[str, tuple[str, Callable[[], Reader]]] = {  # name -> (package, reader factory)
    "react-agent": ("react-agent", react_agent_reader),
    "json_repair + adapter": ("json_repair", json_repair_reader),
    "langchain-core + adapter": ("langchain-core", langchain_reader),
    "smolagents + adapter": ("smolagents", smolagents_reader),
    "agent-tool-parser JSON + adapter": ("agent-tool-parser", agent_tool_parser_json_reader),
    "agent-tool-parser native": ("agent-tool-parser", agent_tool_parser_native_reader),
}


CRASHED = "crashed"


def safely(read: Reader, text: str) -> Any:
    """``read(text)``; ``"error"`` if it raised a ``ValueError``, ``"crashed"`` for any other
    exception (``RecursionError``, the panic of a Rust extension, which is no ``Exception``)."""
    try:
        return read(text)
    except (KeyboardInterrupt, SystemExit):
        raise
    except ValueError:
        return ERROR
    except BaseException:
        return CRASHED


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Standard error (file descriptor 2) to /dev/null: a Rust panic prints its backtrace
    there before it is raised as an exception."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def as_expected(got: Any, expected: Any) -> Any:
    """``got`` in the shape of the case's ``expected`` (one call, a list, an answer)."""
    if got == ERROR or isinstance(got, dict):
        return got
    if isinstance(expected, dict) and "final_answer" not in expected and len(got) == 1:
        return got[0]
    return got


def score(read: Reader, cases: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"exact": 0, "silent wrong": 0, "acc. error": 0, "crashed": 0}
    for case in cases:
        expected = case["expected"]
        got = safely(read, case["output"])
        if got == CRASHED:
            counts["crashed"] += 1
            got = ERROR
        got = as_expected(got, expected)
        if got == expected:
            counts["exact"] += 1
        elif got == ERROR:
            counts["acc. error"] += 1
        else:
            counts["silent wrong"] += 1
    return counts


def rate(read: Reader, cases: list[dict[str, Any]], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for case in cases:
            safely(read, case["output"])
        runs.append(time.perf_counter() - started)
    return len(cases) / statistics.median(runs)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--repeat", type=int, default=3, help="timed runs (the median is shown)")
    repeat = options.parse_args().repeat
    sets = {name: [json.loads(line) for line in path.read_text("utf-8").splitlines()
                   if line.strip()] for name, path in CASE_FILES.items()}
    sets["all"] = [case for name in CASE_FILES for case in sets[name]]
    readers: dict[str, Reader] = {}
    for name, (package, make) in PARSERS.items():
        try:
            readers[name] = make()
        except ImportError:
            print(f"skipped {name}: the package {package} is not installed")
    width = max(map(len, readers)) + 2
    for set_name, cases in sets.items():
        print(f"\n{set_name} cases ({len(cases)})")
        print(f"{'parser':<{width}}{'exact':>7}{'silent wrong':>14}{'acc. error':>12}"
              f"{'crashed':>9}{'parses/s':>11}")
        for name, read in readers.items():
            with quiet_stderr():
                counts = score(read, cases)
                per_second = rate(read, cases, repeat)
            print(f"{name:<{width}}{counts['exact']:>7}{counts['silent wrong']:>14}"
                  f"{counts['acc. error']:>12}{counts['crashed']:>9}{per_second:>11,.0f}")


if __name__ == "__main__":
    main()
