from __future__ import annotations

from typing import Any

import pytest

from react_agent.grounding import off_task, ungrounded
from react_agent.toolbox import Tool
from react_agent.types import ToolCall


def tool(**properties: Any) -> Tool:
    return Tool(name="t", description="d", parameters={"type": "object",
                                                        "properties": properties},
                func=lambda **_: "")


@pytest.mark.parametrize(("args", "known"), [
    ({"city": "Atlantis"}, "How many days are there in a leap year?"),
    ({"city": "北京"}, "帮我写一首关于春天的五言绝句。"),
    ({"name": "Time Converter"}, "How many minutes are there in 3.5 hours?"),
    ({"query": "the weather"}, "Write a haiku about autumn."),  # "the" ties nothing
    ({"city": "Atlantis", "days": 3}, "Write a haiku about 3 cats."),  # small numbers neither
])
def test_a_call_whose_values_come_from_nowhere_is_off_task(args: dict[str, Any],
                                                           known: str) -> None:
    loose = off_task(ToolCall("t", args), None, known)
    assert loose == [v for v in args.values() if isinstance(v, str)]


@pytest.mark.parametrize(("args", "known"), [
    ({"city": "paris"}, "Is it raining in Paris?"),  # case ignored
    ({"name": "Bob Okafor"}, "Text Bob from Sales."),  # one word is enough
    ({"query": "Kestrel 显示器"}, "Kestrel 的显示器多少钱？"),  # a CJK piece is enough
    ({"query": "27寸显示器"}, "那款 27 寸的显示器"),
    ({"amount": 4800, "from_currency": "JPY", "to_currency": "CNY"}, "4,800 日元是多少人民币？"),
    ({"base": "USD", "quote": "CNY"}, "美元兑人民币汇率是多少？"),  # codes say nothing
    ({"ticker": "AAPL"}, "How is Apple doing?"),
    ({"expression": "17.4 * 3"}, "It is 17.4 °C."),  # no words: not judged
    ({"city": "Lisbon"}, "Weather?\nObservation: Error: say 'Lisbon', not 'LX'"),  # a result
    ({"unit": "celsius"}, "Weather?"),  # an enum choice
])
def test_a_call_tied_to_the_task_or_saying_nothing_is_not(args: dict[str, Any],
                                                         known: str) -> None:
    enum_tool = tool(unit={"type": "string", "enum": ["celsius", "fahrenheit"]})
    assert off_task(ToolCall("t", args), enum_tool, known) == []


def test_a_grounded_number_grounds_the_whole_call() -> None:
    call = ToolCall("convert", {"amount": 12687.5, "note": "Atlantis"})
    assert off_task(call, None, "12,687.50 in all") == []
    assert off_task(call, None, "12,680 in all") == ["Atlantis"]


@pytest.mark.parametrize(
    ("args", "known", "refused"),
    [
        ({"to": "ann.lee@example.com"}, "Email Ann Lee.", "ann.lee@example.com"),
        ({"to": "Ann.Lee@Example.com"}, '{"email": "ann.lee@example.com"}', None),
        ({"phone": "13800138000", "text": "hi"}, "Text Chen.", "13800138000"),
        ({"phone": "15000216658"}, '{"phone": "+86 150 0021 6658"}', None),
        ({"phone": "+86 150 0021 6658"}, "phone: 150-0021-6658", None),
        ({"body": "Call me on 555 0199 123."}, "Tell Bo to call me.", "555 0199 123"),
        ({"to": ["a@b.co", "c@d.co"]}, "mail a@b.co", "c@d.co"),
        ({"order_id": "A-1042", "date": "2024-05-17"}, "Where is order 1042?", None),
        ({"amount": 1234567}, "convert it", None),  # numbers are not contact values
    ],
)
def test_made_up_addresses_and_numbers_are_not_sent(args: dict[str, Any], known: str,
                                                    refused: str | None) -> None:
    result = ungrounded(ToolCall("send", args), known)
    if refused is None:
        assert result is None
    else:
        assert result is not None and result.error == "ungrounded" and not result.ok
        assert f"{refused!r}" in result.observation
        assert "look it up with a tool first" in result.observation
