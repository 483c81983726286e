"""Comparisons computed from the results of one tool called for several entities."""

from __future__ import annotations

import json

from react_agent.comparison import comparison
from react_agent.types import ToolCall, ToolResult


def weather(city: str, temperature: float, ok: bool = True) -> ToolResult:
    observation = json.dumps({"city": city, "temperature_c": temperature, "humidity": "80%",
                              "wind_kph": 10}, ensure_ascii=False)
    return ToolResult(ToolCall("get_weather", {"city": city}), observation, ok=ok)


def test_two_cities_give_highest_lowest_and_the_exact_difference() -> None:
    results = [weather("成都", 16.9), weather("哈尔滨", -6.4)]
    assert comparison(results, results) == (
        "- temperature_c: highest 16.9 (成都), lowest -6.4 (哈尔滨), difference 23.3")


def test_earlier_results_of_the_same_tool_count_and_repeats_count_once() -> None:
    first, second = weather("Oslo", 3.5), weather("Rome", 19)
    later = [first, weather("Oslo", 3.5), second]
    assert comparison(later, [second]) == (
        "- temperature_c: highest 19 (Rome), lowest 3.5 (Oslo), difference 15.5")


def test_numbers_in_strings_count_and_units_do_not() -> None:
    quotes = [ToolResult(ToolCall("quote", {"ticker": t}), json.dumps(
        {"price": p, "change": "-0.5%"}), ok=True) for t, p in [("AAA", "417.32"),
                                                                ("BBB", "903.56")]]
    assert comparison(quotes, quotes[1:]) == (
        "- price: highest 903.56 (BBB), lowest 417.32 (AAA), difference 486.24")


def test_nothing_to_compare() -> None:
    one = [weather("Oslo", 3.5)]
    assert comparison(one, one) == ""
    failed = [weather("Oslo", 3.5), weather("Rome", 19, ok=False)]
    assert comparison(failed, failed) == ""
    text = [ToolResult(ToolCall("get_weather", {"city": c}), f"{c}: 3 °C", ok=True)
            for c in ("Oslo", "Rome")]
    assert comparison(text, text) == ""
    other = [weather("Oslo", 3.5), weather("Rome", 19)]
    assert comparison(other, [ToolResult(ToolCall("x", {}), "{}", ok=True)]) == ""
