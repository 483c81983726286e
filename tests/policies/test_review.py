"""Tests for react_agent.policies._review: the cheap checks that decide whether a draft final
answer gets a focused review call (:func:`gaps`), and that call (:class:`Review`), also made
instead of ending a loop with ``loop_detected``."""

from __future__ import annotations

import pytest
from helpers import TASK, act, call_lookup, counting_toolbox, final, run, weather_toolbox

from react_agent import Agent, RunResult, Toolbox, prompts
from react_agent.events import FinalAnswer, ModelCallFinished, PolicyNote, ReplyParsed, RunFinished
from react_agent.models import ScriptedModel
from react_agent.policies import Review, default_policies
from react_agent.policies._review import LOOP_REASON, facts, gaps, main_script
from react_agent.types import ToolCall, ToolResult

ALWAYS = default_policies(use=[Review(mode="always")])
"""The default policies, with every draft reviewed."""


@pytest.fixture
def toolbox() -> Toolbox:
    return weather_toolbox()


WEATHER = ToolResult(
    ToolCall("get_weather", {"city": "杭州"}),
    '{"condition": "小雨", "temperature_c": 18.5, "chance_of_rain": "75%"}', ok=True)
FAILED = ToolResult(ToolCall("get_weather", {"city": "X"}), "Error: no city 42", ok=False,
                    error="raised")


@pytest.mark.parametrize(("text", "script"), [
    ("It is raining.", "LATIN"), ("现在下小雨。", "CJK"), ("雨が降っています", "CJK"),
    ("Идёт дождь", "CYRILLIC"), ("비가 와요", "HANGUL"), ("42 %", None),
    ("The weather in杭州 is light rain.", "LATIN"),
])
def test_main_script(text: str, script: str | None) -> None:
    assert main_script(text) == script


def test_a_complete_draft_has_no_gaps() -> None:
    assert gaps("杭州下雨吗？", "杭州现在小雨，气温 18.5 度，需要带伞。", [WEATHER]) == []


def test_a_draft_in_another_script_is_faulted() -> None:
    found = gaps("杭州下雨吗？", "It is raining in Hangzhou, 18.5 °C.", [WEATHER])
    assert found == ["is written in LATIN script, the task in CJK"]


def test_a_draft_without_any_returned_value_is_faulted() -> None:
    assert gaps("杭州下雨吗？", "需要带伞。", [WEATHER]) == [
        "states none of the values get_weather returned"]


def test_a_word_the_result_states_counts_as_a_value() -> None:
    plain = ToolResult(ToolCall("site_conditions", {"site": "the yard"}),
                       "the yard: overcast, 12 degrees celsius", ok=True)
    assert gaps("Is it overcast at the yard?", "Yes, it is overcast at the yard.", [plain]) == [
        "states none of the values site_conditions returned"]  # the task's own word
    assert gaps("Is it warm at the yard?", "No, it is overcast at the yard.", [plain]) == []
    assert gaps("杭州下雨吗？", "现在是小雨，需要带伞。", [WEATHER]) == []  # a JSON string value
    assert gaps("Is it warm at the yard?", "No, it is cool there.", [plain]) == [
        "states none of the values site_conditions returned"]  # "cool" is in no result
    status = ToolResult(ToolCall("get_order", {"order_id": "A-1"}),
                        '{"status": "packed", "eta": "2030-01-02"}', ok=True)
    assert gaps("Where is order A-1?", "It is on its way.", [status]) == [
        "states none of the values get_order returned"]
    assert gaps("Where is order A-1?", "It has been packed.", [status]) == []


def test_a_result_nested_too_deeply_to_walk_is_read_as_plain_text() -> None:
    deep = ToolResult(ToolCall("lookup", {"q": "x"}), "[" * 3000 + "7" + "]" * 3000, ok=True)
    assert gaps("Look x up.", "It is 7.", [deep]) == []
    assert gaps("Look x up.", "Nothing.", [deep]) == ["states none of the values lookup returned"]


def test_words_alone_never_fault_an_answer() -> None:
    sent = ToolResult(ToolCall("send_email", {"to": "a@b.example"}),
                      "Email sent to a@b.example", ok=True)  # no number to state
    assert gaps("Email Ann.", "Done.", [sent]) == []


