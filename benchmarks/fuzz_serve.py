"""Fuzzing ``react-agent serve`` with hostile requests for longer than the fast tier does.

    python benchmarks/fuzz_serve.py [--examples 5000] [--seed 0]

Runs the property of ``tests/serve/test_fuzz_requests.py`` (any body and tool schemas get a
2xx, or a 4xx in OpenAI's error shape, never a 5xx) on ``--examples`` generated requests and
prints the number of examples, the failures (must be 0; the first one is shown), the statuses
seen and the slowest answer.
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

from request_strategies import bodies
from test_fuzz_requests import check, post


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    statuses: Counter[int] = Counter()
    slowest = 0.0
    failures: list[str] = []

    @seed(args.seed)
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(bodies)
    def one(body: dict[str, Any]) -> None:
        nonlocal slowest
        started = time.perf_counter()
        response = post(body)
        slowest = max(slowest, time.perf_counter() - started)
        statuses[response.status_code] += 1
        try:
            check(response)
        except AssertionError as exc:
            failures.append(f"{exc}"[:300])

    one()
    total = sum(statuses.values())
    print(f"examples: {total}, failures: {len(failures)}")
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    print(f"slowest answer: {slowest * 1000:.0f} ms")
    if failures:
        print(f"first failure: {failures[0]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
