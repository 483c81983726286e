"""Tool routing: with many tools, show the model only those that match the task.

Small models pick wrong tools, and the prompt grows, when a toolbox is long. Before a run, each
tool is scored against the task by a cheap lexical match (:func:`react_agent.lexical.rank` over
the tool's name, description, group label and argument names, descriptions and enum values),
and the ``routing_top_k`` best that match at all are shown. A task that matches no tool (for
instance a question in another language than the descriptions) keeps every tool: routing
never leaves the model without the tool it needs because of a vocabulary gap. The tools not
shown can still be called if the model names them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .lexical import rank
from .toolbox import Tool, Toolbox

if TYPE_CHECKING:
    from .agent import AgentConfig

ROUTING_MODES = ("auto", "lexical", "off")


def select_tools(toolbox: Toolbox, task: str, config: AgentConfig) -> Toolbox:
    """The tools to show for ``task``: ``toolbox`` itself unless routing applies, else a new
    Toolbox of the (at most ``config.routing_top_k``) tools that match the task best, in
    registration order; tools that do not match at all are left out."""
    routed = config.routing == "lexical" or (
        config.routing == "auto" and len(toolbox) > config.routing_threshold
    )
    if not routed:
        return toolbox
    tools = list(toolbox.values())
    scores = rank(task, [tool_text(t) for t in tools])
    if max(scores, default=0.0) <= 0:
        return toolbox
    ranked = sorted(range(len(tools)), key=lambda i: (-scores[i], i))
    best = [i for i in ranked[: config.routing_top_k] if scores[i] > 0]
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
