"""Tools and the Toolbox: a name -> Tool mapping that renders itself for the system prompt.

A tool is a Python callable plus a name, a description and a JSON Schema (an ``object`` schema)
for its arguments. The schema is taken from the function's signature, type hints and docstring,
given explicitly, or imported from an OpenAI tool spec (``{"type": "function", "function": ...}``).
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

import docstring_parser
import typing_extensions
from pydantic import TypeAdapter
from pydantic.errors import (
    PydanticInvalidForJsonSchema,
    PydanticSchemaGenerationError,
    PydanticUserError,
)
from typing_extensions import NotRequired, Required

from ..errors import ToolDefinitionError
from ..types import JSON_TYPES
from . import schema as json_schema

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")

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
        acts: the tool acts on the world (sends, pays, writes, deletes) rather than reads:
            ``True``/``False`` as declared; ``None``: not declared (the
            :class:`~react_agent.policies.Provenance` policy then guesses from the name).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]
    timeout: float | None = DEFAULT_TOOL_TIMEOUT
    requires_approval: bool = False
    group: str | None = None
    acts: bool | None = None

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


class ToolSpecError(ToolDefinitionError):
    """An OpenAI tool spec given to :meth:`Toolbox.from_openai_specs` is unusable.

    Attributes:
        index: the spec's place in the specs given (from 0).
    """

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


_NOT_A_SPEC = ('An OpenAI tool spec looks like {"type": "function", "function": {"name": ..., '
               '"description": ..., "parameters": {...}}}; this one has no function name.')


def _declared_only(name: str) -> Callable[..., Any]:
    """The function of a tool declared by a spec alone: it is never meant to run."""

    def declared_only(**args: Any) -> Any:
        raise RuntimeError(f"the tool {name!r} was declared by a spec alone; it has no "
                           "function to run")

    return declared_only


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
        def word_count(text: str) -> int:
            '''Count the words in a text.'''
            return len(text.split())
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
        acts: bool | None = None,
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
            acts: the tool acts on the world (sends, pays, writes, deletes): ``True``;
                only reads: ``False``; ``None``: not said (see :class:`Tool`).

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
            parameters, converters = _signature(func, arg_docs)
            func = _converting(func, converters)
        return self.add_tool(
            Tool(
                name=name,
                description=(description or "").strip(),
                parameters=parameters,
                func=func,
                timeout=self.default_timeout if timeout is ... else timeout,
                requires_approval=requires_approval,
                group=group,
                acts=acts,
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
            raise ToolDefinitionError(_NOT_A_SPEC)
        parameters = fn.get("parameters") or {"type": "object", "properties": {}}
        return self.add(
            func, name=fn["name"], description=fn.get("description"), parameters=parameters,
            **options,
        )

    @classmethod
    def from_openai_specs(
        cls,
        specs: typing.Iterable[Any],
        functions: Mapping[str, Callable[..., Any]] | None = None,
        *,
        default_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    ) -> Toolbox:
        """A toolbox of OpenAI tool specs, in their order: what ``react-agent serve`` builds of
        a request's ``tools`` and ``react-agent eval`` of a suite's.

        Each spec is ``{"type": "function", "function": {"name", "description",
        "parameters"}}`` (or the bare function object). Its ``parameters`` (``None``: no
        arguments) go through :func:`react_agent.tools.schema.from_openai`: bounded before
        anything walks them, the loose type names of public function-calling benchmarks
        (``dict``, ``float``, ``tuple``, ``any``, ...) normalised, ``"type": "object"`` when
        missing; then the tool is checked as :meth:`add` checks it.

        Args:
            specs: the tool specs (JSON values).
            functions: tool name -> the callable run for that tool (as :meth:`add` calls it);
                a tool not named here gets one that raises ``RuntimeError`` when called
                (``serve`` and ``eval`` stop before any tool runs).
            default_timeout: as for :class:`Toolbox`.

        Raises:
            ToolSpecError: a spec is unusable (a :class:`ToolDefinitionError` whose ``index``
                is the spec's place in ``specs``; the message names the fix).
        """
        toolbox = cls(default_timeout=default_timeout)
        for index, spec in enumerate(specs):
            try:
                function = spec.get("function", spec) if isinstance(spec, dict) else None
                if not isinstance(function, dict):
                    raise ToolDefinitionError(_NOT_A_SPEC)
                name = function.get("name")
                parameters = json_schema.from_openai(function.get("parameters"),
                                                     f"{name}: parameters")
                func = (functions or {}).get(name) if isinstance(name, str) else None
                toolbox.add_openai_tool(
                    {"type": "function", "function": {**function, "parameters": parameters}},
                    func or _declared_only(str(name)))
            except ToolDefinitionError as exc:
                raise ToolSpecError(str(exc), index) from exc
        return toolbox

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

    Each parameter's type hint becomes its schema through pydantic's JSON Schema generation
    (``TypeAdapter(hint).json_schema()``), so any type pydantic knows works: ``str``, ``int``,
    ``float``, ``bool``, ``list[T]``, ``tuple``, ``set``, ``dict[K, V]``, ``Optional[T]``,
    ``Literal[...]``, ``Enum``, ``TypedDict``, dataclasses, pydantic models, and
    ``Annotated[T, Field(description=..., ge=...)]``. The result is kept flat for small models
    and grammar converters: no ``title``, ``$ref`` resolved in place, and ``Optional[T]`` as
    ``{"type": [T, "null"]}``. A parameter with a default is optional and its default is
    recorded; one without is required. ``*args``/``**kwargs`` are not exposed (``**kwargs``
    leaves the schema open). ``arg_docs`` (name -> text, e.g. from the docstring's ``Args:``
    section) describe the properties that ``Field(description=...)`` does not.

    Raises:
        ToolDefinitionError: a parameter is positional-only, its type hint cannot be read, or
            its type has no JSON Schema (the message names the parameter).
    """
    return _signature(func, arg_docs or {})[0]


def _signature(
    func: Callable[..., Any], arg_docs: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, TypeAdapter[Any]]]:
    """``func``'s argument schema, and the converters of the arguments that JSON cannot carry
    as they are (dataclasses, pydantic models, ...), by name."""
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:  # unresolved forward references, etc.
        raise ToolDefinitionError(f"Cannot read the type hints of {func!r}: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, TypeAdapter[Any]] = {}
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
        hint = hints.get(p.name, Any)
        adapter = _adapter(hint, f"{func.__name__}({p.name})")
        prop = json_schema.from_signature(adapter.json_schema(), f"{func.__name__}({p.name})")
        if p.name in arg_docs:
            prop.setdefault("description", arg_docs[p.name])
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            default = p.default.value if isinstance(p.default, enum.Enum) else p.default
            if _is_json(default):
                prop["default"] = default
        if not _arrives_as_is(hint):
            converters[p.name] = adapter
        properties[p.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if open_ended:
        schema["additionalProperties"] = True
    return schema, converters


def _adapter(hint: Any, where: str) -> TypeAdapter[Any]:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(_for_pydantic(hint))
        adapter.json_schema()
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema, PydanticUserError) as exc:
        raise ToolDefinitionError(
            f"{where}: the type {hint!r} has no JSON Schema equivalent; use a JSON-like type "
            "(str, int, float, bool, list, dict, Optional, Literal, Enum, TypedDict, a dataclass "
            f"or a pydantic model) or pass parameters=... yourself ({type(exc).__name__})."
        ) from exc
    return adapter


def _for_pydantic(hint: Any) -> Any:
    """``hint`` with each ``typing.TypedDict`` remade as a ``typing_extensions.TypedDict``
    (pydantic reads only those before Python 3.12)."""
    if typing.is_typeddict(hint):
        fields = typing.get_type_hints(hint, include_extras=True)
        rebuilt = {
            name: (Required if name in hint.__required_keys__ else NotRequired)[
                _for_pydantic(tp)
            ]
            for name, tp in fields.items()
        }
        return typing_extensions.TypedDict(hint.__name__, rebuilt)  # type: ignore[operator]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if not args or origin is typing.Literal:
        return hint
    inner = tuple(_for_pydantic(a) for a in args)
    if inner == args:
        return hint
    if origin is typing.Annotated:
        annotated = (inner[0], *hint.__metadata__)
        return typing.Annotated[annotated]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[inner]  # noqa: UP007 - made from a tuple of types
    return origin[inner]


def _arrives_as_is(hint: Any) -> bool:
    """Values of ``hint`` come from JSON usable as they are: JSON types, ``Literal``, ``Enum``
    (its value is passed, as always), containers and ``TypedDict`` of those. Other types
    (dataclasses, pydantic models, ``datetime``, ...) are converted by pydantic first."""
    if hint in _AS_IS or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
        return True
    if typing.is_typeddict(hint):
        return all(map(_arrives_as_is, typing.get_type_hints(hint).values()))
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return _arrives_as_is(typing.get_args(hint)[0])
    return origin in _AS_IS_CONTAINERS and all(
        _arrives_as_is(a) for a in typing.get_args(hint) if a is not Ellipsis
    )


_AS_IS = {str, int, float, bool, type(None), Any, list, dict, tuple, set, frozenset}
_AS_IS_CONTAINERS = {typing.Union, types.UnionType, list, dict, tuple, set, frozenset}


def _converting(func: Callable[..., Any], converters: dict[str, TypeAdapter[Any]]) -> Any:
    """``func`` called with the arguments named in ``converters`` converted from their JSON
    form (a dict becomes the dataclass or model the signature asks for); ``func`` itself when
    there are none. Keeps ``async def`` functions awaitable."""
    if not converters:
        return func

    def convert(args: dict[str, Any]) -> dict[str, Any]:
        return {k: converters[k].validate_python(v) if k in converters else v
                for k, v in args.items()}

    if inspect.iscoroutinefunction(func):
        @functools.wraps(func)
        async def call_async(**args: Any) -> Any:
            return await func(**convert(args))

        return call_async

    @functools.wraps(func)
    def call(**args: Any) -> Any:
        return func(**convert(args))

    return call


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into (summary paragraph, {arg: description}), for Google, NumPy,
    reST and Epydoc styles (``docstring-parser``); line breaks become spaces."""
    parsed = docstring_parser.parse(doc)
    summary = (parsed.description or "").split("\n\n", 1)[0]
    args = {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
    return " ".join(summary.split()), args


# -- checks and rendering ----------------------------------------------------------------------
def _check_tool(tool: Tool) -> None:
    if not isinstance(tool.name, str) or not _NAME.fullmatch(tool.name):
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
    json_schema.check_valid(params, f"Tool {tool.name!r}: parameters")
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
        return JSON_TYPES.get(next(iter(kinds)) if len(kinds) == 1 else "", "value")
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
    if spec is False:  # a boolean schema that no value fits
        return f"{name} (no value is allowed: leave it out)"
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
