"""OpenAI's Chat Completions shapes <-> react-agent's protocol, for ``react-agent serve``.

Pure translation, no I/O. A request that carries ``tools`` becomes a :class:`TurnPlan`:

- the tool specs become a toolbox (:meth:`~react_agent.tools.Toolbox.from_openai_specs`, as
  ``react-agent eval`` builds its own: loose type names of public benchmarks such as ``dict``,
  ``float``, ``tuple``, ``any`` normalised; the functions are never run);
- the client's ``system``/``developer`` messages become the "additional instructions" of the
  system prompt rendered from that toolbox (``prompts/agent/system.md``);
- ``assistant`` messages with ``tool_calls`` become the ``{"thought", "action"}`` envelopes the
  model writes itself, and the ``tool`` messages that answer them one observation message
  (``prompts/agent/observation.md``, numbered when several), so the model sees its own protocol;
- ``tool_choice`` and ``parallel_tool_calls`` become instructions
  (``prompts/serve/tool_choice_*.md``, ``prompts/serve/one_call.md``) and are checked again on
  the reply (:mod:`react_agent.serve._turn`);
- ``response_format: {"type": "json_schema", "json_schema": {"schema": S}}`` becomes the turn's
  output type (:func:`~react_agent.engine.output_spec` of ``S``, bounded and checked like a
  tool's schema): the system prompt shows it and the final answer must be a value of ``S``.

The other direction builds OpenAI's response objects: a completion, stream chunks, errors.
Field names and meanings follow OpenAI's API reference for chat completions
(https://platform.openai.com/docs/api-reference/chat).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import cachetools

from .. import prompts
from .._persist import loads
from ..engine import Output, observation_message, output_spec
from ..errors import ConfigError, ReactAgentError, ToolDefinitionError
from ..models.base import Message
from ..tools import DEFAULT_MAX_OBSERVATION_CHARS, Toolbox, ToolSpecError, observation_text
from ..tools import schema as json_schema
from ..types import Step, ToolCall, ToolResult

TOOL_CHOICES = ("auto", "none", "required", "function")
ARGUMENT_PIECE_CHARS = 24
"""A streamed tool call's ``arguments`` string is sent in pieces of this many characters."""
_NO_DESCRIPTION = "(no description given)"


class RequestError(ReactAgentError, ValueError):
    """A request the endpoint cannot serve (HTTP 400); the message says what to change.

    Attributes:
        param: the request field at fault, e.g. ``"tools[1].function.parameters"``, or ``None``.
    """

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class ToolChoice:
    """What the reply may do: ``mode`` is ``"auto"``, ``"none"`` (no call), ``"required"`` (at
    least one call) or ``"function"`` (a call of the tool ``name``)."""

    mode: str = "auto"
    name: str | None = None


@dataclass
class TurnPlan:
    """One request with tools, in react-agent's terms.

    Attributes:
        toolbox: the request's tools (their functions are never run).
        messages: what the model is sent: the system prompt, then the conversation.
        choice: the request's ``tool_choice``.
        parallel: several calls in one reply are allowed (``parallel_tool_calls``, default true).
        task: the last user message.
        steps: the calls of the history and their results, as steps (see :class:`Dialogue`).
        output: the output type of a ``response_format`` of type ``json_schema``: the final
            answer must be a value of its schema; ``None``: the answer is text.
        framed: the tool results are framed as data (``ServeConfig.frame_observations``).
    """

    toolbox: Toolbox
    messages: list[Message]
    choice: ToolChoice
    parallel: bool = True
    task: str = ""
    steps: list[Step] = field(default_factory=list)
    output: Output | None = None
    framed: bool = True


