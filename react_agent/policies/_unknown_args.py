"""A call that is valid but for arguments its tool does not take: run without them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from .._lexical import did_you_mean
from ..engine import Policy, Run
from ..tools import Tool, check_args, clean_args
from ..types import Reply, Step, ToolCall

MAX_DROPPED = 8
"""A call with more unknown arguments than this is refused as sent: it is not the call that
only added one."""


@dataclass(frozen=True)
class DropUnknownArgs(Policy):
    """A call whose only fault is arguments its tool does not take (a ``unit`` added to a lookup
    that takes only a ``city``) runs without them, and the observation says which were left out
    (``prompts/policies/unknown_args.md``). Refused as before (the model told why and asked
    again) when an unknown name looks like a misspelling of one of the tool's arguments (its
    value was meant for that one: ``did_you_mean``), when the call is invalid without them too,
    when the tool takes extra arguments (``additionalProperties`` not false), or when there are
    more than :data:`MAX_DROPPED`.

    A small model refused for an argument it added tends to send the same call again until the
    loop ends the run; BFCL's checker scores such a call as the call without the extra argument.

    Records ``step.records["unknown_args"] = [{"name": tool, "dropped": [argument, ...]}]``;
    a note per call. The history keeps the reply as the model wrote it.
    """

    name: ClassVar[str] = "unknown_args"

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        calls, dropped = [], []
        for call in reply.tool_calls:
            tool = run.setup.toolbox.get(call.name)
            kept = _without_unknown(tool, call) if tool is not None else None
            if kept is None:
                calls.append(call)
                continue
            gone = [k for k in call.args if k not in kept.args]
            calls.append(kept)
            dropped.append({"name": call.name, "dropped": gone})
            run.note(step, self.name, "Dropped", f"{call.name}: ran without "
                     f"{', '.join(gone)} (arguments it does not take)")
        if not dropped:
            return reply
        step.records[self.name] = dropped
        step.reply = dataclasses.replace(reply, tool_calls=calls)
        return step.reply

    def after_observation(self, run: Run, step: Step, text: str) -> str:
        dropped = step.records.get(self.name)
        if not isinstance(dropped, list) or not dropped:
            return text
        words = "; ".join(f"{d['name']}: {', '.join(d['dropped'])}" for d in dropped)
        return text + "\n" + prompts.render("policies/unknown_args", dropped=words)


def _without_unknown(tool: Tool, call: ToolCall) -> ToolCall | None:
    """``call`` without the arguments ``tool`` does not take, or ``None`` when that is not the
    call's only fault (see :class:`DropUnknownArgs`)."""
    schema: dict[str, Any] = tool.parameters
    if schema.get("additionalProperties", False) is not False:
        return None
    known = schema.get("properties") or {}
    unknown = [k for k in call.args if k not in known]
    if not unknown or len(unknown) > MAX_DROPPED:
        return None
    if any(did_you_mean(k, known) for k in unknown):
        return None
    rest = {k: v for k, v in call.args.items() if k in known}
    cleaned, _ = clean_args(schema, rest)
    if check_args(schema, cleaned):
        return None
    return dataclasses.replace(call, args=rest)
