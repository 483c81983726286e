"""The seed acceptance scenarios (tests/data/seed_scenarios.json), scripted tier.

Every turn's reference trajectory replays through the agent with the seed toolboxes; the seed
tools return the seed data byte for byte; the scenario checker in tests/data/seeds/scenarios.py
is shown to fail on wrong runs and to accept the variations the real-model tier allows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import scenarios as common  # tests/data/seeds, on sys.path from tests/conftest.py
import tools

from react_agent import Agent, RunResult, ToolCall
from react_agent.harness import _checks as checks
from react_agent.models import ScriptedModel
from react_agent.policies import default_policies
from react_agent.tools._invoker import invoke

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # examples.tasks.build_seeds
SEEDS = ROOT / "tests" / "data" / "seeds"

TURNS = common.all_turns()
TURN = {turn.label: turn for turn in TURNS}
NO_REVIEW = default_policies(off=["review"])  # the reference trajectories have no review call


# -- scripted tier: every turn of every seed ------------------------------------------------------
@pytest.mark.parametrize("turn", TURNS, ids=[t.label for t in TURNS])
def test_reference_trajectory_replays(turn: common.Turn) -> None:
    spec = turn.spec
    reference = spec["reference_trajectory"]
    history = common.task_turns(turn)  # a later turn of a conversation runs after the earlier
    model = common.scripted_model(*(t.spec for t in history))
    chat = Agent(model, tools.TOOLBOXES[turn.seed], policies=NO_REVIEW).chat()
    result = [chat.ask(t.spec["user"]) for t in history][-1]

    assert result.status == "final_answer", result.error
    assert len(result.steps) == len(reference)
    for step, ref in zip(result.steps, reference, strict=True):
        assert step.error is None
        assert [call.to_dict() for call in step.tool_calls] == common.reference_calls(ref)
        assert step.observations == common.reference_observations(ref)
    answer = result.final_answer or ""
    rules = spec["final_answer"]
    assert all(s in answer for s in rules.get("must_contain", []))
    assert all(any(s in answer for s in group) for group in rules.get("must_contain_any", []))
    assert answer.strip() or not rules.get("non_empty")
    assert common.check_replay(result, spec) == []


@pytest.mark.parametrize("turn", TURNS, ids=[t.label for t in TURNS])
def test_expected_calls_get_their_observations(turn: common.Turn) -> None:
    toolbox = tools.TOOLBOXES[turn.seed]
    for want in turn.spec["expected_calls"]:
        got = invoke(toolbox, ToolCall(want["name"], want["args"]))
        assert got.observation == want["observation"]


# -- the seed tools against the scenario file -----------------------------------------------------
@pytest.mark.parametrize("seed", sorted(common.load_seeds()))
def test_toolbox_matches_scenario_file(seed: str) -> None:
    toolbox = tools.TOOLBOXES[seed]
    specs = common.load_seeds()[seed]["tools"]
    assert toolbox.names == [t["name"] for t in specs]
    for spec in specs:
        assert toolbox[spec["name"]].description == spec["description"]
        assert toolbox[spec["name"]].parameters == spec["parameters"]


def _text(value: Any, args: dict[str, str]) -> str:
    """A fake-data value as observation text, with ``{arg}`` placeholders filled in."""
    if isinstance(value, dict):
        filled = {k: v.format(**args) if isinstance(v, str) else v for k, v in value.items()}
        return json.dumps(filled, ensure_ascii=False)
    return value.format(**args)


def _fake_data_cases() -> list[tuple[str, str, dict[str, str], str]]:
    cases = []
    for seed, seed_spec in common.load_seeds().items():
        for tool in seed_spec["tools"]:
            data, name = tool["fake_data"], tool["name"]
            if data["kind"] == "lookup":
                for key, value in data["table"].items():
                    cases.append((seed, name, {data["key_arg"]: key}, _text(value, {})))
                unknown = {data["key_arg"]: "Atlantis"}
                cases.append((seed, name, unknown, _text(data["default"], unknown)))
            if data["kind"] == "constant":
                args = {tool["parameters"]["required"][0]: "带伞"}
                cases.append((seed, name, args, data["returns"]))
            for example in data.get("examples", []):
                cases.append((seed, name, example["args"], example["returns"]))
    return cases


@pytest.mark.parametrize(("seed", "name", "args", "observation"), _fake_data_cases())
def test_fake_data(seed: str, name: str, args: dict[str, str], observation: str) -> None:
    assert invoke(tools.TOOLBOXES[seed], ToolCall(name, args)).observation == observation


@pytest.mark.parametrize(
    ("seed", "expression", "observation"),
    [
        ("000", "2 ** 10", "2 ** 10 = 1024"),
        ("000", "__import__('os')", "错误：不支持的字符，只允许数字和基本运算符"),
        ("000", "(1 +", "计算出错：'(' was never closed (<string>, line 1)"),
        ("002", "1/0", "计算失败division by zero"),
        ("002", "__import__('os')", "计算失败不支持的字符，只允许数字和基本运算符"),
    ],
)
def test_calculate_errors(seed: str, expression: str, observation: str) -> None:
    call = ToolCall("calculate", {"expression": expression})
    assert invoke(tools.TOOLBOXES[seed], call).observation == observation


def test_send_message_records_instead_of_printing(capsys: pytest.CaptureFixture[str]) -> None:
    tools.SENT_MESSAGES.clear()
    call = ToolCall("send_message", {"content": "记得带伞"})
    assert invoke(tools.seed003, call).observation == "消息发送成功"
    assert tools.SENT_MESSAGES == ["记得带伞"]
    assert capsys.readouterr().out == ""


# -- the checker: it fails wrong runs and accepts the allowed variations --------------------------
def act(name: str, **args: Any) -> str:
    reply = {"thought": "next", "action": {"name": name, "args": args}}
    return json.dumps(reply, ensure_ascii=False)


def parallel(*calls: tuple[str, dict[str, Any]]) -> str:
    action = [{"name": name, "args": args} for name, args in calls]
    return json.dumps({"thought": "both", "action": action}, ensure_ascii=False)


def answer(text: str) -> str:
    return json.dumps({"thought": "done", "action": {"final_answer": text}}, ensure_ascii=False)


def run(label: str, replies: list[str], max_steps: int = 10, off: Sequence[str] = ()
        ) -> RunResult:
    """Run ``label``'s turn with ``replies``, after the task's earlier turns (replayed)."""
    turn = TURN[label]
    earlier = common.task_turns(turn)[:-1]
    model = ScriptedModel([*common.scripted_model(*(t.spec for t in earlier)).replies, *replies])
    toolbox = tools.TOOLBOXES[turn.seed]
    policies = default_policies(off=["review", *off])
    chat = Agent(model, toolbox, max_steps=max_steps, policies=policies).chat()
    return [chat.ask(t.spec["user"]) for t in [*earlier, turn]][-1]


def test_checker_requires_the_earlier_turns_in_the_models_input() -> None:
    turn = TURN["seed004-weather-then-stock-memory#2"]
    alone = Agent(ScriptedModel([act("get_stock_price", ticker="AAPL"), answer("150")]),
                  tools.seed004).run(turn.spec["user"])
    assert common.check_run(alone, turn.spec) == [
        "the model's input lacks \"What's the weather in Tokyo?\" (the earlier turns)",
        "the model's input lacks 'Tokyo' (the earlier turns)",
        "the model's input lacks '10' (the earlier turns)",
    ]


UMBRELLA_OK = "北京今天晴，22°C，不需要带雨伞。"
SUNNY_OK = "北京晴，气温15-25℃，天气不错。"

WRONG_RUNS = [
    (  # wrong city
        "seed000-beijing-umbrella",
        [act("get_weather", city="上海"), answer(UMBRELLA_OK)],
        ['missing call get_weather {"city": "北京"}'],
    ),
    (  # a group of the answer check fails
        "seed000-beijing-umbrella",
        [act("get_weather", city="北京"), answer("北京今天晴，22°C，需要带伞。")],
        ["the final answer has none of ['不需要', '不用', '无需', '不必', '没必要', '不会下雨']"],
    ),
    (  # a forbidden tool
        "seed003-umbrella-beijing",
        [act("get_weather", city="北京"), act("send_message", content="带伞"), answer(SUNNY_OK)],
        ['forbidden tool called: send_message {"content": "带伞"}'],
    ),
    (  # a missing substring
        "seed003-umbrella-beijing",
        [act("get_weather", city="北京"), answer("北京气温15-25℃，天气不错。")],
        ["the final answer lacks '晴'"],
    ),
    (  # no tool at all is allowed
        "seed000-self-introduction",
        [act("search_knowledge", query="agent"), answer("我是 AI 助手。")],
        ['forbidden tool called: search_knowledge {"query": "agent"}'],
    ),
    (  # calculate before the weather it depends on
        "seed002-hotter-city",
        [
            act("calculate", expression="28-25"), act("get_weather", city="北京"),
            act("get_weather", city="上海"), answer("上海更热，热3度。"),
        ],
        ['call calculate {"expression": "28-25"} came out of order'],
    ),
    (  # unit is optional but must be celsius when given
        "seed004-weather-then-stock-memory#1",
        [act("get_current_weather", location="Tokyo", unit="fahrenheit"), answer("10 in Tokyo")],
        ['missing call get_current_weather {"location": "Tokyo"}'],
    ),
]


@pytest.mark.parametrize(("label", "replies", "problems"), WRONG_RUNS)
def test_checker_fails_wrong_runs(label: str, replies: list[str], problems: list[str]) -> None:
    result = run(label, replies)
    assert common.check_run(result, TURN[label].spec) == problems
    assert common.check_replay(result, TURN[label].spec) != []


def test_checker_fails_a_run_without_final_answer() -> None:
    result = run(
        "seed002-walkthrough-beijing", [act("get_weather", city="北京")], max_steps=1,
        off=["best_effort"],
    )
    assert common.check_run(result, TURN["seed002-walkthrough-beijing"].spec) == [
        "the run ended with status 'max_steps': The run used 1 step without a final answer.",
        "the final answer lacks '25'",
        "the final answer lacks '晴'",
    ]


ALLOWED_RUNS = [
    (  # any expression equal to 356/3, after a rejected round(...)
        "seed000-calculate-round",
        [
            act("calculate", expression="round((2 ** 8 + 100) / 3, 2)"),
            act("calculate", expression="356 / 3"), answer("约 118.67"),
        ],
    ),
    (  # sequential calls in the other order
        "seed000-two-cities-outdoor",
        [
            act("get_weather", city="上海"), act("get_weather", city="北京"),
            answer("北京晴 22°C，上海多云 25°C。"),
        ],
    ),
    (  # the model subtracts itself: calculate is not required
        "seed002-hotter-city",
        [parallel(("get_weather", {"city": "上海"}), ("get_weather", {"city": "北京"})),
         answer("上海更热，热3度。")],
    ),
    (  # a district name first, then the bare city
        "seed002-district-name-retry",
        [act("get_weather", city="北京市朝阳区"), act("get_weather", city="北京"), answer("25度")],
    ),
    (  # the reminder in the answer instead of send_message
        "seed003-umbrella-guangzhou-rain",
        [act("get_weather", city="广州"), answer("广州有雷阵雨，记得带伞。")],
    ),
    (  # any location containing tokyo; unit may be left out
        "seed004-weather-then-stock-memory#1",
        [act("get_current_weather", location="tokyo, Japan"), answer("Tokyo: 10 celsius")],
    ),
    (  # lower-case ticker
        "seed004-weather-then-stock-memory#2",
        [act("get_stock_price", ticker="aapl"), answer("150.0")],
    ),
]


@pytest.mark.parametrize(("label", "replies"), ALLOWED_RUNS)
def test_checker_accepts_allowed_variations(label: str, replies: list[str]) -> None:
    assert common.check_run(run(label, replies), TURN[label].spec) == []


def test_checker_refuses_a_parallel_step_where_not_allowed() -> None:
    turn = TURN["seed000-two-cities-outdoor"]
    result = Agent(common.scripted_model(turn.spec), tools.seed000).run(turn.spec["user"])
    spec = {**turn.spec, "parallel_allowed": False}
    assert common.check_run(result, spec) == [
        "expected calls [0, 1] came as one parallel step; not allowed here"
    ]


@pytest.mark.parametrize(
    ("value", "number", "expected"),
    [("(2 ** 8 + 100) / 3", 356 / 3, True), ("356/3", 118.66666666666667, True),
     ("28 - 25", 3, True), (3, 3, True), ("28-24", 3, False), ("round(356/3, 2)", 118.67, False),
     ("9 ** 9 ** 9", 0, False), (True, 1, False)],
)
def test_evaluates_to(value: Any, number: float, expected: bool) -> None:
    assert checks.evaluates_to(value, number) is expected


# -- the seed runner (tests/data/seeds/run.py) ----------------------------------------------------
@pytest.mark.parametrize("seed", sorted(tools.TOOLBOXES))
def test_seed_runner_scripted(seed: str) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, str(SEEDS / "run.py"), seed, "--scripted"], cwd=ROOT, env=env,
        capture_output=True, text=True, encoding="utf-8", timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    turns = len(common.seed_turns(seed))
    assert f"{turns}/{turns} turns passed" in done.stdout
    assert "FAIL" not in done.stdout


# -- the scenarios as a tasks file (react-agent run --tasks examples/tasks/seeds.jsonl) ----------
def test_seeds_tasks_file_is_up_to_date() -> None:
    from examples.tasks import build_seeds

    assert (ROOT / "examples" / "tasks" / "seeds.jsonl").read_text("utf-8") == build_seeds.render()


def test_seeds_tasks_file_scores_the_reference_runs(tmp_path: Path) -> None:
    from react_agent.cli import load_toolbox
    from react_agent.harness import load_tasks, run_batch

    tasks = load_tasks(ROOT / "examples" / "tasks" / "seeds.jsonl")
    assert sum(len(t.all_turns()) for t in tasks) == len(TURNS)

    def make_agent(task: Any) -> Agent:
        turns = [TURN[t.label] for t in TURNS if t.task_id == task.id]
        return Agent(common.scripted_model(*(t.spec for t in turns)), load_toolbox(task.tools),
                     max_steps=task.max_steps, policies=NO_REVIEW)

    report = run_batch(tasks, tmp_path / "r.jsonl", make_agent)
    assert [(r["id"], r["problems"]) for r in report.records if not r["passed"]] == []

    wrong = [*common.scripted_model(TURN["seed003-umbrella-beijing"].spec).replies[:-1],
             answer("北京今天晴，要带伞。")]
    report = run_batch([t for t in tasks if t.id == "seed003-umbrella-beijing"],
                       tmp_path / "w.jsonl",
                       lambda task: Agent(ScriptedModel(wrong), load_toolbox(task.tools)))
    assert report.records[0]["passed"] is False
