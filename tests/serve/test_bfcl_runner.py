"""BFCL's own runner, ``bfcl-eval``, drives ``react-agent serve`` through
``benchmarks/bfcl.py --rows endpoint``: the plumbing of that benchmark, not a score. The backend
is the scripted model, answering each item with its possible answer (the first acceptable value
of each argument), except one wrong item per category; the runner's requests reach it
unmodified, its result and score files are written, its scores are the ones that script
earns, and the calls it recorded are the calls the script wrote.

Needs the runner's environment: ``REACT_AGENT_BFCL_PYTHON`` names its Python (``python
benchmarks/bfcl.py --setup-only`` builds it and prints it, ~8 minutes). Skipped without it,
unless ``REACT_AGENT_REQUIRE_BFCL=1`` (set by ``.ci/run``), which makes the skip a failure. The
test takes 30-70 s on 2 busy cores (bfcl-eval's imports and 15 items, one of them four turns).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from react_agent.models import ScriptedModel
from react_agent.serve import ServeConfig, create_app, running

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK = ROOT / "benchmarks" / "bfcl.py"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_multiple")
MULTI_TURN = "multi_turn_base"
WRONG_NUMBER = 75
"""With ``--sample 2`` the items numbered 0 and 75 run; item 75 is answered wrongly (a final
answer where calls are due), except in irrelevance."""

_DUMP = """
import json, sys
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry, is_relevance_or_irrelevance
wanted = json.loads(sys.argv[1])
out = {}
for category, numbers in wanted.items():
    answers = {} if is_relevance_or_irrelevance(category) else {
        a["id"]: a["ground_truth"] for a in load_ground_truth_entry(category)}
    for entry in load_dataset_entry(category):
        number = int(entry["id"][len(category) + 1:].split("-")[0])
        if number in numbers:
            out[entry["id"]] = {"question": entry["question"], "function": entry["function"],
                                "ground_truth": answers.get(entry["id"])}
print(json.dumps(out))
"""


def bfcl_python() -> Path:
    path = os.environ.get("REACT_AGENT_BFCL_PYTHON")
    if not path:
        reason = ("BFCL's runner environment is not given: set REACT_AGENT_BFCL_PYTHON to the "
                  "Python that `python benchmarks/bfcl.py --setup-only` prints")
        if os.environ.get("REACT_AGENT_REQUIRE_BFCL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return Path(path)


# -- the script: each item's possible answer ----------------------------------------------------
def first_value(options: list[Any]) -> Any:
    """The first acceptable value of a possible answer's list (``""``: may be left out; some
    nested values are given as they are)."""
    if not isinstance(options, list):
        return plain(options)
    return plain(options[0]) if options else ""


def plain(value: Any) -> Any:
    if isinstance(value, dict):  # a dict argument: each key has its own acceptable values
        return {k: first_value(v) for k, v in value.items() if first_value(v) != ""}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def single_turn_calls(ground_truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = []
    for answer in ground_truth:
        [(name, params)] = answer.items()
        args = {k: first_value(v) for k, v in params.items() if first_value(v) != ""}
        calls.append({"name": name.replace(".", "_"), "args": args})  # as the runner sends it
    return calls


def multi_turn_calls(code: str, functions: list[dict[str, Any]]) -> dict[str, Any]:
    """``cd(folder='document')`` or ``sort('report.pdf')`` as a call with named arguments."""
    call = ast.parse(code, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    names = next(list(f["parameters"]["properties"]) for f in functions
                 if f["name"] == call.func.id)
    args = {names[i]: ast.literal_eval(a) for i, a in enumerate(call.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg})
    return {"name": call.func.id, "args": args}


def with_defaults(call: dict[str, Any], functions: list[dict[str, Any]]) -> dict[str, Any]:
    """``call`` as serve hands it out: the schema's defaults of arguments left out filled in."""
    spec = next(f for f in functions if f["name"].replace(".", "_") == call["name"])
    defaults = {k: v["default"] for k, v in spec["parameters"].get("properties", {}).items()
                if "default" in v and k not in call["args"]}
    return {"name": call["name"], "args": {**call["args"], **defaults}}


