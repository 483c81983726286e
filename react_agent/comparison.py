"""Comparisons computed from tool results, shown to the model with the observations.

Small models read "16.9" and "-6.4" correctly and still call the first one colder, or subtract
the wrong pair. When one tool has returned JSON objects for two or more different calls (the
same lookup for several cities, tickers, products), :func:`comparison` states, for every
numeric field they share and do not agree on, which call has the highest and the lowest value
and the difference, computed exactly (``decimal``). It only restates the results; the model
still decides what the task asks for.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from .types import ToolResult

MAX_FIELDS = 6
"""At most this many fields are compared per tool (the first ones of the first result)."""

_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def comparison(results: list[ToolResult], new: list[ToolResult]) -> str:
    """Lines comparing the numeric fields of ``results`` (every result of the run so far) for
    the tools called in ``new`` (this step's results), or ``""`` when there is nothing to
    compare. One line per field, e.g.
    ``- temperature_c: highest 16.9 (成都), lowest -6.4 (哈尔滨), difference 23.3``.

    A result counts when its call succeeded and its observation is a JSON object; repeated
    identical calls count once; a numeric field is a JSON number or a string holding only a
    number (``"417.32"``)."""
    lines = []
    for tool in dict.fromkeys(r.call.name for r in new if r.ok):
        rows = _rows(r for r in results if r.call.name == tool)
        if len(rows) < 2:
            continue
        for name in [k for k in rows[0][1] if all(k in row for _, row in rows)][:MAX_FIELDS]:
            values = [(label, row[name]) for label, row in rows]
            high = max(values, key=lambda v: v[1])
            low = min(values, key=lambda v: v[1])
            if high[1] != low[1]:
                lines.append(f"- {name}: highest {high[1]} ({high[0]}), lowest {low[1]} "
                             f"({low[0]}), difference {high[1] - low[1]}")
    return "\n".join(lines)


def _rows(results: Any) -> list[tuple[str, dict[str, Decimal]]]:
    """(label, numeric fields) per distinct successful call whose observation is an object;
    the label is the call's argument values, joined by commas."""
    rows: dict[str, dict[str, Decimal]] = {}
    for r in results:
        if not r.ok:
            continue
        try:
            data = json.loads(r.observation)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        label = ", ".join(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                          for v in r.call.args.values())
        rows.setdefault(label or r.call.name, {
            k: n for k, v in data.items() if (n := _number(v)) is not None})
    return list(rows.items())


def _number(value: Any) -> Decimal | None:
    """``value`` as a Decimal when it is a number or a string of only a number, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        text = repr(value)
    elif isinstance(value, str) and _PLAIN_NUMBER.fullmatch(value.strip()):
        text = value.strip()
    else:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None
