"""Structure-aware fuzzing of the parser: random JSON values built from the keys agents and models
use, written the ways models write them, fed to ``parse_reply``.

    python benchmarks/fuzz.py [--replies 1000000] [--seed 0] [--runs 2000]

Each reply is one or two random JSON values (every JSON type, nested, keys such as ``action``,
``name``, ``args``, ``tool_calls``, ``final_answer``...) written as JSON or Python, plain, fenced,
in prose, after ``Action:`` markers or between ``<tool_call>`` tags, sometimes with an invented
``Observation:`` between them, and cut at a random point a quarter of the time. Printed: crashes
(anything but ``OutputParseError``, or a Reply that breaks its contract; must be 0), parses per
second, how the replies ended (an action, or the error kind), then ``--runs`` of them through
``Agent.run`` (statuses; ``internal_error`` must not appear), and the parse time (best of three)
of 100 KB and 1 MB replies built the same way (the ratio is about 10 when the time grows
linearly).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import time
import traceback
from collections import Counter
from typing import Any

from react_agent import Agent, OutputParseError, Toolbox, parse_reply
from react_agent.models import ScriptedModel
from react_agent.parsing._reply import ARGS_KEYS, FINAL_KEYS, NAME_KEYS, WRAPPER_KEYS

KEYS = ("action", "thought", "tool_calls", "type", "id", *NAME_KEYS, *ARGS_KEYS, *FINAL_KEYS,
        *WRAPPER_KEYS)
WORDS = ("get_time", "search", "x", "", " ", "Final Answer", "final_answer", "<tool name>", "...",
         "tool_name", "<the answer for the user>", "{", "}", "[", '"', "'", "\\", "C:\\new\\tab",
         "D:\\data\\x", "Observation: 3", "Action: search", "```", "北京", "Umeå", "\x00", "null",
         '{"city": "Oslo"}', "{{}}", "true", "\ud83d\ude00")
WRAPPERS = ("{}", "```json\n{}\n```", "```\n{}\n```", "```text\n{}\n```", "~~~\n{}\n~~~",
            "Sure, here it is:\n{}\nHope this helps!", "I will now do this {} and then wait.",
            "My reply: {}", "Thought: I could send {} later.", "Thought: next step.\nAction: {}",
            "Thought: look.\nAction: search\nAction Input: {}", "<tool_call>\n{}\n</tool_call>",
            "<think>\nmaybe {{ or }} or \"\n</think>\n{}")
BETWEEN = ("\n", "\nObservation: 42\n", "\nOr rather:\n", " ")


def scalar(rnd: random.Random) -> Any:
    kind = rnd.randrange(7)
    if kind == 0:
        return rnd.choice((None, True, False))
    if kind == 1:
        return rnd.randint(-10**6, 10**6)
    if kind == 2:
        return round(rnd.uniform(-1e3, 1e3), rnd.randrange(4))
    if kind == 3:
        return "".join(rnd.choice("ab \"'{}[]:,\\\n\tλ") for _ in range(rnd.randrange(8)))
    return rnd.choice(WORDS)


def value(rnd: random.Random, depth: int = 0) -> Any:
    roll = rnd.random()
    if depth >= 5 or roll < 0.35:
        return scalar(rnd)
    if roll < 0.55:
        return [value(rnd, depth + 1) for _ in range(rnd.randrange(4))]
    return {
        (rnd.choice(KEYS) if rnd.random() < 0.8 else str(scalar(rnd))): value(rnd, depth + 1)
        for _ in range(rnd.randrange(5))
    }


def written(rnd: random.Random, v: Any) -> str:
    style = rnd.randrange(4)
    if style == 3:
        return repr(v)
    return json.dumps(v, ensure_ascii=style == 2, indent=2 if style == 1 else None)


def reply(rnd: random.Random) -> str:
    text = rnd.choice(WRAPPERS).replace("{}", written(rnd, value(rnd)), 1)
    if rnd.random() < 0.3:
        text += rnd.choice(BETWEEN) + written(rnd, value(rnd))
    if rnd.random() < 0.25:
        text = text[: rnd.randrange(len(text) + 1)]
    return text


def contract_broken(parsed: Any) -> str | None:
    """What is wrong with a Reply, or None."""
    if bool(parsed.tool_calls) == (parsed.final_answer is not None):
        return "not exactly one of tool calls and final answer"
    if parsed.final_answer is not None and not isinstance(parsed.final_answer, str):
        return "a final answer that is not a string"
    for call in parsed.tool_calls:
        if not (isinstance(call.name, str) and call.name.strip() and isinstance(call.args, dict)):
            return f"a malformed call {call!r}"
    if parsed.stage not in ("direct", "fenced", "fallback", "repaired") or not parsed.source:
        return "a bad stage or no source"
    return None


def fuzz_parser(count: int, seed: int) -> None:
    rnd = random.Random(seed)
    outcomes: Counter[str] = Counter()
    crashes: list[tuple[str, str]] = []
    parse_time = 0.0
    for _ in range(count):
        text = reply(rnd)
        started = time.perf_counter()
        try:
            parsed = parse_reply(text)
        except OutputParseError as exc:
            parse_time += time.perf_counter() - started
            outcomes[f"error: {exc.kind}"] += 1
            continue
        except Exception:  # the bug this benchmark exists to find
            parse_time += time.perf_counter() - started
            crashes.append((text, traceback.format_exc(limit=3)))
            continue
        parse_time += time.perf_counter() - started
        broken = contract_broken(parsed)
        if broken:
            crashes.append((text, broken))
        outcomes["final answer" if parsed.final_answer is not None else "tool calls"] += 1
    print(f"{count:,} replies (seed {seed}): {len(crashes)} crashes, "
          f"{count / parse_time:,.0f} parses/s ({parse_time:.1f} s parsing)")
    for outcome, n in outcomes.most_common():
        print(f"  {outcome:<24}{n:>10,}")
    for text, problem in crashes[:5]:
        print(f"CRASH on {text[:200]!r}:\n{problem}")


def fuzz_runs(count: int, seed: int) -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def get_time(zone: str = "UTC") -> str:
        """The time in a zone."""
        return f"12:00 {zone}"

    @toolbox.tool
    def search(query: str) -> str:
        """Search."""
        return f"results for {query}"

    rnd = random.Random(seed + 1)
    statuses: Counter[str] = Counter()
    started = time.perf_counter()
    for _ in range(count):
        replies = [reply(rnd) for _ in range(rnd.randint(1, 4))]
        agent = Agent(ScriptedModel(replies), toolbox, max_steps=3, max_parse_retries=1)
        statuses[agent.run("What time is it?").status] += 1
    seconds = time.perf_counter() - started
    print(f"{count:,} runs through Agent.run in {seconds:.1f} s: " + ", ".join(
        f"{status} {n:,}" for status, n in statuses.most_common()))


def scaling(seed: int) -> None:
    rnd = random.Random(seed + 2)
    pieces = [reply(rnd) for _ in range(2000)]
    for joiner in ("\n", " "):
        times = []
        for size in (100_000, 1_000_000):
            text, i = [], 0
            while sum(map(len, text)) < size:
                text.append(pieces[i % len(pieces)])
                i += 1
            body = joiner.join(text)[:size]
            best = float("inf")
            for _ in range(3):  # the best of three: other processes share the machine
                started = time.perf_counter()
                with contextlib.suppress(OutputParseError):
                    parse_reply(body)
                best = min(best, time.perf_counter() - started)
            times.append(best)
        label = "lines" if joiner == "\n" else "one line"
        print(f"fuzz replies joined ({label}): 100 KB {times[0] * 1000:.1f} ms, "
              f"1 MB {times[1] * 1000:.1f} ms, ratio {times[1] / times[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replies", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    fuzz_parser(args.replies, args.seed)
    fuzz_runs(args.runs, args.seed)
    scaling(args.seed)


if __name__ == "__main__":
    main()
