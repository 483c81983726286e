"""Fuzzing the files react-agent reads for longer than the fast tier does: traces, saved runs to
resume, tasks files and results files.

    python benchmarks/fuzz_files.py [--examples 5000] [--seed 0]

Runs the properties of ``tests/harness/test_fuzz_files.py`` on ``--examples`` generated files:
random records, and real files with one field replaced by a value of the wrong type or size
(Infinity, NaN, a 400-digit number, a record of another shape). Whatever a file holds, reading
it gives a result, or a ``ConfigError`` naming the file (and the line for JSON Lines files);
``react-agent replay`` and ``view`` of a trace or results file end with an exit code, an error
naming the file, never a traceback. Prints the number of examples, how many read and how many
failed with such an error, by kind, and the failures (anything else; must be 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "harness"))

from test_fuzz_files import COMMANDS, READERS, lines, mutated, read, records, through_cli, values

from react_agent import ConfigError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    outcomes: Counter[str] = Counter()
    failures: list[str] = []

    def check(kind: str, text: str, source: str) -> None:
        try:
            outcome = read(kind, text)
            codes = through_cli(kind, text) if source == "real" else []
        except Exception:  # the property failed: not a result, not a ConfigError naming the file
            failures.append(traceback.format_exc(limit=3))
            return
        state = "error" if isinstance(outcome, ConfigError) else "read"
        outcomes[f"{kind} ({source}): {state}"] += 1
        for code in codes:
            outcomes[f"{kind} ({source}) through the CLI: exit {code}"] += 1

    @seed(args.seed)
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from([*sorted(READERS), "run"]), lines, st.one_of(records, values),
           mutated(), st.booleans())
    def one(kind: str, text: list[str], data: Any, real: tuple[str, str], use_real: bool) -> None:
        if use_real:
            check(*real, "real")
        else:
            check(kind, json.dumps(data) if kind == "run" else "\n".join(text), "random")

    one()
    print(f"examples: {sum(v for k, v in outcomes.items() if 'CLI' not in k) + len(failures)}, "
          f"failures: {len(failures)} (the CLI ran {', '.join(sorted(COMMANDS))} files)")
    for name, count in sorted(outcomes.items()):
        print(f"  {name}: {count}")
    if failures:
        print(failures[0])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
