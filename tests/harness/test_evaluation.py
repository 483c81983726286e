"""Tests for react_agent.harness._evaluation (``react-agent eval``) and the shipped suite."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ResettableModel

from react_agent import Agent, ConfigError, Step, ToolCall
from react_agent.cli import main
from react_agent.harness._evaluation import (
    first_turn,
    load_suite,
    report,
    run_eval,
    score,
    toolbox_from_specs,
)
from react_agent.models import ScriptedModel
from react_agent.policies import Routing, default_policies
from react_agent.tools import schema as json_schema

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "eval" / "suite.jsonl"
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city.",
    "parameters": {"type": "dict", "properties": {
        "city": {"type": "string"}, "days": {"type": "int", "default": 1},
        "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]},
}}


def act(*calls: tuple[str, dict[str, Any]]) -> str:
    action: Any = [{"name": n, "args": a} for n, a in calls]
    return json.dumps({"thought": "t", "action": action[0] if len(action) == 1 else action})


def first(reply: str, tools: list[dict[str, Any]] = [WEATHER]) -> tuple[Step, list[dict]]:  # noqa: B006
    turn = first_turn(Agent(ScriptedModel([reply]), toolbox_from_specs(tools)), "q")
    return turn.step, turn.calls


def test_loose_type_names_are_normalised() -> None:
    schema = json_schema.normalize({"type": "dict", "properties": {
        "a": {"type": "float"}, "b": {"type": "tuple", "items": {"type": "int"}},
        "c": {"type": "any"}, "d": {"type": ["str", "null"]}, "e": {"type": "bool"}}})
    assert schema == {"type": "object", "properties": {
        "a": {"type": "number"}, "b": {"type": "array", "items": {"type": "integer"}},
        "c": {}, "d": {"type": ["string", "null"]}, "e": {"type": "boolean"}}}
    assert toolbox_from_specs([WEATHER])["get_weather"].parameters["type"] == "object"


W = {"name": "get_weather", "args": {"city": ["Paris"], "unit": ["", "c"]}}


@pytest.mark.parametrize(
    ("reply", "expected", "correct", "reason"),
    [
        (act(("get_weather", {"city": "paris "})), [W], True, "correct"),
        (act(("get_weather", {"city": "Paris", "unit": "C"})), [W], True, "correct"),
        (act(("get_weather", {"city": "Paris", "days": "1"})), [W], True, "correct"),
        (act(("get_weather", {"city": "Paris", "days": 3})), [W], False,
         "get_weather: unexpected argument days"),
        (act(("get_weather", {"city": "Lyon"})), [W], False, 'get_weather: city="Lyon"'),
        (act(("get_weather", {"unit": "c"})), [W], False, "get_weather: missing city"),
        (act(("get_time", {"zone": "x"})), [W], False, "called get_time; expected get_weather"),
        ('{"thought": "t", "action": {"final_answer": "sunny"}}', [W], False,
         "answered without calling a tool"),
        ('{"thought": "t", "action": {"final_answer": "hi"}}', None, True, "answered directly"),
        (act(("get_weather", {"city": "Paris"})), None, False, "called a tool; none fits"),
        ("I think it is sunny.", [W], False, "format error: "),
        (act(("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Paris"})),
         [W, {"name": "get_weather", "args": {"city": ["Rome"]}}], True, "correct"),
        (act(("get_weather", {"city": "Rome"})),
         [W, {"name": "get_weather", "args": {"city": ["Rome"]}}], False,
         "1 call(s); expected 2"),
    ],
)
def test_scoring(reply: str, expected: Any, correct: bool, reason: str) -> None:
    step, calls = first(reply)
    got = score(step, expected, toolbox_from_specs([WEATHER]), calls)
    assert got[0] is correct and got[1].startswith(reason)


def test_first_turn_never_runs_a_tool() -> None:
    ran: list[str] = []
    toolbox = toolbox_from_specs([WEATHER])
    model = ScriptedModel([act(("get_weather", {"city": "Paris"}))])
    agent = Agent(model, toolbox, callbacks=[lambda e: ran.append(type(e).__name__)])
    turn = first_turn(agent, "weather?")
    assert turn.calls == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert ran[-1] == "ToolStarted"  # announced: the first action is taken, and it stops there
    assert "ToolFinished" not in ran and len(model.calls) == 1
    assert turn.tools_shown == ["get_weather"]


def test_first_turn_scores_a_call_that_waits_as_the_model_wrote_it() -> None:
    time = {"name": "get_time", "description": "Time in a zone.", "parameters": {
        "type": "dict", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}
    reply = act(("get_weather", {"city": "Paris"}), ("get_time", {"zone": "Europe/Paris"}))
    agent = Agent(ScriptedModel([reply]), toolbox_from_specs([WEATHER, time]))
    turn = first_turn(agent, "Weather and time in Paris?")  # the zone is stated nowhere
    assert [c["name"] for c in turn.step.records["held_calls"]] == ["get_time"]
    assert turn.calls == [{"name": "get_weather", "args": {"city": "Paris"}},
                     {"name": "get_time", "args": {"zone": "Europe/Paris"}}]


def test_the_shipped_suite_loads_and_is_built_by_its_script() -> None:
    items = load_suite(SUITE)
    assert len(items) == 50
    counts = {c: sum(1 for i in items if i.category == c) for c in
              ("single", "choose", "parallel", "none", "many")}
    assert counts == {"single": 10, "choose": 10, "parallel": 6, "none": 8, "many": 16}
    assert all(len(i.tools) == 20 for i in items if i.category == "many")
    assert all(i.expected is None for i in items if i.category == "none")
    sys.path.insert(0, str(SUITE.parent))
    try:
        import build_suite
    finally:
        sys.path.pop(0)
    assert len(build_suite.ITEMS) == 50 and len({i.id for i in items}) == 50
    for item, (category, question, tools, expected) in zip(items, build_suite.ITEMS,
                                                           strict=True):
        assert (item.category, item.question, list(item.tools)) == (category, question, tools)
        assert item.expected == (None if expected is None else tuple(expected))


def test_reference_answers_score_full_marks_and_resume(tmp_path: Path) -> None:
    """A model that replies each item's first acceptable answer gets 100%; a second run skips."""
    items = load_suite(SUITE)
    by_question = {i.question: i for i in items}

    def perfect(messages: Any) -> str:
        item = by_question[messages[-1]["content"]]
        if item.expected is None:
            return '{"thought": "t", "action": {"final_answer": "Hello!"}}'
        calls = [(c["name"], {k: next(v for v in vals if v != "") for k, vals in
                              c["args"].items() if any(v != "" for v in vals)})
                 for c in item.expected]
        return act(*calls)

    made: list[int] = []

    def make_agent(toolbox: Any) -> Agent:
        made.append(1)
        policies = default_policies(use=[Routing(mode="auto")], off=["best_effort"])
        return Agent(ScriptedModel([perfect]), toolbox, max_steps=1, policies=policies)

    out = tmp_path / "r.jsonl"
    records = run_eval(items[:20], out, make_agent)
    records = run_eval(items, out, make_agent)
    assert len(made) == 50, "the first 20 were not asked again"
    assert len(records) == 50 and all(r["correct"] for r in records), \
        [r for r in records if not r["correct"]][:2]
    lines = report(records)
    assert lines[-1].split() == ["all", "50", "50", "100%", "0", lines[-1].split()[-1]]
    many = [r for r in records if r["category"] == "many"]
    assert all(1 <= len(r["tools_shown"]) <= 5 or r["question"] == "What is 1234 * 5678?"
               for r in many), "routing shows at most the top 5 of 20 tools"
    assert all(r["calls"][0]["name"] in r["tools_shown"] for r in many)


