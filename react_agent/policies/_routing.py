"""Tool routing: with many tools, show the model only those that match the task.

Small models pick wrong tools, and the prompt grows, when a toolbox is long. Before a run, each
tool is scored against the task by a cheap lexical match (:func:`rank` over
the tool's name, description, group label and argument names, descriptions and enum values),
and the ``top_k`` best that match at all are shown. A task that matches no tool (for
instance a question in another language than the descriptions) keeps every tool: routing
never leaves the model without the tool it needs because of a vocabulary gap. The tools not
shown can still be called if the model names them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from .._lexical import rank
from ..engine import Policy
from ..errors import ConfigError
from ..tools import Tool, Toolbox

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


@dataclass(frozen=True)
class Routing(Policy):
    """Show the model only the tools that best match the task (:func:`select_tools`).

    Args:
        mode: ``"auto"`` routes toolboxes of more than ``threshold`` tools; ``"lexical"``
            always; ``"off"`` shows every tool.
        threshold: with ``mode="auto"``, toolboxes of at most this many tools are not routed.
        top_k: the most tools shown.

    Raises:
        ConfigError: an unknown ``mode``, or ``top_k`` below 1.
    """

    name: ClassVar[str] = "routing"
    mode: str = "auto"
    threshold: int = 7
    top_k: int = 5

    def __post_init__(self) -> None:
        if self.mode not in ROUTING_MODES:
            raise ConfigError(f"Routing mode must be one of {', '.join(ROUTING_MODES)}.")
        if self.top_k < 1:
            raise ConfigError("Routing's top_k must be at least 1.")

    def tools(self, task: str, toolbox: Toolbox) -> Toolbox:
        return select_tools(toolbox, task, mode=self.mode, threshold=self.threshold,
                            top_k=self.top_k)
