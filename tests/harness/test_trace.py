"""Traces: JSON Lines written as a run goes, read back and replayed."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from react_agent import Agent, AgentConfig, ConfigError, RunResult, Step, Toolbox, parse_reply
from react_agent.events import FinalAnswer
from react_agent.harness._display import Printer
from react_agent.harness._trace import TraceWriter, read_trace, replay_events
from react_agent.models import ScriptedModel
from react_agent.policies import default_policies
from react_agent.types import ModelReply

REPLIES = [
    json.dumps({"thought": "Weather first.", "action": {"name": "get_weather",
                                                        "args": {"city": " Paris", "days": "2"}}}),
    "no JSON at all",
    "{'thought': 'Python style', 'action': {'name': 'get_weather', 'args': {'city': 'Atlantis'}}}",
    json.dumps({"thought": "Done.", "action": {"final_answer": "18 °C in Paris"}}),
]
TASK = "Weather in Paris?"


def weather() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def get_weather(city: str, days: int = 1) -> str:
        """Current weather of a city."""
        if city == "Atlantis":
            raise LookupError("no such city")
        return f"18 °C in {city} for {days} days"

    return tb


def traced_run(path: Path, replies: list[Any] = REPLIES, **options: Any) -> RunResult:
    with TraceWriter(path, model="scripted") as trace:
        return Agent(ScriptedModel(replies), weather(), callbacks=[trace], **options).run(TASK)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_records_field_by_field(tmp_path: Path) -> None:
    path = tmp_path / "t" / "trace.jsonl"
    result = traced_run(path)
    recs = records(path)
    assert [r["type"] for r in recs] == [
        "run_start", "model_call", "tool_call", "observation", "model_call", "model_call",
        "tool_call", "observation", "model_call", "run_end",
    ]
    assert all(r["time"].endswith("+00:00") and "T" in r["time"] for r in recs)
    start = recs[0]
    assert start["task"] == TASK and start["tools"] == ["get_weather"]
    assert start["model"] == "scripted" and start["system_prompt"].startswith("You are")

    first = recs[1]
    assert first["step"] == 1 and first["raw_output"] == REPLIES[0]
    chars = len(start["system_prompt"]) + len(TASK)
    assert (first["messages"], first["message_chars"]) == (2, chars)
    assert first["stage"] == "direct" and first["repairs"] == []
    assert first["thought"] == "Weather first."
    assert first["tool_calls"] == [{"name": "get_weather", "args": {"city": " Paris", "days": "2"}}]
    assert first["final_answer"] is None and first["parse_error"] is None
    assert first["prompt_tokens"] == result.steps[0].prompt_tokens > 0
    assert first["completion_tokens"] == result.steps[0].completion_tokens > 0
    assert first["seconds"] >= 0 and first["origin"] is None
    assert (first["records"], first["notes"], first["in_history"]) == ({}, [], True)
    assert first["assistant_message"] == REPLIES[0] and first["feedback"] is None

    tool = recs[2]
    assert tool["step"] == 1 and tool["name"] == "get_weather"
    assert tool["args"] == {"city": " Paris", "days": "2"}
    assert tool["cleaned_args"] == {"city": "Paris", "days": 2}
    assert tool["cleaning"] == ["city: stripped spaces", 'days: "2" -> 2']
    assert tool["observation"] == "18 °C in Paris for 2 days"
    assert tool["ok"] is True and tool["error"] is None and tool["seconds"] >= 0
    assert recs[3] == {**recs[3], "step": 1, "message": result.messages[3]["content"]}

    unusable = recs[4]
    assert unusable["step"] == 2 and unusable["stage"] is None
    assert unusable["parse_error"] == result.steps[1].error and unusable["tool_calls"] == []
    assert unusable["messages"] == 4
    assert unusable["feedback"] == result.messages[5]["content"]
    assert unusable["assistant_message"] == "no JSON at all"

    repaired = recs[5]
    assert repaired["stage"] == "repaired" and repaired["repairs"]
    assert recs[6]["error"] == "tool_error"
    assert recs[6]["observation"] == "Error: LookupError: no such city"
    assert recs[8]["final_answer"] == "18 °C in Paris"

    end = recs[9]
    assert end["status"] == "final_answer" and end["final_answer"] == "18 °C in Paris"
    assert end["usage"]["tool_calls"] == 2 and end["error"] is None
    assert end["result"] == json.loads(result.to_json())


def test_read_trace_gives_the_run_back(tmp_path: Path) -> None:
    result = traced_run(tmp_path / "t.jsonl")
    [again] = read_trace(tmp_path / "t.jsonl")
    assert again.to_dict()["steps"] == result.to_dict()["steps"]
    assert again.messages == result.messages and again.status == "final_answer"


def test_replay_prints_what_the_live_run_printed(tmp_path: Path) -> None:
    live = io.StringIO()
    printer = Printer(live, usage=True)
    with TraceWriter(tmp_path / "t.jsonl") as trace:
        Agent(ScriptedModel(REPLIES), weather(), callbacks=[printer, trace],
              policies=default_policies(off=["review"])).run(TASK)
    replayed = io.StringIO()
    replay_printer = Printer(replayed, usage=True)
    for event in replay_events(read_trace(tmp_path / "t.jsonl")[0]):
        replay_printer(event)
    assert replayed.getvalue() == live.getvalue()
    assert "Observation: Error: LookupError: no such city" in live.getvalue()


def test_replay_prints_a_broken_loop_as_the_live_run_did(tmp_path: Path) -> None:
    paris = '{"thought": "Again.", "action": {"name": "get_weather", "args": {"city": "Paris"}}}'
    answer = '{"thought": "Known.", "action": {"final_answer": "sunny"}}'
    live = io.StringIO()
    with TraceWriter(tmp_path / "t.jsonl") as trace:
        result = Agent(ScriptedModel([paris] * 4 + [answer]), weather(),
                       policies=default_policies(off=["repeat"]),
                       callbacks=[Printer(live), trace]).run(TASK)
    replayed = io.StringIO()
    for event in replay_events(read_trace(tmp_path / "t.jsonl")[0]):
        Printer(replayed)(event)
    assert result.status == "final_answer"
    assert replayed.getvalue() == live.getvalue()
    assert "Loop: the model repeats calls whose results it already has" in live.getvalue()


def test_a_repeat_set_aside_is_replayed_and_left_out_of_a_rebuilt_history(
    tmp_path: Path
) -> None:
    paris = '{"thought": "Again.", "action": {"name": "get_weather", "args": {"city": "Paris"}}}'
    replies = [paris, paris, '{"thought": "Known.", "action": {"final_answer": "sunny"}}']
    live = io.StringIO()
    with TraceWriter(tmp_path / "t.jsonl") as trace:
        result = Agent(ScriptedModel(replies), weather(), callbacks=[Printer(live), trace],
                       policies=default_policies(off=["review"])).run(TASK)
    replayed = io.StringIO()
    for event in replay_events(read_trace(tmp_path / "t.jsonl")[0]):
        Printer(replayed)(event)
    assert replayed.getvalue() == live.getvalue()
    assert "Repeat: the run already has the results of 1 call" in live.getvalue()
    recs = records(tmp_path / "t.jsonl")
    calls = [r for r in recs if r["type"] == "model_call"]
    assert [r["records"].get("repeat", False) for r in calls] == [False, True, False]
    assert [r["in_history"] for r in calls] == [True, False, True]
    [note] = [r for r in recs if r["type"] == "note"]
    assert (note["step"], note["policy"], note["label"]) == (2, "repeat", "Repeat")
    cut_after(tmp_path / "t.jsonl", 5)  # up to the repeat's record
    [cut] = read_trace(tmp_path / "t.jsonl")
    assert cut.messages == result.messages[:4]
    assert [s.records.get("repeat", False) for s in cut.steps] == [False, True]
    assert cut.steps[1].notes == result.steps[1].notes  # kept on the step's record too


def test_an_old_trace_with_the_fields_before_policies_were_plug_ins_is_rebuilt(
    tmp_path: Path
) -> None:
    paris = '{"thought": "Again.", "action": {"name": "get_weather", "args": {"city": "Paris"}}}'
    replies = [paris, paris, '{"thought": "Known.", "action": {"final_answer": "sunny"}}']
    with TraceWriter(tmp_path / "t.jsonl") as trace:
        result = Agent(ScriptedModel(replies), weather(), callbacks=[trace],
                       policies=default_policies(off=["review"])).run(TASK)
    old = []
    for r in records(tmp_path / "t.jsonl")[:5]:  # up to the repeat's record
        if r["type"] == "model_call":
            repeat = r.pop("records").get("repeat", False)
            del r["origin"], r["notes"], r["in_history"]
            r.update(best_effort=False, review=False, review_reasons=[], repeat=repeat,
                     held_calls=[])
        old.append(json.dumps(r))
    (tmp_path / "t.jsonl").write_text("\n".join(old) + "\n", "utf-8")
    [cut] = read_trace(tmp_path / "t.jsonl")
    assert cut.messages == result.messages[:4]
    assert [(s.records, s.in_history) for s in cut.steps] == [({}, True), ({"repeat": True},
                                                                            False)]


def test_a_held_call_is_replayed_and_left_out_of_a_rebuilt_history(tmp_path: Path) -> None:
    tb = weather()

    @tb.tool
    def send_text(to: str, text: str) -> str:
        """Send a text message."""
        return f"sent to {to}"

    both = json.dumps({"thought": "Both.", "action": [
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "send_text", "args": {"to": "Bo", "text": "Paris is 20 °C"}}]})
    replies = [both, '{"thought": "Known.", "action": {"final_answer": "18 °C"}}']
    live = io.StringIO()
    with TraceWriter(tmp_path / "t.jsonl") as trace:
        result = Agent(ScriptedModel(replies), tb, callbacks=[Printer(live), trace],
                       policies=default_policies(off=["review"])).run(
                           "Weather in Paris? Text it to Bo.")
    replayed = io.StringIO()
    for event in replay_events(read_trace(tmp_path / "t.jsonl")[0]):
        Printer(replayed)(event)
    assert replayed.getvalue() == live.getvalue() and "Held: send_text" in live.getvalue()
    kinds = [r["type"] for r in records(tmp_path / "t.jsonl")]
    assert kinds[:5] == ["run_start", "model_call", "note", "tool_call", "observation"]
    cut_after(tmp_path / "t.jsonl", 5)  # up to the first step's observation
    [cut] = read_trace(tmp_path / "t.jsonl")
    assert cut.messages == result.messages[:4] and "20 °C" not in cut.messages[2]["content"]
    assert [c["name"] for c in cut.steps[0].records["held_calls"]] == ["send_text"]


def cut_after(path: Path, kept: int) -> None:
    """The trace as a killed process leaves it: ``kept`` whole records and part of the next."""
    lines = path.read_text("utf-8").splitlines()
    path.write_text("\n".join(lines[:kept]) + "\n" + lines[kept][:40], "utf-8")


def test_a_trace_cut_mid_run_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    result = traced_run(path)
    cut_after(path, 8)  # up to the third step's observation
    [run] = read_trace(path)
    assert run.status == "interrupted"
    assert "the process stopped mid-run" in (run.error or "")
    assert [s.index for s in run.steps] == [1, 2, 3]
    assert run.steps[0].observations == ["18 °C in Paris for 2 days"]
    assert run.steps[1].error and run.steps[2].results[0].error == "tool_error"
    assert run.messages == result.messages[:8]  # the whole history, not only system and task


@pytest.mark.parametrize("kept", [2, 4, 5, 6, 8], ids=lambda k: f"{k}-records")
def test_resuming_a_cut_trace_sends_the_model_the_history_it_had(tmp_path: Path, kept: int) -> None:
    """The model is sent what the uncut run sent it at the same point: the system prompt, the
    task and every earlier step's reply and observation (or parse error)."""
    path = tmp_path / "t.jsonl"
    traced_run(path)
    original = ScriptedModel(REPLIES)
    Agent(original, weather()).run(TASK)
    cut_after(path, kept)
    [cut] = read_trace(path)
    done = (len(cut.messages) - 2) // 2  # steps with their answer; a step cut short is redone
    model = ScriptedModel(REPLIES[done:])
    resumed = Agent(model, weather()).resume(cut)
    assert model.calls[0] == original.calls[done]
    assert resumed.status == "final_answer" and len(resumed.steps) == len(REPLIES)