def read_request(body: dict[str, Any], framed: bool = True,
                 max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS) -> TurnPlan:
    """The :class:`TurnPlan` of a Chat Completions request body that has ``tools``;
    ``framed``: its ``tool`` messages go to the model framed as data (see
    :func:`~react_agent.engine.observation_message`); ``max_observation_chars``: each ``tool``
    message's text is cut there, as the library cuts a tool result
    (:func:`~react_agent.tools.observation_text`).

    Raises:
        RequestError: a tool that is not a function tool or whose parameters are not a JSON
            Schema object, an unknown ``tool_choice`` or one naming a tool not in ``tools``,
            ``n`` other than 1, malformed messages, or a conversation that does not end with a
            user message or tool results.
    """
    for name, kind, expected in _REQUEST_FIELDS:
        if body.get(name) is not None and not isinstance(body[name], kind):
            raise RequestError(f"{name} must be {expected}, got {_show(body[name])}.", name)
    include_usage = (body.get("stream_options") or {}).get("include_usage")
    if include_usage is not None and not isinstance(include_usage, bool):
        raise RequestError(f"stream_options.include_usage must be true or false, got "
                           f"{_show(include_usage)}.", "stream_options.include_usage")
    if body.get("n") not in (None, 1) or body.get("n") is True:
        raise RequestError("Only n=1 is supported: one choice per request.", "n")
    toolbox = read_tools(body.get("tools"))
    choice = read_tool_choice(body.get("tool_choice"), toolbox)
    parallel = body.get("parallel_tool_calls", True) is not False
    dialogue = read_messages(body.get("messages"), framed, max_observation_chars)
    instructions = dialogue.instructions
    if choice.mode == "function":
        instructions.append(prompts.render("serve/tool_choice_function", tool=choice.name))
    elif choice.mode in ("none", "required"):
        instructions.append(prompts.render(f"serve/tool_choice_{choice.mode}"))
    if not parallel and choice.mode != "none":
        instructions.append(prompts.render("serve/one_call"))
    output = read_response_format(body.get("response_format"))
    system = prompts.render_system_prompt(toolbox, "\n\n".join(instructions))
    if output is not None:
        system += "\n\n" + prompts.render("agent/output", schema=output.shape())
    return TurnPlan(toolbox, [{"role": "system", "content": system}, *dialogue.conversation],
                    choice, parallel, dialogue.task, dialogue.steps, output, framed)


