"""Tool routing: with many tools, show the model only those that match the task.

Small models pick wrong tools, and the prompt grows, when a toolbox is long. Before a run, each
tool is scored against the task by a cheap lexical match (:func:`react_agent._lexical.rank` over
the tool's name, description, group label and argument names, descriptions and enum values),
and the ``routing_top_k`` best that match at all are shown. A task that matches no tool (for
instance a question in another language than the descriptions) keeps every tool: routing
never leaves the model without the tool it needs because of a vocabulary gap. The tools not
shown can still be called if the model names them.
"""

from __future__ import annotations

import json
from typing import Any

from .._lexical import rank
from ..tools._toolbox import Tool, Toolbox

ROUTING_MODES = ("auto", "lexical", "off")
"""``auto``: route toolboxes of more than ``threshold`` tools; ``lexical``: route any toolbox;
``off``: show every tool."""


def select_tools(
    toolbox: Toolbox, task: str, *, mode: str = "auto", threshold: int = 7, top_k: int = 5
) -> Toolbox:
    """The tools to show for ``task``.

    Args:
        toolbox: every tool the agent has.
        task: the user's task, matched against each tool's words (:func:`tool_text`).
        mode: one of :data:`ROUTING_MODES`.
        threshold: with ``mode="auto"``, toolboxes of at most this many tools are not routed.
        top_k: the most tools shown.

    Returns:
        ``toolbox`` itself when routing does not apply or no tool matches the task at all;
        else a new Toolbox of the (at most ``top_k``) tools that match the task best, in
        registration order, leaving out tools that do not match at all.
    """
    routed = mode == "lexical" or (mode == "auto" and len(toolbox) > threshold)
    if not routed:
        return toolbox
    tools = list(toolbox.values())
    scores = rank(task, [tool_text(t) for t in tools])
    if max(scores, default=0.0) <= 0:
        return toolbox
    ranked = sorted(range(len(tools)), key=lambda i: (-scores[i], i))
    best = [i for i in ranked[:top_k] if scores[i] > 0]
    return Toolbox([tools[i] for i in sorted(best)])


def tool_text(tool: Tool) -> str:
    """The words a tool is matched on."""
    parts = [tool.name, tool.description, tool.group or ""]
    for name, spec in (tool.parameters.get("properties") or {}).items():
        parts.append(name)
        if isinstance(spec, dict):
            parts.append(str(spec.get("description", "")))
            parts.extend(json.dumps(v, ensure_ascii=False) for v in _enum(spec))
    return " ".join(parts)


def _enum(spec: dict[str, Any]) -> list[Any]:
    values = spec.get("enum")
    return values if isinstance(values, list) else []
