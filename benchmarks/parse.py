"""Parse time of the worst reply shapes from 1 KB to 1 MB (median of repeated runs).

    python benchmarks/parse.py

Shapes: many unmatched "{" before the envelope; stray "}" then the envelope; long prose with
placeholders, apostrophes and quotes before the envelope; braces nested deep inside a string
value; many small placeholder objects; prose with no JSON at all (an error). The last column is
the ratio of the 1 MB time to the 100 KB time: about 10 means linear growth.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable

from react_agent import OutputParseError, parse_reply

ENVELOPE = (
    '{"thought": "Check the weather.", "action": {"name": "get_weather", "args": {"city": "Oslo"}}}'
)
PROSE = ("The template {city} expands to a name [1]. It's full of \"quotes\", a 12\" ruler, "
         "and a { open or a } dangling. ")


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


SHAPES: dict[str, Callable[[int], str]] = {
    "unmatched {": lambda n: fill("{", n) + "\n" + ENVELOPE,
    "stray }": lambda n: fill("}", n) + "\n" + ENVELOPE,
    "long prose": lambda n: fill(PROSE, n) + "\n" + ENVELOPE,
    "deep braces in a string": lambda n: (
        '{"thought": "x", "action": {"final_answer": "' + "{" * (n // 2) + "}" * (n // 2) + '"}}'
    ),
    "many placeholders": lambda n: fill("see {a} and {b}. ", n) + ENVELOPE,
    "prose, no JSON": lambda n: fill("Just words, it's prose. ", n),
}
SIZES = [1_000, 10_000, 100_000, 1_000_000]


def seconds(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with contextlib.suppress(OutputParseError):
            parse_reply(text)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    header = "".join(f"{s // 1000:>8} KB" for s in SIZES)
    print(f"{'shape':<26}{header}  1MB/100KB")
    for name, make in SHAPES.items():
        row = [seconds(make(size), 21 if size < 1_000_000 else 7) for size in SIZES]
        cells = "".join(f"{t * 1000:>8.2f} ms" for t in row)
        print(f"{name:<26}{cells}  {row[-1] / row[-2]:>8.1f}")


if __name__ == "__main__":
    main()
