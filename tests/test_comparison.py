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


def test_items_of_one_result_are_compared_by_their_first_text_field() -> None:
    flights = json.dumps([
        {"flight": "XY100", "departs": "08:00", "price": "1240.00", "currency": "CNY"},
        {"flight": "XY200", "departs": "07:30", "price": "1086.00", "currency": "CNY"},
        {"flight": "XY300", "departs": "13:45", "price": "1128.00", "currency": "CNY"}])
    found = [ToolResult(ToolCall("search", {"route": "A-B"}), flights, ok=True)]
    assert comparison(found, found) == (
        "- price: highest 1240.00 (XY100), lowest 1086.00 (XY200), difference 154.00")
    nested = json.dumps({"city": "Oslo", "days": [{"day": "mon", "low_c": -2},
                                                  {"day": "tue", "low_c": 1}]})
    forecast = [ToolResult(ToolCall("forecast", {"city": "Oslo"}), nested, ok=True)]
    assert comparison(forecast, forecast) == (
        "- low_c: highest 1 (tue), lowest -2 (mon), difference 3")
