"""What flattening a costly input schema costs: time and the size of the result, as the input
grows (the shapes of ``tests/helpers.py``).

    python benchmarks/flatten_cost.py [--max-seconds 120]

- ``wide(refs, n)``: one definition with an enum and examples of ``n`` values, referred to
  ``refs`` times (about 30 bytes per reference);
- ``bomb(defs, refs, n)``: ``defs`` definitions, each referring to every earlier one, with an
  enum, a default and examples of ``n`` values, referred to by ``refs`` arguments.

Prints per input: its size as JSON, the seconds ``flatten`` took (the walk, the checks and the
fallbacks) and the values of the result. A scale is skipped once one took longer than
``--max-seconds``. Run from a checkout before the bound (the flattening then lived in
``react_agent.tools._mcp``) to see the growth it had.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers import bomb, values, wide

try:
    from react_agent.tools.schema import flatten
except ImportError:  # a checkout before the schema package
    try:
        from react_agent.tools._flatten import flatten
    except ImportError:  # a checkout before the bound
        from react_agent.tools._mcp import tool_parameters as flatten


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-seconds", type=float, default=120.0)
    args = parser.parse_args()
    shapes: list[tuple[str, list[tuple[int, ...]]]] = [
        ("wide", [(250, 100), (500, 200), (1000, 400), (2000, 800), (5000, 2000)]),
        ("bomb", [(2, 10, 20), (4, 20, 40), (6, 40, 80), (8, 80, 160), (10, 100, 400)]),
    ]
    print(f"{'input':<22} {'JSON bytes':>11} {'seconds':>8} {'result values':>14}")
    for name, scales in shapes:
        build: Any = wide if name == "wide" else bomb
        for scale in scales:
            schema = build(*scale)
            started = time.perf_counter()
            params, _ = flatten(schema)
            seconds = time.perf_counter() - started
            print(f"{name + str(scale):<22} {len(json.dumps(schema)):>11,} {seconds:>8.2f} "
                  f"{values(params):>14,}", flush=True)
            if seconds > args.max_seconds:
                break


if __name__ == "__main__":
    main()
