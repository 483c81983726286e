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
"""At most this many fields are compared per group (the first ones of the first row)."""

_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def comparison(results: list[ToolResult], new: list[ToolResult]) -> str:
    """Lines comparing numeric fields, or ``""`` when there is nothing to compare:

    - across calls: for each tool called in ``new`` (this step's results), its results in
      ``results`` (every result of the run so far) that are JSON objects, one row per distinct
      call (labelled by its argument values);
    - within a result: each result in ``new`` that is a JSON list of objects (or an object
      holding one such list), one row per item (labelled by the item's first text field).

    One line per numeric field the rows share and do not agree on, e.g.
    ``- temperature_c: highest 16.9 (成都), lowest -6.4 (哈尔滨), difference 23.3``. A numeric
    field is a JSON number or a string holding only a number (``"417.32"``); failed calls do
    not count."""
    groups = [_call_rows([r for r in results if r.call.name == tool])
              for tool in dict.fromkeys(r.call.name for r in new if r.ok)]
    groups += [_item_rows(r) for r in new if r.ok]
    return "\n".join(line for rows in groups if len(rows) >= 2 for line in _lines(rows))


def _lines(rows: list[tuple[str, dict[str, Decimal]]]) -> list[str]:
    lines = []
    for name in [k for k in rows[0][1] if all(k in row for _, row in rows)][:MAX_FIELDS]:
        values = [(label, row[name]) for label, row in rows]
        high = max(values, key=lambda v: v[1])
        low = min(values, key=lambda v: v[1])
        if high[1] != low[1]:
            lines.append(f"- {name}: highest {high[1]} ({high[0]}), lowest {low[1]} "
                         f"({low[0]}), difference {high[1] - low[1]}")
    return lines


def _call_rows(results: list[ToolResult]) -> list[tuple[str, dict[str, Decimal]]]:
    """(label, numeric fields) per distinct successful call whose observation is an object;
    the label is the call's argument values, joined by commas."""
    rows: dict[str, dict[str, Decimal]] = {}
    for r in results:
        data = _json(r.observation) if r.ok else None
        if isinstance(data, dict):
            label = ", ".join(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                              for v in r.call.args.values())
            rows.setdefault(label or r.call.name, _numeric(data))
    return list(rows.items())


def _item_rows(result: ToolResult) -> list[tuple[str, dict[str, Decimal]]]:
    """(label, numeric fields) per object in a result that is a list of objects, or an object
    holding exactly one such list; the label is the item's first text field."""
    data = _json(result.observation)
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        return []
    rows = []
    for n, item in enumerate(data, 1):
        texts = [v for v in item.values() if isinstance(v, str) and _number(v) is None]
        rows.append((texts[0] if texts else f"item {n}", _numeric(item)))
    return rows


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _numeric(data: dict[str, Any]) -> dict[str, Decimal]:
    return {k: n for k, v in data.items() if (n := _number(v)) is not None}


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
