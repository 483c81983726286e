"""How long the HTML view (``react-agent view``) takes to open in headless Chromium: the index of a
50-task results file of ``run --tasks``, and a 30-step trace whose observations are 8,000
characters each (the invoker's default limit). The target is under a second for each.

    python benchmarks/view_open.py [--loads 5] [--chromium /usr/bin/chromium]

Both files come from scripted runs (no model): a batch of 50 tasks of 2 to 5 steps (some failing
their checks, some with unusable replies) and one run of 29 tool calls and a final answer. Each
page is written with :func:`react_agent.harness.write_view`, then loaded ``--loads`` times from
disk in a fresh tab; a load is timed from the navigation to the end of the ``load`` event (the
page's script has run), as the browser reports it (Navigation Timing) and as seen from here.
Prints the sizes, the time to write each page and the median and slowest load; exits 1 when a
median is a second or more.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from react_agent import Agent, ScriptedModel, Toolbox
from react_agent.config import AgentConfig
from react_agent.harness import BatchTask, TraceWriter, load_view, run_batch, write_view

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
OBSERVATION_CHARS = 8_000


def toolbox() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def search(query: str, page: int = 1) -> str:
        """Search the notes."""
        line = f"{query} (page {page}): a result line with some words in it, and a number 42. "
        text = "\n".join(f"{n:>4} {line}" for n in range(OBSERVATION_CHARS // len(line) + 1))
        return text[:OBSERVATION_CHARS]

    @tb.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return json.dumps({"key": key, "value": len(key) * 7, "source": "table"})

    return tb


def act(name: str, **args: Any) -> str:
    return json.dumps({"thought": f"I call {name} to find out more about {args}.",
                       "action": {"name": name, "args": args}})


def answer(text: str) -> str:
    return json.dumps({"thought": "I have what I need.", "action": {"final_answer": text}})


def results_file(folder: Path) -> Path:
    """The results file of a batch of 50 scripted tasks."""
    tasks, scripts = [], {}
    for n in range(50):
        key = f"item-{n}"
        replies = [act("lookup", key=key) for _ in range(n % 4)]
        if n % 7 == 3:
            replies.append("Sorry, I cannot answer in JSON today.")
        replies.append(answer(f"The value of {key} is {len(key) * 7}."))
        expected = (str(len(key) * 7),) if n % 9 else ("never",)
        tasks.append(BatchTask(f"task-{n:02d}", f"What is the value of {key}?",
                               expected=expected, shape=("lookup", "compare", "chain")[n % 3]))
        scripts[tasks[-1].id] = replies
    out = folder / "tasks.results.jsonl"
    run_batch(tasks, out, lambda t: Agent(ScriptedModel(scripts[t.id]), toolbox()))
    return out


def long_trace(folder: Path) -> Path:
    """A trace of 30 steps: 29 searches of 8,000 characters each, then the answer."""
    replies = [act("search", query=f"topic {n}", page=n) for n in range(1, 30)]
    replies.append(answer("Topic 7 is on page 7."))
    path = folder / "long.jsonl"
    with TraceWriter(path, model="scripted") as trace:
        agent = Agent(ScriptedModel(replies), toolbox(), callbacks=[trace],
                      config=AgentConfig(max_steps=30))
        result = agent.run("Find the page about topic 7.")
    assert len(result.steps) == 30 and result.status == "final_answer", result.status
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    failed = False
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        folder = Path(tmp)
        pages = []
        for name, source in (("index of 50 tasks", results_file(folder)),
                             ("trace of 30 steps x 8,000 chars", long_trace(folder))):
            started = time.perf_counter()
            page = write_view(source.with_suffix(".html"), load_view(source))
            pages.append((name, source, page, time.perf_counter() - started))
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        print(f"Chromium {browser.version}, {args.loads} loads each, median (slowest)")
        print(f"{'page':<34}{'source':>10}{'page':>10}{'write':>9}{'load':>16}{'seen':>16}")
        for name, source, page, written in pages:
            loads, seen = [], []
            for _ in range(args.loads):
                tab = browser.new_page()
                started = time.perf_counter()
                tab.goto(page.as_uri(), wait_until="load")
                seen.append(1000 * (time.perf_counter() - started))
                loads.append(tab.evaluate(
                    "performance.getEntriesByType('navigation')[0].loadEventEnd"))
                tab.close()
            median = statistics.median(loads)
            failed |= median >= 1000
            print(f"{name:<34}{source.stat().st_size / 1024:>8.0f}KB"
                  f"{page.stat().st_size / 1024:>8.0f}KB{1000 * written:>7.0f}ms"
                  f"{median:>7.0f}ms ({max(loads):>4.0f})"
                  f"{statistics.median(seen):>7.0f}ms ({max(seen):>4.0f})")
        browser.close()
    print("load: navigation to the end of the load event, as the browser reports it; seen: the "
          "same from this process; source: the trace or results file; write: load_view + "
          "write_view")
    if failed:
        print("FAIL: a page took a second or more to open", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
