"""JSON values as the package handles them, at the lowest layer so that every subpackage may
use it:

- JSON text as the agent writes it, by encoders made once: ``json.dumps`` with any option
  builds a new encoder at every call, and a step writes JSON several times (call signatures,
  tool results, values shown in observations);
- :func:`walk`: the one depth-bounded walk of a JSON value (files read, tool schemas, a tool
  call's arguments), without recursion, so no input can exhaust the stack.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
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


Trail = tuple["Trail", Any, bool] | None
"""Where a value sits, from its container back to the top: ``(the container's trail, the key
or index, whether the container is an array)``; ``None`` for the top value. Made in O(1) per
value (no path is written out unless asked: :func:`path_of`)."""


Node = tuple[Any, int, Trail]
"""One value met by :func:`walk`: ``(value, depth, trail)``: the value (a dict, a list or a
scalar); its level (the walked value is at 1, the items of a container at its depth + 1); where
it sits (:data:`Trail`; always ``None`` unless the walk keeps trails)."""


def walk(value: Any, max_depth: int, *, trails: bool = False) -> Iterator[Node]:
    """Every value inside ``value`` (``value`` first) as a :data:`Node`, depth first without
    recursion: the items of a container are met last first (it keeps a stack).

    The items of a container deeper than ``max_depth`` are not met: the container itself is,
    with its depth, and the caller decides what that means (an error, a note, a cut). So the
    deepest values met are at ``max_depth + 1``, and the work is linear in the values met,
    whatever the nesting. ``trails=True`` records where each value sits (:func:`path_of`).
    """
    stack: list[Node] = [(value, 1, None)]
    while stack:
        node = stack.pop()
        yield node
        item, depth, trail = node
        if depth > max_depth:
            continue
        depth += 1
        if isinstance(item, dict):
            if trails:
                stack.extend((v, depth, (trail, k, False)) for k, v in item.items())
            else:
                stack.extend((v, depth, None) for v in item.values())
        elif isinstance(item, list):
            if trails:
                stack.extend((v, depth, (trail, i, True)) for i, v in enumerate(item))
            else:
                stack.extend((v, depth, None) for v in item)


def is_container(value: Any) -> bool:
    """Whether ``value`` is a JSON object or array (a dict or a list)."""
    return isinstance(value, (dict, list))


def path_of(trail: Trail) -> list[tuple[Any, bool]]:
    """The keys from the top value down to the value at ``trail``: ``(key or index, whether it
    indexes an array)`` each; ``[]`` for the top value."""
    keys: list[tuple[Any, bool]] = []
    while trail is not None:
        trail, key, in_array = trail
        keys.append((key, in_array))
    keys.reverse()
    return keys
