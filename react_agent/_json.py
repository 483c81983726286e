"""JSON text as the agent writes it, by encoders made once: ``json.dumps`` with any option
builds a new encoder at every call, and a step writes JSON several times (call signatures,
tool results, values shown in observations)."""

from __future__ import annotations

import json
from typing import Any

_SORTED = json.JSONEncoder(sort_keys=True)
_TEXT = json.JSONEncoder(ensure_ascii=False)
_SHOWN = json.JSONEncoder(ensure_ascii=False, default=repr)


def sorted_json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True)``: the same text for equal objects.

    Raises:
        TypeError, ValueError, RecursionError: as ``json.dumps``.
    """
    return _SORTED.encode(value)


def text_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``: non-ASCII text as it is.

    Raises:
        TypeError, ValueError, RecursionError: as ``json.dumps``.
    """
    return _TEXT.encode(value)


def shown_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=repr)``: what JSON cannot hold as its
    ``repr``.

    Raises:
        ValueError, RecursionError: as ``json.dumps`` (a ``repr`` that raises raises too).
    """
    return _SHOWN.encode(value)