def test_eval_command_over_http(fault_server: Any, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    fault_server.script = [
        "reply:" + act(("get_weather", {"city": "Paris"})),
        "reply:" + act(("get_stock_price", {"ticker": "nvda"})),
        'reply:{"thought": "t", "action": {"final_answer": "x"}}',
    ]
    out = tmp_path / "r.jsonl"
    code = main(["eval", str(SUITE), "--limit", "3", "--out", str(out), "--base-url",
                 fault_server.url, "--constrained", "off"])
    printed = capsys.readouterr().out
    assert code == 0
    rows = {line.split()[0]: line.split() for line in printed.splitlines() if line}
    assert rows["single"][1:4] == ["3", "2", "67%"]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["correct"] for r in records] == [True, True, False]
    assert records[2]["reason"] == "answered without calling a tool"
    assert records[0]["raw_output"].startswith('{"thought"') and records[0]["prompt_tokens"] == 11
    assert all("response_format" not in r for r in fault_server.requests)


def test_bad_suite_line(tmp_path: Path) -> None:
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"question": "q", "tools": [], "expected": null}\n{"question": "q"}\n')
    with pytest.raises(ConfigError, match="line 2: not an eval item"):
        load_suite(bad)


def test_toolcall_dicts_match_parser_calls() -> None:
    assert ToolCall("a", {"x": 1}).to_dict() == {"name": "a", "args": {"x": 1}}


