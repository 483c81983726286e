"""The cheap checks that decide whether a draft final answer gets a focused review call."""

from __future__ import annotations

import pytest

from react_agent.policies._review import facts, gaps, main_script
from react_agent.types import ToolCall, ToolResult

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