def test_an_old_trace_without_the_sent_messages_is_rebuilt_the_same(tmp_path: Path) -> None:
    """A trace written before the sent messages were recorded: its observations are rebuilt as
    that version sent them, unframed (so the run here frames none)."""
    path = tmp_path / "t.jsonl"
    result = traced_run(path, frame_observations=False)
    recs = [r for r in records(path)[:8] if r["type"] != "observation"]
    for r in recs:
        r.pop("assistant_message", None)
        r.pop("feedback", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    [run] = read_trace(path)
    assert run.messages == result.messages[:8]


def test_several_runs_in_one_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as trace:
        agent = Agent(ScriptedModel([REPLIES[3], REPLIES[3]]), weather(), callbacks=[trace])
        agent.run("one")
        agent.run("two")
    assert [r.task for r in read_trace(path)] == ["one", "two"]


def test_bad_traces(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot read the trace"):
        read_trace(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ConfigError, match="holds no run"):
        read_trace(tmp_path / "empty.jsonl")
    (tmp_path / "bad.jsonl").write_text('nope\n{"type": "run_start"}\n')
    with pytest.raises(ConfigError, match="line 1: not a JSON record"):
        read_trace(tmp_path / "bad.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ConfigError, match="Cannot write the trace"):
        TraceWriter(tmp_path / "empty.jsonl" / "x.jsonl")


def test_a_record_of_the_wrong_shape_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    """Valid JSON of the wrong shape in a trace: an error naming the file, the line and the
    record, never a traceback."""
    good = tmp_path / "good.jsonl"
    traced_run(good)
    # cut before run_end (which holds the whole run): the run is rebuilt from the records
    lines = [line for line in good.read_text("utf-8").splitlines()
             if json.loads(line)["type"] != "run_end"]
    assert json.loads(lines[1])["type"] == "model_call"
    assert json.loads(lines[2])["type"] == "tool_call"
    for line, bad in ((2, '{"type": "model_call", "step": "x"}'),
                      (2, '{"type": "model_call", "step": 1, "reply": 5, "tokens": "many"}'),
                      (3, '{"type": "tool_call", "step": 1, "name": 3, "args": []}')):
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join([*lines[:line - 1], bad, *lines[line:]]) + "\n", "utf-8")
        with pytest.raises(ConfigError, match=re.escape(f"{path}, line {line}")) as exc:
            read_trace(path)
        assert "Traceback" not in str(exc.value)


HUGE = "9" * 400


@pytest.mark.parametrize(("line", "bad", "message"), [
    (2, "[1, 2]", "expected a trace record (an object with a type), got a list"),
    (2, "3.5", "expected a trace record (an object with a type), got 3.5"),
    (1, '{"type": "run_start", "task": "t", "resumed_steps": Infinity}',
     "run_start.resumed_steps: expected an integer, got Infinity"),
    (1, '{"type": "run_start", "task": "t", "resumed_steps": -1}',
     "run_start.resumed_steps: expected a number at least 0, got -1"),
    (2, f'{{"type": "model_call", "step": 1, "tool_calls": [], "seconds": {HUGE}}}',
     "model_call.seconds: expected a number in range, got a number of 400 digits"),
    (2, '{"type": "model_call", "step": 1, "tool_calls": [], "prompt_tokens": NaN}',
     "model_call.prompt_tokens: expected an integer, got NaN"),
    (2, '{"type": "model_call", "step": 1, "tool_calls": [{"type": "tool_call"}]}',
     "model_call.tool_calls[0].name: missing"),
    (3, f'{{"type": "tool_call", "step": 1, "name": "f", "observation": "o", "ok": true, '
        f'"seconds": -{HUGE}}}', "tool_call.seconds: expected a number in range"),
    (4, '{"type": "observation", "step": 1, "message": 5}',
     "observation.message: expected a string, got 5"),
])
def test_a_record_of_the_wrong_shape_in_a_cut_trace_is_named(
    tmp_path: Path, line: int, bad: str, message: str
) -> None:
    """A trace without its run_end is rebuilt from its records: each is checked, and a record
    of the wrong shape, a number that is not finite or has 400 digits is an error naming the
    file, the line, the record and the field, not a traceback (nor one inside the error)."""
    good = tmp_path / "good.jsonl"
    traced_run(good)
    lines = [line for line in good.read_text("utf-8").splitlines()
             if json.loads(line)["type"] != "run_end"]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([*lines[:line - 1], bad, *lines[line:]]) + "\n", "utf-8")
    with pytest.raises(ConfigError) as exc:
        read_trace(path)
    assert str(exc.value).startswith(f"{path}, line {line}: {message}")


def test_a_review_record_of_any_shape_replays(tmp_path: Path) -> None:
    """The review's record on its step is JSON of any shape in a saved run: replaying the draft
    before it gives the draft, with the reasons it can read."""
    draft = Step(1, reply=parse_reply(json.dumps({"thought": "t", "action": {
        "final_answer": "draft"}})))
    for record, reasons in (([1], ()), ({"reasons": 3}, ()), ({"reasons": ["x", 2]}, ("x", "2"))):
        review = Step(2, reply=draft.reply, origin="review", records={"review": record},
                      in_history=False)
        run = RunResult("t", "final_answer", "draft", [draft, review])
        [answer, *_] = [e for e in replay_events(run) if isinstance(e, FinalAnswer)]
        assert answer.draft and answer.reasons == reasons


def test_an_answer_a_policy_set_aside_replays_as_no_final_answer() -> None:
    from react_agent import Agent, ScriptedModel
    from react_agent.policies import MissedCall, default_policies

    replies = [json.dumps({"thought": "t", "action": {"final_answer": "From memory."}}),
               ModelReply("yes", choices={"yes": 0.9, "no": 0.1}), REPLIES[0],
               json.dumps({"thought": "t", "action": {"final_answer": "Sunny."}})]
    policies = default_policies(use=[MissedCall()], off=["review"])
    run = Agent(ScriptedModel(replies), weather(), policies=policies).run("Weather?")
    assert run.final_answer == "Sunny."
    answers = [e.text for e in replay_events(run) if isinstance(e, FinalAnswer)]
    assert answers == ["Sunny."]


def test_max_steps_best_effort_is_traced(tmp_path: Path) -> None:
    replies = [REPLIES[0], json.dumps({"thought": "t", "action": {"final_answer": "maybe"}})]
    traced_run(tmp_path / "t.jsonl", replies, max_steps=1)
    recs = records(tmp_path / "t.jsonl")
    assert [r["origin"] for r in recs if r["type"] == "model_call"] == [None, "best_effort"]
    assert recs[-1]["status"] == "max_steps" and recs[-1]["best_effort"] is True
    [run] = read_trace(tmp_path / "t.jsonl")
    events = list(replay_events(run))
    assert events[-2].best_effort is True


def test_a_reply_cut_by_the_token_limit_is_named_in_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    cut = ModelReply('{"thought": "I look it up.", "action": {"name": "get_wea', 30, 9, "length")
    traced_run(path, [cut, *REPLIES])
    calls = [r for r in records(path) if r["type"] == "model_call"]
    assert calls[0]["finish_reason"] == "length" and "token limit" in calls[0]["parse_error"]
    assert calls[1]["finish_reason"] == "stop"
    assert read_trace(path)[0].steps[0].finish_reason == "length"


def test_a_typed_run_is_traced_read_back_and_replayed_as_it_was_printed(tmp_path: Path) -> None:
    replies = [json.dumps({"thought": "t", "action": {"final_answer": "about 3"}}),
               json.dumps({"thought": "t", "action": {"final_answer": {"lines": "3"}}})]
    live = io.StringIO()
    with TraceWriter(tmp_path / "t.jsonl") as trace:
        result = Agent(ScriptedModel(replies), Toolbox(), output_type=dict[str, int],
                       callbacks=[Printer(live), trace],
                       policies=default_policies(off=["review"])).run("Count.")
    assert result.output == {"lines": 3}
    [again] = read_trace(tmp_path / "t.jsonl")
    assert again.output == {"lines": 3}
    replayed = io.StringIO()
    replay_printer = Printer(replayed)
    for event in replay_events(again):
        replay_printer(event)
    assert replayed.getvalue() == live.getvalue()
    assert "Output does not fit: " in live.getvalue()
    assert 'Output: {"lines": 3}' in live.getvalue()


@pytest.mark.parametrize("framed", [True, False])
def test_a_trace_cut_before_a_steps_observation_rebuilds_it_as_the_run_sent_it(
        tmp_path: Path, framed: bool) -> None:
    path = tmp_path / "t.jsonl"
    result = traced_run(path, config=AgentConfig(frame_observations=framed))
    cut_after(path, 3)  # the first step's tool_call kept, its observation record lost
    [run] = read_trace(path)
    assert run.messages == result.messages[:4]
    assert run.messages[3]["content"].startswith("Observation (" if framed else "Observation:")