class Oracle:
    """The scripted model's reply to any request. After a question of the items, the calls
    of its possible answer: all at once for a single-turn item (none for irrelevance and the
    wrong items), one call per step for a turn of a multi-turn item (as a model that reads
    each result before its next call); then, and for anything else, a final answer. Keeps,
    per item, the calls it wrote, step by step."""

    def __init__(self, items: dict[str, Any]) -> None:
        self.questions: dict[str, tuple[str, list[list[dict[str, Any]]]]] = {}
        for item_id, item in items.items():
            truth = item["ground_truth"]
            for turn, messages in enumerate(item["question"]):
                if item_id.startswith(MULTI_TURN):
                    steps = [[multi_turn_calls(c, item["function"])] for c in truth[turn]]
                elif truth is None or f"_{WRONG_NUMBER}" in item_id:
                    steps = []
                else:
                    steps = [single_turn_calls(truth)]
                question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
                assert question not in self.questions, f"two items ask {question!r}"
                self.questions[question] = (item_id, steps)
        self.written: dict[str, list[list[dict[str, Any]]]] = {}
        self.lock = threading.Lock()

    def __call__(self, messages: Sequence[dict[str, Any]]) -> str:
        asked = next((i for i in range(len(messages) - 1, -1, -1)
                      if messages[i]["role"] == "user"
                      and messages[i]["content"] in self.questions), None)
        if asked is not None:
            item_id, steps = self.questions[messages[asked]["content"]]
            done = sum(m["role"] == "assistant" for m in messages[asked:])
            if done < len(steps):
                calls = steps[done]
                with self.lock:
                    self.written.setdefault(item_id, []).append(calls)
                return json.dumps({"thought": "I call the tools.",
                                   "action": calls[0] if len(calls) == 1 else calls})
        return json.dumps({"thought": "Done.", "action": {"final_answer": "Done."}})


def handed_out(written: list[list[dict[str, Any]]], got: list[list[dict[str, Any]]]) -> bool:
    """``got`` is ``written`` but for the steps serve's repeat check set aside: a step that
    only repeats calls handed out before (a multi-turn item may ``cd`` into a folder again)."""
    given: list[dict[str, Any]] = []
    steps = iter(got)
    pending = next(steps, None)
    for step in written:
        if step == pending:
            given += step
            pending = next(steps, None)
        elif not all(call in given for call in step):
            return False
    return pending is None


