"""Typed results on the embedded model: is the typed value valid and right, against the same
answer read from text?

    python benchmarks/typed.py                          # all tasks, modes text, typed, constrained
    python benchmarks/typed.py --modes text,typed       # some modes
    python benchmarks/typed.py --suite test             # one half of the task suite
    python benchmarks/typed.py --score DIR              # score the records of an earlier run again

The tasks are those of the task suite (``examples/tasks/{dev,test}.jsonl``) whose answer is
naturally a value: numbers, a name and a number, yes/no and a number.
``benchmarks/data/typed_tasks.jsonl`` gives each one's output schema and the right value (from
the task's reference answer). Each mode runs the tasks through ``react-agent run --tasks`` (the
CLI's batch, one fresh model per task, the default policies):

- ``text``: the task as it is; the value is then read from the final answer's text, generously:
  a number is right when any number in the text is within the tolerance, a name when the text
  contains one of its forms, a yes/no when the task's own final-answer checks pass (its
  ``must_contain`` / ``must_not_contain`` words say yes or no).
- ``typed``: the task with its ``output_schema`` (an output type): right when ``output`` validates
  and every field is right (numbers within the tolerance, names one of the forms, booleans
  equal).
- ``constrained``: ``typed`` with ``--constrained on``: the embedded model's grammar holds every
  reply, the final answer's branch to the output schema.

A number is right within ``max(0.01, 1e-4 * |value|)`` (the references round to 2 decimals).
Prints, per mode: tasks, typed value valid, right, and the median seconds per task; with
``--json ROWS.jsonl``, the per-task rows go to that file. The records stay in ``--work DIR``
(default a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from react_agent import RunResult
from react_agent.harness import check_run

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "typed_tasks.jsonl"
SUITES = ROOT / "examples" / "tasks"
MODES = ("text", "typed", "constrained")
NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")


def load_items(suite: str | None) -> list[dict[str, Any]]:
    """The benchmark's items, each with its suite task (``item["task"]``)."""
    items = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    tasks: dict[tuple[str, str], dict[str, Any]] = {}
    for name in {item["suite"] for item in items}:
        for line in (SUITES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                task = json.loads(line)
                tasks[(name, task["id"])] = task
    out = []
    for item in items:
        if suite and item["suite"] != suite:
            continue
        item["task"] = tasks[(item["suite"], item["id"])]
        out.append(item)
    return out


def tasks_file(items: list[dict[str, Any]], mode: str, folder: Path) -> Path:
    """The tasks file of one mode: the suite's lines, with the output schema where typed."""
    path = folder / f"{mode}.tasks.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for item in items:
            task = dict(item["task"])
            file, _, obj = task["tools"].rpartition(":")
            task["tools"] = f"{(SUITES / file).resolve()}:{obj}"
            if mode != "text":
                task["output_schema"] = item["output_schema"]
            f.write(json.dumps(task, ensure_ascii=False) + "\n")
    return path


def run_mode(items: list[dict[str, Any]], mode: str, folder: Path) -> Path:
    """Run one mode's tasks file with the CLI; the path of its records."""
    out = folder / f"{mode}.results.jsonl"
    command = [sys.executable, "-m", "react_agent", "run", "--tasks",
               str(tasks_file(items, mode, folder)), "--out", str(out)]
    if mode == "constrained":
        command += ["--constrained", "on"]
    print("$", " ".join(command[1:]), file=sys.stderr, flush=True)
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    return out


def close(got: Any, want: float) -> bool:
    """Whether ``got`` is a finite number within the tolerance of ``want``."""
    if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got):
        return False
    return abs(got - want) <= max(0.01, 1e-4 * abs(want))


def value_right(got: Any, want: Any) -> bool:
    """Whether a typed value is the right one (see the module docs)."""
    if isinstance(want, dict) and "one_of" in want:
        return isinstance(got, str) and any(
            form.casefold() in got.casefold() for form in want["one_of"])
    if isinstance(want, bool):
        return got is want
    if isinstance(want, (int, float)):
        return close(got, want)
    if isinstance(want, dict):
        return isinstance(got, dict) and all(
            key in got and value_right(got[key], value) for key, value in want.items())
    return bool(got == want)


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text`` (thousands commas and a Unicode minus read)."""
    out = []
    for match in NUMBER.findall(text):
        try:
            out.append(float(match.replace(",", "").replace("−", "-")))
        except ValueError:
            continue
    return out


def text_right(text: str, want: Any, answer_ok: bool) -> bool:
    """Whether the value can be read from the answer's text (generously; see the module docs)."""
    if isinstance(want, dict) and "one_of" in want:
        return any(form.casefold() in text.casefold() for form in want["one_of"])
    if isinstance(want, bool):
        return answer_ok
    if isinstance(want, (int, float)):
        return any(close(n, want) for n in numbers_in(text))
    if isinstance(want, dict):
        return all(text_right(text, value, answer_ok) for value in want.values())
    return False


def score(items: list[dict[str, Any]], mode: str, records_path: Path) -> list[dict[str, Any]]:
    """One row per item: the record's status, validity, rightness and seconds."""
    records = {}
    if records_path.is_file():
        for line in records_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["id"]] = record
    rows = []
    for item in items:
        record = records.get(item["id"])
        row: dict[str, Any] = {"mode": mode, "suite": item["suite"], "id": item["id"]}
        if record is None:
            rows.append({**row, "status": "missing", "valid": False, "right": False})
            continue
        text = record.get("final_answer") or ""
        if mode == "text":
            result = RunResult.from_dict(record["result"])
            rules = {"final_answer": item["task"].get("final_answer", {})}
            answer_ok = not check_run(result, rules)
            valid, right = None, text_right(text, item["expected"], answer_ok)
        else:
            valid = bool(record.get("output_valid"))
            right = valid and value_right(record.get("output"), item["expected"])
        rows.append({**row, "status": record["status"], "valid": valid, "right": right,
                     "passed": record.get("passed"), "seconds": record.get("seconds"),
                     "steps": record.get("steps"), "final_answer": text,
                     "output": record.get("output")})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--suite", choices=("dev", "test"))
    parser.add_argument("--work", type=Path, help="the folder for tasks files and records")
    parser.add_argument("--score", type=Path, metavar="DIR",
                        help="score the records in DIR again (run nothing)")
    parser.add_argument("--json", type=Path, metavar="ROWS.jsonl",
                        help="write the per-task rows here")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(unknown)}; known: {', '.join(MODES)}")
    items = load_items(args.suite)
    if args.score and not any((args.score / f"{m}.results.jsonl").is_file() for m in modes):
        parser.error(f"{args.score} holds no MODE.results.jsonl of the modes {', '.join(modes)}")
    folder = args.score or args.work or Path(tempfile.mkdtemp(prefix="typed-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    all_rows = []
    for mode in modes:
        path = folder / f"{mode}.results.jsonl" if args.score else run_mode(items, mode, folder)
        rows = score(items, mode, path)
        all_rows += rows
        seconds = [r["seconds"] for r in rows if isinstance(r.get("seconds"), (int, float))]
        valid = "-" if mode == "text" else str(sum(bool(r["valid"]) for r in rows))
        print(f"{mode:12} tasks {len(rows):3}  valid {valid:>3}  right "
              f"{sum(bool(r['right']) for r in rows):3}  median s/task "
              f"{statistics.median(seconds) if seconds else float('nan'):.1f}", flush=True)
    if args.json:
        args.json.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in all_rows),
                             encoding="utf-8")
    print(f"records in {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
