"""Fuzzing what tools give back, and the schemas tools come with, for longer than the test
suite does: the properties of ``tests/tools/test_invoker_fuzz.py`` and
``tests/tools/schema/test_flatten.py`` over many more examples.

    python benchmarks/fuzz_tools.py [--examples 5000] [--schemas 500] [--seed 0]

Each example is a tool that returns an awkward value (huge integers, floats that are not finite,
bytes, sets, objects whose ``repr`` or ``str`` raises, lists nested thousands deep, text with
lone surrogates and control characters) or raises an awkward exception (its ``str`` raises, a
``BaseException`` subclass, a huge message), run in the caller's thread, in a worker thread (a
timeout), as an ``async def`` tool, or under ``Agent.arun``. Property: ``Agent.run`` returns a
``RunResult`` with one observation for the call, of at most ``max_observation_chars`` plus the
cut marker, that UTF-8 can write.

Each schema example is an input schema as a server may send it (any mix of keywords, references
and values), or one built to be costly to flatten (definitions referred to many times, each
with a large enum, default and examples, with ``nullable``, ``not``, ``oneOf`` or
``additionalProperties: false`` around them). Property: the flattened schema is valid, holds no
reference, stays within the flattening's bounds (values, size; the costly ones' work too),
renders and takes arguments; only a tool with required arguments may be refused.

Printed: examples run (per way the tool ran, per kind of schema), failures (must be 0) with the
first five, and examples per second.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "tools" / "schema"))
import test_flatten as flat  # the schema strategies and their property
import test_invoker_fuzz as fuzz  # the strategies and the property


def described(outcome: tuple[str, Any]) -> str:
    """The example in a few words (its ``repr`` may be what fails)."""
    how, value = outcome
    return f"{'returns' if how == 'ok' else 'raises'} a {type(value).__name__}"


def explore(examples: int, seed_value: int) -> tuple[Counter[str], list[str]]:
    ran: Counter[str] = Counter()
    failures: list[str] = []

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(fuzz.KINDS), fuzz.outcomes)
    def one(kind: str, outcome: tuple[str, Any]) -> None:
        ran[kind] += 1
        problem = fuzz.run_once(kind, *outcome)
        if problem is not None:
            failures.append(f"{kind}, tool {described(outcome)}: {problem}")

    one()
    return ran, failures


def explore_schemas(examples: int, seed_value: int) -> tuple[Counter[str], list[str]]:
    ran: Counter[str] = Counter()
    failures: list[str] = []

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(flat.KINDS).flatmap(
        lambda kind: st.tuples(st.just(kind), flat.SCHEMAS[kind])))
    def one(example: tuple[str, Any]) -> None:
        kind, schema = example
        ran[kind] += 1
        problem = flat.check_once(kind, schema)
        if problem is not None:
            failures.append(f"{kind} schema {json.dumps(schema)[:200]}: {problem}")

    one()
    return ran, failures


def report(what: str, kinds: tuple[str, ...], ran: Counter[str], failures: list[str],
           seed_value: int, seconds: float) -> None:
    total = sum(ran.values())
    print(f"{total:,} {what} (seed {seed_value}): {len(failures)} failures, "
          f"{total / seconds:,.0f} examples/s ({seconds:.1f} s)")
    for kind in kinds:
        print(f"  {kind:<16}{ran[kind]:>8,}")
    for failure in failures[:5]:
        print(f"FAILURE: {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--schemas", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.examples:
        started = time.perf_counter()
        ran, failures = explore(args.examples, args.seed)
        report("examples", fuzz.KINDS, ran, failures, args.seed, time.perf_counter() - started)
    if args.schemas:
        started = time.perf_counter()
        ran, failures = explore_schemas(args.schemas, args.seed)
        report("schemas", flat.KINDS, ran, failures, args.seed, time.perf_counter() - started)


if __name__ == "__main__":
    main()
