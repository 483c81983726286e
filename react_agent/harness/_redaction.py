"""Secrets masked in a run before it is shown (``react-agent view --redact``, ``run --html``):
the values of named arguments wherever they appear, and what the patterns of API keys and
tokens match."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ConfigError
from ..types import RunResult

SECRET_PATTERNS: tuple[str, ...] = (
    r"\bsk-[A-Za-z0-9_-]{16,}",  # OpenAI-style API keys (sk-..., sk-proj-..., sk-ant-...)
    r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{8,}",  # the token of "Authorization: Bearer ..."
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
)
"""What is masked in every text of a view unless other ``patterns`` are given (regular
expressions; the whole match is replaced by ``[redacted]``)."""

MASK = "[redacted]"
"""What a masked value is replaced with."""


class Redactor:
    """Masks secrets in a run before it is shown: the values of the arguments named in
    ``keys`` (case-insensitively, at any depth of a call's arguments), those values and
    ``"key": value`` / ``key=value`` pairs wherever they appear in a text (replies, observations,
    messages), and every match of ``patterns``.

    Raises:
        ConfigError: a pattern is not a valid regular expression.
    """

    def __init__(self, keys: Iterable[str] = (), patterns: Iterable[str] | None = None) -> None:
        if isinstance(keys, str):  # "password,token"
            keys = keys.split(",")
        self.keys = {k.strip().lower() for k in keys if k.strip()}
        self.patterns = list(SECRET_PATTERNS if patterns is None else patterns)
        try:
            self._compiled = [re.compile(p) for p in self.patterns]
        except re.error as exc:
            raise ConfigError(f"A redaction pattern is not a regular expression: {exc}") from exc
        self._pairs = None
        if self.keys:
            names = "|".join(re.escape(k) for k in sorted(self.keys, key=len, reverse=True))
            self._pairs = re.compile(
                r"""(?i)(["']?)\b(""" + names + r""")\b\1(\s*[:=]\s*)"""
                r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s"',;&}\]]+)""")

    @property
    def active(self) -> bool:
        return bool(self.keys or self.patterns)

    def run(self, result: RunResult) -> RunResult:
        """A copy of ``result`` with its secrets masked."""
        if not self.active:
            return result
        data = result.to_dict()
        values: set[str] = set()
        if self.keys:
            for step in data["steps"]:
                for call in [*step["tool_calls"], *step["results"]]:
                    for args in (call.get("args"), call.get("cleaned_args")):
                        self._collect(args, values, False)
        literals = sorted((v for v in values if len(v) >= 4), key=len, reverse=True)
        masked = self._walk(data, literals, False)
        return RunResult.from_dict(masked, "redacted run")

    def text(self, text: str, literals: Sequence[str] = ()) -> str:
        """``text`` with the secrets masked."""
        for value in literals:
            text = text.replace(value, MASK)
        if self._pairs is not None:
            text = self._pairs.sub(_mask_pair, text)
        for pattern in self._compiled:
            text = pattern.sub(MASK, text)
        return text

    def _collect(self, value: Any, found: set[str], named: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                self._collect(item, found, named or str(key).lower() in self.keys)
        elif isinstance(value, list):
            for item in value:
                self._collect(item, found, named)
        elif named and value is not None and not isinstance(value, bool):
            found.add(str(value))

    def _walk(self, value: Any, literals: Sequence[str], in_args: bool) -> Any:
        if isinstance(value, str):
            return self.text(value, literals)
        if isinstance(value, list):
            return [self._walk(v, literals, in_args) for v in value]
        if isinstance(value, dict):
            return {
                k: MASK if in_args and str(k).lower() in self.keys
                else self._walk(v, literals, in_args or k in ("args", "cleaned_args"))
                for k, v in value.items()
            }
        return value


def _mask_pair(match: re.Match[str]) -> str:
    value = match.group(4)
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group(1)}{match.group(2)}{match.group(1)}{match.group(3)}{quote}{MASK}{quote}"