def read_response_format(value: Any) -> Output | None:
    """The output type of a request's ``response_format``: ``{"type": "json_schema",
    "json_schema": {"name": ..., "schema": {...}}}`` gives the schema's; ``null``, ``text``
    and ``json_object`` give none (the answer is text, as without tools).

    Raises:
        RequestError: ``response_format`` is not an object, has another ``type``, or its
            ``json_schema.schema`` is missing, not an object, or not a bounded, valid,
            self-contained JSON Schema.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RequestError(f"response_format must be an object, got {_show(value)}.",
                           "response_format")
    kind = value.get("type")
    if kind in ("text", "json_object"):
        return None
    if kind != "json_schema":
        raise RequestError('response_format.type must be "text", "json_object" or '
                           f'"json_schema", got {_show(kind)}.', "response_format.type")
    spec = value.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise RequestError("response_format.json_schema.schema must be a JSON Schema object, "
                           f"got {_show(schema)}.", "response_format.json_schema.schema")
    try:
        return output_spec(schema, "response_format.json_schema.schema")
    except ConfigError as exc:
        raise RequestError(str(exc), "response_format.json_schema.schema") from None


_REQUEST_FIELDS = (
    ("model", str, "a string"), ("stream", bool, "true or false"),
    ("stream_options", dict, 'an object ({"include_usage": true})'),
    ("parallel_tool_calls", bool, "true or false"), ("n", int, "1"),
)
"""The typed fields of a request besides ``messages``, ``tools`` and ``tool_choice`` (each may
be left out or null)."""


def read_tools(specs: Any) -> Toolbox:
    """A Toolbox of OpenAI function tool specs (see the module docs).

    Raises:
        RequestError: not a list of function tools, a ``parameters`` that is not a JSON Schema
            object, a bad or duplicate name.
    """
    if not isinstance(specs, list) or not specs:
        raise RequestError("tools must be a non-empty list of function tools.", "tools")
    if len(specs) > MAX_TOOLS:
        raise RequestError(f"tools holds {len(specs)} tools; at most {MAX_TOOLS} are accepted "
                           "(as by OpenAI's API).", "tools")
    functions = []
    for i, spec in enumerate(specs):
        fn = spec.get("function") if isinstance(spec, dict) else None
        if not isinstance(fn, dict) or spec.get("type", "function") != "function":
            field = "" if not isinstance(spec, dict) else \
                ".type" if spec.get("type", "function") != "function" else ".function"
            raise RequestError(
                f'tools[{i}] is not a function tool: expected {{"type": "function", '
                '"function": {"name": ..., "description": ..., "parameters": {...}}}.',
                f"tools[{i}]{field}",
            )
        where = f"tools[{i}].function"
        if not isinstance(fn.get("name"), str):
            raise RequestError(f"{where}.name must be a string, got {_show(fn.get('name'))}.",
                               f"{where}.name")
        for name, kind, expected in _FUNCTION_FIELDS:
            if fn.get(name) is not None and not isinstance(fn[name], kind):
                raise RequestError(f"{where}.{name} must be {expected}, got {_show(fn[name])}.",
                                   f"{where}.{name}")
        parameters = fn.get("parameters")
        try:
            json_schema.check(parameters, f"tools[{i}].function.parameters")
        except ToolDefinitionError as exc:
            raise RequestError(str(exc), f"tools[{i}].function.parameters") from exc
        functions.append({**fn, "description": fn.get("description") or _NO_DESCRIPTION})
    key = json.dumps(functions)  # in their order: it is the prompt's order
    with _CACHE_LOCK:
        cached = _TOOLBOXES.get(key)
    toolbox = cached[0] if cached else None
    if toolbox is None:
        try:
            toolbox = Toolbox.from_openai_specs(
                [{"type": "function", "function": fn} for fn in functions])
        except ToolSpecError as exc:
            raise RequestError(f"tools[{exc.index}]: {exc}",
                               f"tools[{exc.index}].function") from exc
        with _CACHE_LOCK:
            if len(key) <= _TOOLBOXES.maxsize:
                _TOOLBOXES[key] = (toolbox, len(key))
    return toolbox


MAX_TOOLS = 128
"""The most tools one request may carry."""

_FUNCTION_FIELDS = (
    ("description", str, "a string"),
    ("parameters", dict, 'a JSON Schema object {"type": "object", "properties": {...}}'),
    ("strict", bool, "true or false"),
)
"""The typed fields of a function tool besides its name (each may be left out or null)."""

TOOLBOX_CACHE_CHARS = 8 * 1024 * 1024
"""The toolboxes of recent requests are kept (a tool loop sends the same tools with every
request, and checking their schemas is the costly part), up to this many characters of tool
specs in all; the least recently used go first."""

# each entry is (toolbox, the size of its key): cachetools sizes an entry by its value
_TOOLBOXES: cachetools.LRUCache[str, tuple[Toolbox, int]] = cachetools.LRUCache(
    maxsize=TOOLBOX_CACHE_CHARS, getsizeof=lambda entry: entry[1])
_CACHE_LOCK = threading.Lock()


def read_tool_choice(value: Any, toolbox: Toolbox) -> ToolChoice:
    """The :class:`ToolChoice` of a ``tool_choice`` value (``None`` means ``"auto"``).

    Raises:
        RequestError: an unknown value, or a named function that is not in ``tools``.
    """
    if value is None or value == "auto":
        return ToolChoice()
    if value in ("none", "required"):
        return ToolChoice(value)
    fn = value.get("function") if isinstance(value, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str) or value.get("type", "function") != "function":
        raise RequestError(
            f'tool_choice must be "auto", "none", "required" or {{"type": "function", '
            f'"function": {{"name": ...}}}}, got {_show(value)}.',
            "tool_choice",
        )
    if name not in toolbox:
        raise RequestError(
            f"tool_choice names the function {name!r}, which is not in tools "
            f"({', '.join(toolbox.names)}).",
            "tool_choice",
        )
    return ToolChoice("function", name)


@dataclass
class Dialogue:
    """A request's messages in react-agent's terms.

    Attributes:
        instructions: the text of the system/developer messages.
        conversation: the other messages in react-agent's protocol (see the module docs).
        task: the last user message.
        steps: the assistant messages that called tools, as steps with those calls and the
            results the client sent back (the loop's policies read them: a call repeated after
            its result came back is recognised).
    """

    instructions: list[str]
    conversation: list[Message]
    task: str
    steps: list[Step]


def read_messages(messages: Any, framed: bool = True,
                  max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS) -> Dialogue:
    """The :class:`Dialogue` of a request's ``messages`` (``framed``: tool results framed as
    data in the observation messages; each ``tool`` message's text cut at
    ``max_observation_chars``, as the library cuts a tool result).

    Raises:
        RequestError: malformed messages, a ``tool`` message answering no earlier tool call,
            or a conversation that does not end with a user message or tool results.
    """
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty list.", "messages")
    instructions: list[str] = []
    conversation: list[Message] = []
    calls: dict[str, tuple[ToolCall, Step]] = {}
    steps: list[Step] = []
    results: list[ToolResult] = []
    task = ""
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = _role(message, where)
        if role != "tool" and results:
            conversation.append({"role": "user",
                                 "content": observation_message(results, task, framed)})
            results = []
        if role in ("system", "developer"):
            instructions.append(_text(message.get("content"), where))
        elif role == "user":
            task = _text(message.get("content"), where)
            conversation.append({"role": "user", "content": task})
        elif role == "assistant":
            content, made = _assistant(message, where)
            conversation.append({"role": "assistant", "content": content})
            if made:
                step = Step(index=len(steps) + 1, raw_output=content,
                            tool_calls=[call for _, call in made])
                steps.append(step)
                calls.update((call_id, (call, step)) for call_id, call in made)
        elif role == "tool":
            if not isinstance(message.get("tool_call_id"), str):
                raise RequestError(f"{where}.tool_call_id must be the string id of an earlier "
                                   f"tool call, got {_show(message.get('tool_call_id'))}.",
                                   f"{where}.tool_call_id")
            found = calls.get(message["tool_call_id"])
            if found is None:
                raise RequestError(
                    f"{where} answers tool_call_id {message.get('tool_call_id')!r}, which no "
                    "earlier assistant message's tool_calls has.",
                    f"{where}.tool_call_id",
                )
            observation = observation_text(_text(message.get("content"), where),
                                           max_observation_chars)
            result = ToolResult(found[0], observation, ok=True, args=found[0].args)
            results.append(result)
            found[1].results.append(result)
        else:
            raise RequestError(
                f"{where} has role {role!r}; expected system, developer, user, assistant or "
                "tool.",
                f"{where}.role",
            )
    if results:
        conversation.append({"role": "user", "content": observation_message(results, task, framed)})
    if not conversation or conversation[-1]["role"] != "user":
        raise RequestError(
            "The conversation must end with a user message or tool results: there is nothing "
            "for the model to answer.",
            "messages",
        )
    return Dialogue(instructions, conversation, task, steps)


def plain_messages(messages: Any) -> list[Message]:
    """The messages of a request without tools, for an in-process model: ``{"role",
    "content"}`` with text content (``developer`` read as ``system``).

    Raises:
        RequestError: not a list of system/developer/user/assistant messages with text content.
    """
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty list.", "messages")
    plain = []
    for i, message in enumerate(messages):
        role = _role(message, f"messages[{i}]")
        if role not in ("system", "developer", "user", "assistant"):
            raise RequestError(
                f"messages[{i}] has role {role!r}; without tools, expected system, developer, "
                "user or assistant.",
                f"messages[{i}].role",
            )
        text = _text(message.get("content"), f"messages[{i}]")
        plain.append({"role": "system" if role == "developer" else role, "content": text})
    return plain


def _role(message: Any, where: str) -> Any:
    """The role of a message (checked by the caller against the roles it takes).

    Raises:
        RequestError: the message is not an object.
    """
    if not isinstance(message, dict):
        raise RequestError(f'{where} must be a message object {{"role": ..., "content": ...}}, '
                           f"got {_show(message)}.", where)
    return message.get("role")


def _assistant(message: dict[str, Any], where: str) -> tuple[str, list[tuple[str, ToolCall]]]:
    """An assistant message as the envelope the model writes, and its calls by id."""
    text = _text(message.get("content"), where)
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        tool_calls = []
    if not isinstance(tool_calls, list):
        raise RequestError(f"{where}.tool_calls must be a list.", f"{where}.tool_calls")
    if not tool_calls:
        return _dumps({"action": {"final_answer": text}}), []
    actions, made = [], []
    for j, item in enumerate(tool_calls):
        at = f"{where}.tool_calls[{j}]"
        if not isinstance(item, dict):
            raise RequestError(f'{at} must be a tool call object {{"id": ..., "type": '
                               f'"function", "function": {{...}}}}, got {_show(item)}.', at)
        if not isinstance(item.get("id"), str):
            raise RequestError(f"{at}.id must be a string, got {_show(item.get('id'))}.",
                               f"{at}.id")
        if item.get("type", "function") not in ("function", None):
            raise RequestError(f'{at}.type must be "function", got {_show(item["type"])}.',
                               f"{at}.type")
        fn = item.get("function")
        if not isinstance(fn, dict):
            raise RequestError(f"{where}.tool_calls[{j}] has no function.",
                               f"{where}.tool_calls[{j}].function")
        if not isinstance(fn.get("name"), str):
            raise RequestError(f"{where}.tool_calls[{j}] has no function name.",
                               f"{where}.tool_calls[{j}].function.name")
        arguments = fn.get("arguments")
        try:
            args = loads(arguments or "{}") if isinstance(arguments, (str, type(None))) \
                else None
        except ValueError:
            args = None
        if not isinstance(args, dict):
            raise RequestError(
                f"{where}.tool_calls[{j}].function.arguments must be a JSON object as a "
                f"string, got {_show(fn.get('arguments'))}.",
                f"{where}.tool_calls[{j}].function.arguments",
            )
        call = ToolCall(fn["name"], args)
        made.append((item["id"], call))
        actions.append(call.to_dict())
    envelope: dict[str, Any] = {"thought": text} if text else {}
    envelope["action"] = actions[0] if len(actions) == 1 else actions
    return _dumps(envelope), made


def _text(content: Any, where: str) -> str:
    """A message's content as text: a string, ``None``, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        for p in content
    ):
        return "\n".join(p["text"] for p in content)
    raise RequestError(
        f"{where}.content must be a string or a list of text parts; other parts (images, "
        "audio, files) are not supported.",
        f"{where}.content",
    )


