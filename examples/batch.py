"""A batch of tasks: run every task of a JSON Lines file, check each run, print a results table.

Each line of a tasks file is one task with its checks: calls that must happen (with
``args_match`` rules such as ``evaluates_to``), tools that must not be called (``"*"``: none at
all), and what the final answer must contain. The example writes a file of three such tasks
(``TASKS`` below) and runs it; ``--suite`` runs the project's development suite instead
(``examples/tasks/dev.jsonl``: 24 multi-step tasks with fake tools), as
``react-agent run --tasks examples/tasks/dev.jsonl`` does.

``run_batch`` appends one record per task to the results file as it goes (running it again
skips the tasks already there, so an interrupted batch resumes); ``summary_table`` turns the
records into the table.

    python examples/batch.py                            # the embedded model
    python examples/batch.py --suite                    # the 24 tasks of examples/tasks/dev.jsonl
    python examples/batch.py --base-url http://localhost:11434/v1 --model qwen2.5:1.5b
    python examples/batch.py --scripted                 # canned replies, no model needed
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _run import command_line, pick_model, reply_answer, reply_call

from react_agent import Agent, Toolbox
from react_agent.harness import BatchTask, load_tasks, run_batch, summary_table
from react_agent.tools import load_toolbox  # a task's "tools": "FILE.py:OBJECT" or "MODULE:OBJECT"
from react_agent.tools.builtin import calculate

SUITE = Path(__file__).resolve().parent / "tasks" / "dev.jsonl"

TASKS = [
    {"id": "tip", "shape": "arithmetic", "task": "What is a 15% tip on a bill of 48.60?",
     "expected_calls": [{"name": "calculate", "args": {"expression": "48.60 * 0.15"},
                         "args_match": {"expression": {"evaluates_to": 7.29}}}],
     "final_answer": {"must_contain": ["7.29"]}},
    {"id": "split", "shape": "arithmetic",
     "task": "Four friends share a bill of 127.80 equally. How much does each one pay?",
     "expected_calls": [{"name": "calculate", "args": {"expression": "127.80 / 4"},
                         "args_match": {"expression": {"evaluates_to": 31.95}}}],
     "final_answer": {"must_contain": ["31.95"]}},
    {"id": "greeting", "shape": "no-tool", "task": "How do you say 'good morning' in French?",
     "forbidden_tools": ["*"], "final_answer": {"must_contain_any": [["Bonjour", "bonjour"]]}},
]

CANNED = [  # what a model might reply, task after task, for --scripted
    reply_call("15% of 48.60.", "calculate", expression="48.60 * 0.15"),
    reply_answer("The calculator gave the tip.", "A 15% tip on 48.60 is 7.29."),
    reply_call("Divide the bill by 4.", "calculate", expression="127.80 / 4"),
    reply_answer("The calculator gave each share.", "Each friend pays 31.95."),
    reply_answer("No tool is needed for this.", "'Good morning' in French is 'Bonjour'."),
]


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", action="store_true", help=f"run {SUITE} instead")
    parser.add_argument("--out", help="the results file (default: in a temporary folder)")


def main() -> None:
    args = command_line(__doc__, options)
    if args.suite and args.scripted:
        raise SystemExit("error: --suite needs a model (there are no canned replies for it)")
    model = pick_model(args, CANNED)
    calculator = Toolbox()
    calculator.add(calculate)

    def make_agent(task: BatchTask) -> Agent:  # one agent per task (fresh tools from a file)
        toolbox = load_toolbox(task.tools) if task.tools else calculator
        return Agent(model, toolbox, max_steps=task.max_steps or 6)

    def progress(done: int, total: int, task: BatchTask, record: dict | None) -> None:
        if record is not None:
            print(f"[{done}/{total}] {task.id}: {record['status']}, passed: {record['passed']}")

    with tempfile.TemporaryDirectory() as folder:
        tasks_file = SUITE if args.suite else Path(folder, "tasks.jsonl")
        if not args.suite:
            lines = [json.dumps(task, ensure_ascii=False) for task in TASKS]
            tasks_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = args.out or Path(folder, "results.jsonl")
        report = run_batch(load_tasks(tasks_file), out, make_agent, progress=progress)

    print()
    print("\n".join(summary_table(report.records)))
    print()
    print("\n".join(summary_table(report.records, by="shape")))
    for record in report.records:
        if record["passed"] is False:
            print(f"{record['id']} failed: {'; '.join(record['problems'])}")
    raise SystemExit(0 if all(r["passed"] is not False for r in report.records) else 1)


if __name__ == "__main__":
    main()