def test_bfcl_runner_drives_serve(tmp_path: Path) -> None:
    python = bfcl_python()
    numbers = {c: [0, WRONG_NUMBER] for c in CATEGORIES} | {MULTI_TURN: [0]}
    dumped = subprocess.run(
        [str(python), "-c", _DUMP, json.dumps(numbers)], capture_output=True, text=True,
        check=True, env={**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path / "dump")})
    items = json.loads(dumped.stdout)
    assert len(items) == 2 * len(CATEGORIES) + 1
    oracle = Oracle(items)
    model = ScriptedModel([oracle] * 1000)
    with running(create_app(model, ServeConfig())) as url:
        done = subprocess.run(
            [sys.executable, str(BENCHMARK), "--rows", "endpoint", "--endpoint", url,
             "--python", str(python), "--sample", "2", "--multi-turn", "1",
             "--work", str(tmp_path / "work")],
            capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((tmp_path / "work" / "bfcl.json").read_text())
    assert record["sample"]["numbers"] == [0, WRONG_NUMBER]
    row = record["rows"]["endpoint"]
    assert row["served_id"] == "scripted"  # the runner asked /v1/models and sent that id
    scores = row["categories"]
    assert list(scores) == [*CATEGORIES, MULTI_TURN]
    for category, score in scores.items():
        assert score["failed_requests"] == 0, (category, score["failed_ids"])
        assert Path(score["result_file"]).is_file() and Path(score["score_file"]).is_file()
        expected = 1.0 if category in (MULTI_TURN, "irrelevance") else 0.5
        assert (score["items"], score["accuracy"]) == (len(score["ids"]), expected), category
        assert score["requests"] >= score["items"]

    # the calls the runner recorded are the calls the script wrote, item by item
    recorded: dict[str, Any] = {}
    for score in scores.values():
        for line in Path(score["result_file"]).read_text().splitlines():
            entry = json.loads(line)
            recorded[entry["id"]] = entry["result"]
    assert set(recorded) == set(items)
    for item_id, result in recorded.items():
        functions = items[item_id]["function"]
        written = [[with_defaults(c, functions) for c in step]
                   for step in oracle.written.get(item_id, [])]
        if item_id.startswith(MULTI_TURN):
            steps = [step for turn in result for step in turn if isinstance(step, list)]
            got = [[{"name": n, "args": json.loads(a)} for c in step for n, a in c.items()]
                   for step in steps]
            assert handed_out(written, got), item_id
            assert len(result) == len(items[item_id]["question"])  # every turn ran
        elif written:
            got = [{"name": n, "args": json.loads(a)} for c in result for n, a in c.items()]
            assert [got] == written, item_id
        else:
            assert isinstance(result, str), item_id  # the final answer's text


# -- what the runner sends, without the runner ---------------------------------------------------
LEX_EXPORTS = {  # a live_simple tool as bfcl-eval's OpenAI handler sends it
    "type": "function", "function": {
        "name": "aws_lexv2_models_list_exports",
        "description": "Lists the exports for a bot. Note that the provided function is in "
                       "Python 3 syntax.",
        "parameters": {"type": "object", "required": ["botId", "botVersion"], "properties": {
            "botId": {"type": "string", "description": "The bot's identifier."},
            "botVersion": {"type": "string", "description": "The bot's version."},
            "sortBy": {"type": "string", "description": "Sort order.", "enum": ["ASC", "DESC"],
                       "default": "ASC"},
            "filterName": {"type": "string", "description": "The field to filter by.",
                           "default": None},
            "maxResults": {"type": "integer", "description": "Page size.", "default": 50,
                           "format": "float"},
        }},
    }}


def test_a_call_leaving_out_arguments_whose_default_is_null_is_handed_out() -> None:
    import httpx2

    reply = json.dumps({"thought": "I list them.", "action": {
        "name": "aws_lexv2_models_list_exports", "args": {"botId": "b1", "botVersion": "v2"}}})
    model = ScriptedModel([reply])
    body = {"model": "scripted", "temperature": 0.001, "store": False, "tools": [LEX_EXPORTS],
            "messages": [{"role": "system", "content": "You list exports."},
                         {"role": "user", "content": "List the exports of bot b1, version v2."}]}
    with running(create_app(model, ServeConfig())) as url:
        answer = httpx2.post(f"{url}/chat/completions", json=body, timeout=30).json()
    [call] = answer["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {
        "botId": "b1", "botVersion": "v2", "sortBy": "ASC", "maxResults": 50}
    assert answer["react_agent"]["attempts"] == 1  # not refused for a null it never wrote


def _benchmark() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bfcl_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("n", [1, 2, 7, 50, 149, 150])
def test_the_sample_is_evenly_spread_over_items_0_to_149_only(n: int) -> None:
    numbers = _benchmark().sample_numbers(n)
    assert len(set(numbers)) == n and numbers == sorted(numbers)
    assert numbers[0] == 0 and numbers[-1] < 150  # items 150 and up are never sampled
    assert numbers == [i * 150 // n for i in range(n)]


def test_the_sample_refuses_sizes_it_cannot_draw_from_items_0_to_149() -> None:
    bench = _benchmark()
    assert bench.sample_numbers(None) is None  # --sample all: whole categories
    for n in (0, 151):
        with pytest.raises(SystemExit):
            bench.sample_numbers(n)
    assert bench.item_number("live_simple", "live_simple_17-9-0") == 17
    assert bench.item_number("simple_python", "simple_python_149") == 149
    with pytest.raises(ValueError):
        bench.item_number("simple", "simple_python_3")  # another category's id


@pytest.mark.parametrize("n", [1, 5, 10, 50])
def test_the_tuning_split_never_draws_an_item_of_the_untouched_split(n: int) -> None:
    numbers = _benchmark().sample_numbers(n, "tune")
    assert len(set(numbers)) == n and numbers == sorted(numbers)
    assert numbers[0] >= 150 and numbers[-1] < 200  # every category has items 150-199
    with pytest.raises(SystemExit):
        _benchmark().sample_numbers(51, "tune")


def test_items_named_by_number_are_sorted_once_and_bounded() -> None:
    bench = _benchmark()
    assert bench.parse_items("187, 152,152,") == [152, 187]
    for text in ("", ",", "-1", ",".join(map(str, range(1_001)))):
        with pytest.raises(argparse.ArgumentTypeError):
            bench.parse_items(text)
    with pytest.raises(ValueError):
        bench.parse_items("152,x")