def test_changed_settings_score_again(fault_server: Any, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    fault_server.script = ["reply:" + act(("get_weather", {"city": "Paris"}))]
    out = tmp_path / "r.jsonl"
    common = ["eval", str(SUITE), "--limit", "1", "--out", str(out), "--base-url",
              fault_server.url]
    assert main([*common, "--routing", "off"]) == 0
    assert main([*common, "--routing", "off"]) == 0
    assert "1 item(s) already scored with these settings" in capsys.readouterr().out
    assert main([*common, "--routing", "lexical"]) == 0
    assert len(fault_server.requests) == 2, "new settings: scored again"
    settings = [json.loads(line)["settings"]["routing"] for line in out.read_text().splitlines()]
    assert settings == ["off", "lexical"]


def test_unknown_category_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", str(SUITE), "--category", "bogus", "--base-url", "http://127.0.0.1:9/v1"]
    assert main(argv) == 2
    assert "has no items of category 'bogus'" in capsys.readouterr().err


def test_a_made_up_tool_is_named_in_the_reason() -> None:
    step, calls = first(act(("get_capital", {"country": "Italy"})))
    assert score(step, None, toolbox_from_specs([WEATHER]), calls) == (
        False, "called get_capital (not one of the tools); none fits")


def test_the_model_is_reset_before_each_item(tmp_path: Path) -> None:
    """Each item is scored as on a freshly loaded model: whatever ran before it, a category or
    a resumed run scores it the same."""
    items = load_suite(SUITE)[:3]
    model = ResettableModel(['{"thought": "t", "action": {"final_answer": "Hi"}}'] * 3)
    records = run_eval(items, tmp_path / "r.jsonl",
                       lambda toolbox: Agent(model, toolbox, max_steps=1))
    assert len(records) == 3 and model.resets == [0, 1, 2]


def test_first_turn_scores_the_answer_that_replaced_the_first_calls() -> None:
    from react_agent import ModelReply
    from react_agent.policies import Relevance, default_policies

    model = ScriptedModel([act(("get_weather", {"city": "Paris"})),
                           ModelReply("no", choices={"yes": 0.1, "no": 0.9}),
                           '{"thought": "t", "action": {"final_answer": "4"}}'])
    agent = Agent(model, toolbox_from_specs([WEATHER]),
                  policies=default_policies(model, use=[Relevance()]))
    turn = first_turn(agent, "2 + 2?")
    assert turn.calls == [] and turn.step.final_answer == "4"
    assert turn.step.origin == "relevance"
    kept = ScriptedModel([act(("get_weather", {"city": "Paris"})),
                          ModelReply("yes", choices={"yes": 0.9, "no": 0.1})])
    agent = Agent(kept, toolbox_from_specs([WEATHER]),
                  policies=default_policies(kept, use=[Relevance()]))
    turn = first_turn(agent, "Weather in Paris?")
    assert turn.calls == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert turn.step.origin is None and len(kept.calls) == 2


def test_first_turn_scores_the_calls_that_replaced_the_first_answer() -> None:
    from react_agent import ModelReply
    from react_agent.policies import MissedCall, default_policies

    answer = '{"thought": "t", "action": {"final_answer": "Sunny."}}'
    model = ScriptedModel([answer, ModelReply("yes", choices={"yes": 0.9, "no": 0.1}),
                           act(("get_weather", {"city": "Paris"}))])
    agent = Agent(model, toolbox_from_specs([WEATHER]),
                  policies=default_policies(model, use=[MissedCall()], off=["review"]))
    turn = first_turn(agent, "Weather in Paris?")
    assert turn.calls == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert turn.step.origin == "missed_call"
    kept = ScriptedModel([answer, ModelReply("yes", choices={"yes": 0.5, "no": 0.5})])
    agent = Agent(kept, toolbox_from_specs([WEATHER]),
                  policies=default_policies(kept, use=[MissedCall()], off=["review"]))
    turn = first_turn(agent, "2 + 2?")
    assert turn.calls == [] and turn.step.final_answer == "Sunny." and len(kept.calls) == 2
