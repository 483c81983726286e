from __future__ import annotations

from typing import Any

import pytest

from react_agent.policies._grounding import ungrounded, unstated
from react_agent.types import ToolCall


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
        kind = "an address" if "@" in refused else "a number"
        assert f"Do not make up {kind}:" in result.observation


@pytest.mark.parametrize(
    ("args", "said", "missing"),
    [
        ({"value": 36.9, "unit": "°F"}, '{"temperature_c": 33.1}', ["36.9"]),
        ({"value": 33.1, "unit": "°F"}, '{"temperature_c": 33.1}', []),
        ({"amount": 4200, "days": 3}, "Send 4,200 yen.", []),  # 3: a count, not a value
        ({"amount": 4263.0}, "Send 4,200 yen plus 1.5%.", ["4263.0"]),
        ({"to": "the client's mailbox"}, "Mail the client of order B-77.",
         ["the client's mailbox"]),
        ({"city": "berlin", "loud": True}, "Weather in Berlin?", []),  # any case; no bools
        ({"to": ["a@b.co", "c@d.co"]}, "mail a@b.co", ["c@d.co"]),
        ({"units": "fahrenheit"}, "in F please", []),  # one of the argument's enum
        ({"text": "Sorry, running late", "to": "Bo"}, "Tell Bo we are late.",
         ["Sorry, running late"]),  # a message's text is never stated
    ],
)
def test_unstated_lists_the_values_nobody_stated(args: dict[str, Any], said: str,
                                                 missing: list[str]) -> None:
    schema = {"type": "object", "properties": {"units": {"enum": ["celsius", "fahrenheit"]}}}
    assert unstated(ToolCall("tool", args), said, schema) == missing
