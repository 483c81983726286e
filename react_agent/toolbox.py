"""Tools and the Toolbox: a name -> Tool mapping that renders itself for the system prompt.

A tool is a Python callable plus a name, a description and a JSON Schema (an ``object`` schema)
for its arguments. The schema is taken from the function's signature, type hints and docstring,
given explicitly, or imported from an OpenAI tool spec (``{"type": "function", "function": ...}``).
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from .errors import ToolDefinitionError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}

DEFAULT_TOOL_TIMEOUT: float | None = None
"""Seconds a tool may run before its call is reported to the model as timed out; ``None``: no
limit. A tool without a timeout runs in the caller's thread (thread-bound resources such as a
``sqlite3`` connection work); a tool with one runs in a worker thread that is abandoned when
the time is up."""


@dataclass(frozen=True)
class Tool:
    """One tool the model may call.

    Attributes:
        name: the name the model writes in ``action.name`` (letters, digits, ``_ . -``; <= 64).
        description: what the tool does and when to use it, in plain words.
        parameters: JSON Schema of the arguments; always ``{"type": "object", ...}``.
        func: the callable, invoked as ``func(**args)`` (may be ``async def``).
        timeout: seconds before a call is abandoned and reported as timed out; ``None`` = no limit.
        requires_approval: the agent asks its approver before each call.
        group: optional label used to group tools when there are many.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]
    timeout: float | None = DEFAULT_TOOL_TIMEOUT
    requires_approval: bool = False
    group: str | None = None

    def describe(self) -> str:
        """Render this tool for the system prompt as a few lines of plain text."""
        description = "\n  ".join(self.description.splitlines())
        lines = [f"- {self.name}: {description}"]
        props: dict[str, Any] = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        if not props:
            lines.append("  Arguments: none (send \"args\": {}).")
        for arg, spec in props.items():
            lines.append(f"  - {_describe_arg(arg, spec, arg in required)}")
        return "\n".join(lines)

    def openai_spec(self) -> dict[str, Any]:
        """This tool as an OpenAI tool spec ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class Toolbox(Mapping[str, Tool]):
    """The tools an agent may use: a read-only mapping name -> :class:`Tool` plus registration.

    ``default_timeout`` (seconds, ``None`` for no limit) applies to tools added without
    ``timeout=``. Registration checks each definition at once and raises
    :class:`ToolDefinitionError` (a ``ValueError``) naming the fix: a bad or duplicate name, a
    missing description, a parameters schema that is not a valid JSON Schema of ``"type":
    "object"``.

    Example::

        toolbox = Toolbox()

        @toolbox.tool
        def get_weather(city: str) -> str:
            '''Get the current weather for a city.'''
            ...
    """

    def __init__(
        self,
        tools: typing.Iterable[Tool] = (),
        *,
        default_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        if default_timeout is not None and default_timeout <= 0:
            raise ToolDefinitionError("default_timeout must be > 0 seconds or None.")
        self.default_timeout = default_timeout
        """Seconds a tool added without ``timeout=`` may run (``None``: no limit)."""
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add_tool(t)

    # -- Mapping -------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"Toolbox({self.names!r})"

    @property
    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    # -- registration --------------------------------------------------------------------------
    def add_tool(self, tool: Tool) -> Tool:
        """Register a ready :class:`Tool` after checking it. Returns it."""
        _check_tool(tool)
        if tool.name in self._tools:
            raise ToolDefinitionError(
                f"A tool named {tool.name!r} is already in this toolbox; pass name=... to register "
                "the second one under another name."
            )
        self._tools[tool.name] = tool
        return tool

    def add(
        self,
        func: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        *,
        timeout: float | EllipsisType | None = ...,
        requires_approval: bool = False,
        group: str | None = None,
    ) -> Tool:
        """Register ``func`` as a tool and return the :class:`Tool`.

        Args:
            func: the callable; called with keyword arguments.
            name: tool name; defaults to ``func.__name__``.
            description: defaults to the first paragraph of ``func``'s docstring.
            parameters: JSON Schema object for the arguments; defaults to one built from the
                signature and type hints (see :func:`schema_from_function`).
            timeout: seconds before a call is reported as timed out (``None``: no limit);
                default: the toolbox's ``default_timeout`` (no limit unless set). A tool with a
                timeout runs in a worker thread; one without, in the caller's thread.
            requires_approval: ask the agent's approver before each call.
            group: optional group label.

        Raises:
            ToolDefinitionError: the definition is unusable; the message names the fix.
        """
        if not callable(func):
            raise ToolDefinitionError(f"Toolbox.add() needs a callable, got {type(func).__name__}.")
        name = name or getattr(func, "__name__", None)
        if not name or name == "<lambda>":
            raise ToolDefinitionError("This callable has no usable name; pass name=... to add().")
        doc_summary, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
        if description is None:
            description = doc_summary
        if parameters is None:
            parameters = schema_from_function(func, arg_docs)
        return self.add_tool(
            Tool(
                name=name,
                description=(description or "").strip(),
                parameters=parameters,
                func=func,
                timeout=self.default_timeout if timeout is ... else timeout,
                requires_approval=requires_approval,
                group=group,
            )
        )

    def tool(self, func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Decorator form of :meth:`add`: ``@toolbox.tool`` or ``@toolbox.tool(name=..., ...)``.

        Returns the function unchanged, so it stays callable as plain Python.
        """

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self.add(f, **options)
            return f

        return register(func) if func is not None else register

    def add_openai_tool(
        self, spec: dict[str, Any], func: Callable[..., Any], **options: Any
    ) -> Tool:
        """Register ``func`` under an OpenAI spec ``{"type": "function", "function": {...}}``.

        The bare function object (``{"name", "description", "parameters"}``) is accepted too.
        Further keyword options are those of :meth:`add`.

        Raises:
            ToolDefinitionError: the spec has no ``function.name`` or is otherwise unusable.
        """
        fn = spec.get("function", spec) if isinstance(spec, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ToolDefinitionError(
                'An OpenAI tool spec looks like {"type": "function", "function": {"name": ..., '
                '"description": ..., "parameters": {...}}}; this one has no function name.'
            )
        parameters = fn.get("parameters") or {"type": "object", "properties": {}}
        return self.add(
            func, name=fn["name"], description=fn.get("description"), parameters=parameters,
            **options,
        )

    # -- rendering -----------------------------------------------------------------------------
    def describe(self) -> str:
        """All tools as plain text for the system prompt, one block per tool."""
        return "\n".join(t.describe() for t in self._tools.values())

    def openai_specs(self) -> list[dict[str, Any]]:
        """All tools as OpenAI tool specs (for export; the agent never sends ``tools=``)."""
        return [t.openai_spec() for t in self._tools.values()]


# -- schema from a Python signature ------------------------------------------------------------
def schema_from_function(
    func: Callable[..., Any], arg_docs: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Build the JSON Schema object for ``func``'s keyword arguments.

    Type hints map as: ``str``/``int``/``float``/``bool`` -> string/integer/number/boolean;
    ``list[T]``/``tuple``/``set`` -> array of T; ``dict`` -> object; ``Optional[T]`` -> T plus
    ``null``; ``Literal[...]`` and ``Enum`` subclasses -> ``enum``. A parameter with a default is
    optional and its default is recorded; one without is required. ``*args``/``**kwargs`` are
    not exposed. ``arg_docs`` (name -> text, e.g. from a Google-style ``Args:`` section) become
    the ``description`` of each property.

    Raises:
        ToolDefinitionError: a parameter is positional-only or its type cannot be expressed.
    """
    arg_docs = arg_docs or {}
    try:
        hints = typing.get_type_hints(func)
    except Exception as exc:  # unresolved forward references, etc.
        raise ToolDefinitionError(f"Cannot read the type hints of {func!r}: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    open_ended = False
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            open_ended = open_ended or p.kind is p.VAR_KEYWORD
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"Parameter {p.name!r} of {func.__name__} is positional-only; tools are called "
                "with keyword arguments, so remove the '/'."
            )
        prop = _schema_for_type(hints.get(p.name, Any), f"{func.__name__}({p.name})")
        if p.name in arg_docs:
            prop["description"] = arg_docs[p.name]
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            default = p.default.value if isinstance(p.default, enum.Enum) else p.default
            if _is_json(default):
                prop["default"] = default
        properties[p.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if open_ended:
        schema["additionalProperties"] = True
    return schema


def _schema_for_type(tp: Any, where: str) -> dict[str, Any]:
    if tp is Any or tp is inspect.Parameter.empty:
        return {}
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if tp is type(None):
        return {"type": "null"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        non_null = [a for a in args if a is not type(None)]
        inner = (
            _schema_for_type(non_null[0], where)
            if len(non_null) == 1
            else {"anyOf": [_schema_for_type(a, where) for a in non_null]}
        )
        if len(non_null) < len(args):
            return _nullable(inner)
        return inner
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        schema: dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            schema["items"] = _schema_for_type(args[0], where)
        return schema
    if tp is dict or origin is dict:
        return {"type": "object"}
    raise ToolDefinitionError(
        f"{where}: the type {tp!r} has no JSON Schema equivalent here; use str, int, float, bool, "
        "list[...], dict, Optional[...], Literal[...] or an Enum, or pass parameters=... yourself."
    )


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    return {"anyOf": [schema, {"type": "null"}]} if schema else {}


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into (summary paragraph, {arg: description}) (Google style ``Args:``)."""
    summary = doc.split("\n\n", 1)[0].strip()
    summary = " ".join(summary.split())
    args: dict[str, str] = {}
    match = re.search(r"^(?:Args|Arguments|Parameters):[ \t]*\n", doc, re.MULTILINE)
    if match:
        current = None
        for line in doc[match.end():].splitlines():
            if not line.strip():
                continue
            if not line.startswith((" ", "\t")):
                break  # the next section
            item = re.match(r"\s+([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line)
            if item:
                current = item.group(1)
                args[current] = item.group(2).strip()
            elif current:
                args[current] = f"{args[current]} {line.strip()}".strip()
    return summary, args


# -- checks and rendering ----------------------------------------------------------------------
def _check_tool(tool: Tool) -> None:
    if not isinstance(tool.name, str) or not _NAME.match(tool.name):
        raise ToolDefinitionError(
            f"Tool name {tool.name!r} is not usable: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or '_'."
        )
    if not tool.description:
        raise ToolDefinitionError(
            f"Tool {tool.name!r} has no description; add a docstring or pass description=... "
            "(the model chooses tools by their descriptions)."
        )
    params = tool.parameters
    if not isinstance(params, dict) or params.get("type") != "object":
        raise ToolDefinitionError(
            f"Tool {tool.name!r}: parameters must be a JSON Schema object like "
            '{"type": "object", "properties": {...}, "required": [...]}, '
            f"got {json.dumps(params, default=repr)[:120]}."
        )
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as exc:
        raise ToolDefinitionError(
            f"Tool {tool.name!r}: parameters is not a valid JSON Schema: {exc.message}"
        ) from exc
    missing = set(params.get("required", [])) - set(params.get("properties", {}))
    if missing:
        raise ToolDefinitionError(
            f"Tool {tool.name!r}: required arguments {sorted(missing)} are not in properties; "
            "declare them under properties or drop them from required."
        )
    if tool.timeout is not None and tool.timeout <= 0:
        raise ToolDefinitionError(f"Tool {tool.name!r}: timeout must be > 0 seconds or None.")


def _type_words(spec: Mapping[str, Any]) -> str:
    if "enum" in spec:
        kinds = {type(v).__name__ for v in spec["enum"] if v is not None}
        return {"str": "string", "int": "integer", "float": "number"}.get(
            next(iter(kinds)) if len(kinds) == 1 else "", "value"
        )
    t = spec.get("type")
    if isinstance(t, list):
        return " or ".join(_type_words({**spec, "type": x}) for x in t)
    if t == "array":
        item = spec.get("items")
        return f"array of {_type_words(item)}" if isinstance(item, dict) and item else "array"
    if t:
        return str(t)
    if "anyOf" in spec:
        return " or ".join(_type_words(s) for s in spec["anyOf"] if isinstance(s, dict))
    return "any JSON value"


def _describe_arg(name: str, spec: Any, required: bool) -> str:
    """One argument as ``name (type, required|optional, default X): one of ...; text; example``."""
    if not isinstance(spec, dict):
        spec = {}
    parts = [_type_words(spec), "required" if required else "optional"]
    if "default" in spec:
        parts.append(f"default {json.dumps(spec['default'], ensure_ascii=False)}")
    notes = []
    if "enum" in spec:
        notes.append("one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in spec["enum"]))
    if spec.get("description"):
        notes.append(str(spec["description"]).strip())
    examples = spec.get("examples")
    if isinstance(examples, list) and examples:
        notes.append(f"example: {json.dumps(examples[0], ensure_ascii=False)}")
    head = f"{name} ({', '.join(parts)})"
    return f"{head}: {'; '.join(notes)}" if notes else head