def test_a_result_a_later_call_took_its_argument_from_need_not_be_stated() -> None:
    found = ToolResult(ToolCall("find_person", {"name": "Ann Lee"}),
                       '{"name": "Ann Lee", "room": 12, "phone": "+1 202 555 0199"}', ok=True)
    sms = ToolResult(ToolCall("send_text", {"phone": "+1 202 555 0199", "text": "Hi"}),
                     "Sent.", ok=True, args={"phone": "+1 202 555 0199", "text": "Hi"})
    assert gaps("Text Ann Lee hi.", "I texted Ann Lee.", [found, sms]) == []
    assert gaps("Text Ann Lee hi.", "I texted Ann Lee.", [found]) == [
        "states none of the values find_person returned"]  # nothing took its values
    failed = ToolResult(sms.call, "Error: busy", ok=False, error="tool_error", args=sms.args)
    assert gaps("Text Ann Lee hi.", "I texted Ann Lee.", [found, failed]) == [
        "states none of the values find_person returned"]  # only a call that ran counts
    again = ToolResult(ToolCall("find_person", {"name": "Ann Lee"}), found.observation, ok=True,
                       args={"name": "Ann Lee"})  # the task's own words are not passed on
    assert gaps("Text Ann Lee hi.", "I texted Ann Lee.", [found, again]) == [
        "states none of the values find_person returned"]


def test_each_tool_must_be_represented_by_one_of_its_values() -> None:
    lines = ToolResult(ToolCall("file_info", {"path": "a.md"}), "a.md: 786 lines, 5441 bytes",
                       ok=True)
    product = ToolResult(ToolCall("calculate", {"expression": "786 * 3"}), "786 * 3 = 2358",
                         ok=True)
    task = "How many lines does a.md have, times 3?"
    assert gaps(task, "a.md has 2358 lines, times 3.", [lines, product]) == [
        "states none of the values file_info returned"]
    assert gaps(task, "a.md has 786 lines; times 3 that is 2358.", [lines, product]) == []


def test_numbers_from_the_task_or_a_failed_call_do_not_count() -> None:
    order = ToolResult(ToolCall("get_order", {"id": "7310"}), "order 7310: packed", ok=True)
    assert gaps("Where is order 7310?", "Order 7310 has been packed.", [order]) == []
    assert gaps("Where is it?", "Not found.", [FAILED]) == []


def test_thousands_separators_are_ignored() -> None:
    price = ToolResult(ToolCall("price", {}), "1703.62 CNY", ok=True)
    assert gaps("How much?", "It costs 1,703.62 CNY.", [price]) == []


def test_facts_lists_the_successful_results() -> None:
    assert facts([WEATHER, FAILED]) == (
        '- get_weather {"city": "杭州"}: {"condition": "小雨", "temperature_c": 18.5, '
        '"chance_of_rain": "75%"}')
    assert facts([]) == "(none)"


# -- the focused call for the final answer ------------------------------------------------------
def reviewed(result: RunResult) -> list[bool]:
    """For each step, whether it is a focused call of the Review policy."""
    return [s.origin == "review" for s in result.steps]


def test_the_review_call_rewrites_an_incomplete_draft(toolbox: Toolbox) -> None:
    replies = [act("get_weather", city="Paris"), act("get_weather", city="Rome"),
               final("Rome is warmer."), final("Rome (24 °C) is 6 °C warmer than Paris (18 °C).")]
    result, model = run(toolbox, replies, policies=ALWAYS)
    assert result.status == "final_answer"
    assert result.final_answer == "Rome (24 °C) is 6 °C warmer than Paris (18 °C)."
    assert reviewed(result) == [False, False, False, True]
    assert result.steps[2].final_answer == "Rome is warmer."  # the draft stays in the trajectory
    assert model.calls[3] == [result.messages[0], {"role": "user", "content": prompts.render(
        "policies/review", task=TASK, facts='- get_weather {"city": "Paris"}: 18 °C in Paris\n'
                                   '- get_weather {"city": "Rome"}: 24 °C in Rome')}]
    assert "Rome is warmer." not in str(model.calls[3])  # the draft is not shown
    assert result.messages[-1]["content"] == replies[3]  # the history ends with the answer
    events = [e for e in Agent(ScriptedModel(replies), toolbox, policies=ALWAYS).iter(TASK)
              if isinstance(e, FinalAnswer)]
    assert [(e.text, e.draft) for e in events] == [
        ("Rome is warmer.", True), ("Rome (24 °C) is 6 °C warmer than Paris (18 °C).", False)]


@pytest.mark.parametrize(
    "review_reply",
    [act("get_weather", city="Oslo"), "no JSON at all", final("   ")],
    ids=["a tool call", "unusable", "empty"],
)
def test_a_review_without_a_usable_answer_keeps_the_draft(toolbox: Toolbox,
                                                          review_reply: str) -> None:
    replies = [act("get_weather", city="Paris"), final("18 °C in Paris."), review_reply]
    result, _ = run(toolbox, replies, policies=ALWAYS)
    assert (result.status, result.final_answer) == ("final_answer", "18 °C in Paris.")
    assert [r.call.args for s in result.steps for r in s.results] == [{"city": "Paris"}]
    assert reviewed(result)[-1] and result.steps[-1].tool_calls == []  # not run


