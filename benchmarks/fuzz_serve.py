"""Fuzzing ``react-agent serve`` with hostile requests for longer than the fast tier does.

    python benchmarks/fuzz_serve.py [--examples 5000] [--seed 0] [--bound 20]

Runs the property of ``tests/serve/test_fuzz_requests.py`` (any body, tool schemas and model
arguments get a 2xx, or a 4xx in OpenAI's error shape, never a 5xx, within ``--bound``
seconds) on ``--examples`` generated requests, with the real validation budget
(``VALIDATION_SECONDS``, 1 s; the test makes it shorter), and prints the number of examples,
the failures (must be 0; the first one is shown), the statuses seen, the slowest answer and
how often a check was cut at its budget.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "serve"))

from request_strategies import replies, requests
from test_fuzz_requests import check, post

from react_agent.tools import schema as _schema


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bound", type=float, default=20.0,
                        help="seconds one request may take (4 replies, a budget each, + slack)")
    args = parser.parse_args()
    statuses: Counter[int] = Counter()
    slowest = 0.0
    failures: list[str] = []
    cut: Counter[str] = Counter()
    unchecked = _schema.Unchecked.__init__

    def counted(self: _schema.Unchecked, reason: str) -> None:
        cut[reason.split(" (")[0][:40]] += 1
        unchecked(self, reason)

    _schema.Unchecked.__init__ = counted  # type: ignore[method-assign]

    @seed(args.seed)
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(requests, replies)
    def one(body: dict[str, Any], script: list[str]) -> None:
        nonlocal slowest
        started = time.monotonic()
        response = post(body, script)
        seconds = time.monotonic() - started
        slowest = max(slowest, seconds)
        statuses[response.status_code] += 1
        try:
            check(response, seconds, args.bound)
        except AssertionError as exc:
            failures.append(f"{exc}"[:300])

    one()
    total = sum(statuses.values())
    print(f"examples: {total}, failures: {len(failures)}")
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    print(f"slowest answer: {slowest * 1000:.0f} ms (bound: {args.bound:g} s)")
    print("checks cut: " + (", ".join(f"{k}: {v}" for k, v in cut.most_common()) or "none"))
    if failures:
        print(f"first failure: {failures[0]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
