"""Fuzzing what tools give back: whatever a tool returns or raises (huge integers, floats that
are not finite, bytes, sets, objects whose ``repr`` or ``str`` raises, lists nested thousands
deep, text with lone surrogates and control characters, exceptions whose ``str`` raises,
``BaseException`` subclasses, huge messages), ``Agent.run`` returns a ``RunResult`` with one
observation for the call, of at most ``max_observation_chars`` characters plus the cut marker,
that any encoding can write. The same property runs longer in ``benchmarks/fuzz_tools.py``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent import Agent, RunResult, ScriptedModel, Toolbox
from react_agent.policies import default_policies

MAX_CHARS = 300
"""The runs' ``max_observation_chars``: small, so that cutting happens often."""

MARKER = len("\n[... 99999999999 more characters cut; the result was too long]")
"""Room for the cut marker (up to an 11-digit count)."""


# -- awkward values ------------------------------------------------------------------------------
class Boom(BaseException):
    """A ``BaseException`` that is not an ``Exception``."""


FAILURES: tuple[type[BaseException], ...] = (
    RuntimeError, ValueError, RecursionError, MemoryError, Boom, GeneratorExit, SystemExit,
    StopIteration,
)


def _failing(method: str, error: type[BaseException]) -> type:
    """A class whose ``method`` (``__repr__``, ``__str__``...) raises ``error``."""
    def fail(self: Any, *args: Any) -> Any:
        raise error("raised by " + method)

    return type(f"Bad{method.strip('_').title()}", (), {method: fail})


class SlyText(str):
    """Text whose own methods raise: only its characters may be used."""

    def strip(self, chars: Any = None) -> str:
        raise RuntimeError("strip")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("format")

    def __len__(self) -> int:
        raise RuntimeError("len")


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _circular() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


awkward_text = st.one_of(
    st.text(st.one_of(st.characters(), st.characters(categories=["Cs", "Cc", "Cf"])),
            max_size=30),  # lone surrogates, control and format characters
    st.sampled_from(["\ud800", "a\udfffb", "\ud83d\ude00", "\x00", "\x1b[31mred", "\u202e",
                     "\r\n\t\x0b\x0c", "", "   "]),
    st.integers(0, 50_000).map(lambda n: "x" * n),
)
awkward_objects = st.one_of(
    st.builds(lambda m, e: _failing(m, e)(), st.sampled_from(["__repr__", "__str__"]),
              st.sampled_from(FAILURES)),
    awkward_text.map(SlyText),
    st.sampled_from([_circular, lambda: {(1, 2): 3}, lambda: complex(1, 2), lambda: object(),
                     lambda: range(10**6), lambda: type, lambda: ...]).map(lambda make: make()),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(4290, 6000).map(lambda n: 10**n),
    st.floats(), st.binary(max_size=20), st.frozensets(st.integers(), max_size=4),
    awkward_text, awkward_objects,
)
results = st.one_of(
    st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.tuples(inner, inner),
            st.sets(st.integers(), max_size=4),
            st.dictionaries(st.one_of(st.text(max_size=5), st.integers()), inner, max_size=4),
        ),
        max_leaves=12,
    ),
    st.integers(0, 3000).map(_nested),
)


def _exception(kind: type[BaseException], *args: Any) -> BaseException:
    return kind(*args)


def _str_fails(error: type[BaseException]) -> BaseException:
    """An exception whose ``str`` raises ``error``."""
    def fail(self: Any) -> str:
        raise error("no str")

    return type("StrFails", (Exception,), {"__str__": fail})()


exceptions = st.one_of(
    st.builds(_exception, st.sampled_from((*FAILURES, TimeoutError, KeyError, OSError)),
              st.one_of(awkward_text, scalars)),
    st.builds(_exception, st.sampled_from(FAILURES), scalars, scalars),  # str() is repr(args)
    st.builds(_str_fails, st.sampled_from(FAILURES)),
    st.builds(lambda n: ValueError("m" * n), st.integers(0, 1_000_000)),
)


# -- the property --------------------------------------------------------------------------------
KINDS = ("plain", "timeout", "async", "async-timeout", "async-loop")
"""How the tool runs: in the caller's thread, in a worker thread (it has a timeout), as an
``async def`` tool under ``Agent.run``, and under ``Agent.arun`` (on the event loop)."""


def run_once(kind: str, outcome: str, value: Any) -> str | None:
    """Run a tool returning (``outcome == "ok"``) or raising ``value`` through an agent; what
    is wrong with the run, or ``None``."""
    toolbox = Toolbox()

    def produce() -> Any:
        """Produce something awkward."""
        if outcome == "raise":
            raise value
        return value

    async def aproduce() -> Any:
        """Produce something awkward, asynchronously."""
        return produce()

    timeout = 5.0 if kind.endswith("timeout") else None
    toolbox.add(aproduce if kind.startswith("async") else produce, name="produce",
                timeout=timeout)
    call = json.dumps({"thought": "Get it.", "action": {"name": "produce", "args": {}}})
    done = json.dumps({"thought": "Done.", "action": {"final_answer": "done"}})
    agent = Agent(ScriptedModel([call, done]), toolbox, max_observation_chars=MAX_CHARS,
                  policies=default_policies(off=["review"]))
    try:
        result = asyncio.run(agent.arun("Go.")) if kind == "async-loop" else agent.run("Go.")
    except BaseException as exc:  # the bug this property exists to find
        return f"Agent.run raised {type(exc).__name__}"
    if not isinstance(result, RunResult):
        return f"not a RunResult: {type(result).__name__}"
    if result.status != "final_answer" or not result.steps:
        return f"status {result.status}: {result.error}"
    observations = result.steps[0].observations
    if len(observations) != 1:
        return f"{len(observations)} observations for one call"
    text = observations[0]
    if type(text) is not str:
        return f"an observation of type {type(text).__name__}"
    if len(text) > MAX_CHARS + MARKER:
        return f"an observation of {len(text)} characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "an observation that UTF-8 cannot write"
    return None


outcomes = st.one_of(
    st.tuples(st.just("ok"), results), st.tuples(st.just("raise"), exceptions),
)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(KINDS), outcomes)
def test_whatever_a_tool_returns_or_raises_is_one_bounded_observation(
    kind: str, outcome: tuple[str, Any],
) -> None:
    problem = run_once(kind, *outcome)
    assert problem is None, problem