def test_a_review_answer_with_more_faults_than_the_draft_keeps_the_draft(
    toolbox: Toolbox,
) -> None:
    replies = [act("get_weather", city="Paris"), final("巴黎很暖和。"),
               final("Paris is warm.")]  # faults: no value -> no value, and the wrong script
    model = ScriptedModel(replies)
    result = Agent(model, toolbox).run("Paris 现在的气温是多少？暖和吗？")
    assert len(model.calls) == 3 and reviewed(result)[-1]
    assert result.final_answer == "巴黎很暖和。"
    assert result.messages[-1]["content"] == replies[1]


def test_a_review_answer_that_trades_one_fault_for_another_keeps_the_draft(
    toolbox: Toolbox,
) -> None:
    task = "Paris 现在的气温是多少？暖和吗？"
    traded = [act("get_weather", city="Paris"), final("Paris: 18 °C, warm."),  # wrong script
              final("巴黎很暖和。")]  # the task's script, but no value
    result = Agent(ScriptedModel(traded), toolbox).run(task)
    assert reviewed(result)[-1] and result.final_answer == "Paris: 18 °C, warm."
    fixed_one = [act("get_weather", city="Paris"), final("Paris is warm."),  # both faults
                 final("巴黎很暖和。")]  # one of them repaired, none added
    result = Agent(ScriptedModel(fixed_one), toolbox).run(task)
    assert reviewed(result)[-1] and result.final_answer == "巴黎很暖和。"


def test_a_model_error_in_the_review_keeps_the_draft(toolbox: Toolbox) -> None:
    result, _ = run(toolbox, [act("get_weather", city="Paris"), final("18 °C in Paris.")],
                    policies=ALWAYS)
    assert (result.status, result.final_answer) == ("final_answer", "18 °C in Paris.")
    assert result.error is None


def test_no_review_without_a_tool_call_or_when_turned_off(toolbox: Toolbox) -> None:
    result, model = run(toolbox, [final("Hello!")], policies=ALWAYS)
    assert len(model.calls) == 1 and not any(reviewed(result))
    replies = [act("get_weather", city="Paris"), final("Warm.")]
    result, model = run(toolbox, replies, policies=default_policies(off=["review"]))
    assert len(model.calls) == 2 and result.final_answer == "Warm."


def test_auto_reviews_only_a_draft_the_cheap_check_faults(toolbox: Toolbox) -> None:
    stated = [act("get_weather", city="Paris"), final("It is 18 °C in Paris.")]
    result, model = run(toolbox, stated)  # the default: Review(mode="auto")
    assert len(model.calls) == 2 and not any(reviewed(result))
    bare = [act("get_weather", city="Paris"), final("Paris is warmer."),
            final("Paris: 18 °C.")]
    result, model = run(toolbox, bare)
    assert len(model.calls) == 3 and result.final_answer == "Paris: 18 °C."
    review = result.steps[-1]
    assert review.records["review"] == {
        "reasons": ["states none of the values get_weather returned"]}
    assert review.notes == [["review", "Review", "the draft answer states none of the values "
                             "get_weather returned; asking again in a focused call"]]
    assert RunResult.from_dict(result.to_dict()).steps[-1].records == review.records


def test_a_loop_over_results_it_has_ends_in_a_focused_final_answer() -> None:
    toolbox, runs = counting_toolbox()
    answer = '{"thought": "I have it.", "action": {"final_answer": "value of a"}}'
    model = ScriptedModel([call_lookup('{"key": "a"}')] * 4 + [answer])
    events = list(Agent(model, toolbox, policies=default_policies(off=["repeat"])).iter("task"))
    result = events[-1].result
    assert (result.status, result.final_answer, runs) == ("final_answer", "value of a", ["a", "a"])
    assert [type(e) for e in events[-4:]] == [ModelCallFinished, ReplyParsed, FinalAnswer,
                                              RunFinished]
    focused_step = result.steps[-1]
    notes = [e for e in events if isinstance(e, PolicyNote)]
    assert [(e.step, e.policy, e.label) for e in notes] == [(focused_step, "review", "Loop")]
    focused = model.calls[-1]
    assert len(focused) == 2 and "value of a" in focused[1]["content"]  # the results, no history
    assert focused_step.origin == "review" and not focused_step.in_history
    assert focused_step.records["review"] == {"reasons": [LOOP_REASON]}
    assert model.schemas[:4] == [None] * 4  # Constrained(mode="off"): the steps go unconstrained,
    action = model.schemas[4]["properties"]["action"]  # the focused call must answer
    answer = {"type": "object", "properties": {"final_answer": {"type": "string"}},
              "required": ["final_answer"], "additionalProperties": False}
    assert action == {"anyOf": [answer]}
    off = Agent(ScriptedModel([call_lookup('{"key": "a"}')] * 4), counting_toolbox()[0],
                policies=default_policies(off=["review"])).run("task")
    assert off.status == "loop_detected"
