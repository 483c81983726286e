"""Secrets masked before a run is shown (react_agent.harness._redaction); the page's use of
it is tested in test_view.py."""

from __future__ import annotations

import pytest

from react_agent import ConfigError
from react_agent.harness import SECRET_PATTERNS, Redactor


def test_redactor_masks_arguments_values_and_pairs() -> None:
    redactor = Redactor(["token"], [*SECRET_PATTERNS, r"\d{3}-\d{4}"])
    text = ('{"token": "abc\\"def", \'token\': \'x\', token=zzz&a=1 call 555-1234 '
            "key sk-proj-0123456789abcdefXYZ")
    masked = redactor.text(text)
    assert masked == ('{"token": "[redacted]", \'token\': \'[redacted]\', token=[redacted]&a=1 '
                      "call [redacted] key [redacted]")
    with pytest.raises(ConfigError, match="regular expression"):
        Redactor(patterns=["(unclosed"])