# -- responses --------------------------------------------------------------------------------
def new_id(prefix: str) -> str:
    """A fresh id in OpenAI's style: ``call_...`` for tool calls, ``chatcmpl-...`` for replies."""
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One entry of ``message.tool_calls``; ``arguments`` is the JSON text of ``args``."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": _dumps(args)}}


def completion(
    reply_id: str, model: str, message: dict[str, Any], finish_reason: str,
    usage: dict[str, int], **extra: Any,
) -> dict[str, Any]:
    """A ``chat.completion`` object with one choice; ``extra`` adds top-level fields."""
    return {
        "id": reply_id, "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason,
                     "logprobs": None}],
        "usage": usage, **extra,
    }


def chunk(
    reply_id: str, model: str, delta: dict[str, Any] | None, finish_reason: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``chat.completion.chunk``; ``delta=None`` gives the usage-only chunk (no choices)."""
    choices = [] if delta is None else [
        {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
    ]
    return {"id": reply_id, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": choices, **extra}


def tool_call_deltas(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream deltas of ``message.tool_calls``: per call, one delta with its ``index``,
    ``id``, ``type`` and ``name`` (empty arguments), then its ``arguments`` in pieces of
    :data:`ARGUMENT_PIECE_CHARS` characters, as OpenAI streams them."""
    deltas = []
    for index, call in enumerate(calls):
        fn = call["function"]
        deltas.append({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                       "function": {"name": fn["name"], "arguments": ""}}]})
        text = fn["arguments"]
        for start in range(0, len(text), ARGUMENT_PIECE_CHARS):
            piece = text[start : start + ARGUMENT_PIECE_CHARS]
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    return deltas


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """The ``usage`` object: prompt, completion and total tokens."""
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def error_body(
    message: str, kind: str = "invalid_request_error", param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)[:80]
