"""Tools: what the model may call, and the safe invoker that runs a call.

- :class:`Tool` and :class:`Toolbox`: a tool is a callable with a name, a description and a JSON
  Schema for its arguments (from the signature, given, or an OpenAI spec); a toolbox is a
  name -> tool mapping that renders itself for the system prompt
  (:meth:`Toolbox.from_openai_specs`: one of OpenAI tool specs).
- :mod:`react_agent.tools.schema`: the one place a parameters schema from any source is
  bounded, normalised, flattened and checked against.
- :func:`invoke`, :func:`invoke_all`, :func:`ainvoke_all`: one call -> one observation,
  whatever happens (unknown tool, invalid arguments, an exception, a timeout).
- :class:`MCPToolbox`: the tools of MCP servers (a command line or a URL each), in a toolbox
  (the ``mcp`` extra).
- :mod:`react_agent.tools.builtin`: the CLI's default tools (calculator, date/time, read-only
  files) and the long-term memory tools.
"""

from ._arguments import (
    MAX_ARGS_DEPTH,
    MAX_PROBLEMS,
    argument_for_bare_value,
    call_example,
    check_args,
    clean_args,
    clean_value,
    value_problems,
)
from ._invoker import (
    DEFAULT_MAX_OBSERVATION_CHARS,
    Approver,
    ainvoke_all,
    format_result,
    in_worker,
    invoke,
    invoke_all,
    observation_text,
    prepare,
)
from ._loading import load_toolbox
from ._toolbox import DEFAULT_TOOL_TIMEOUT, Tool, Toolbox, ToolSpecError, schema_from_function
from .mcp import (
    DEFAULT_MCP_STARTUP_TIMEOUT,
    DEFAULT_MCP_TIMEOUT,
    MCPCallError,
    MCPServerConfig,
    MCPToolbox,
)

__all__ = [
    "DEFAULT_MAX_OBSERVATION_CHARS",
    "DEFAULT_MCP_STARTUP_TIMEOUT",
    "DEFAULT_MCP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "MAX_ARGS_DEPTH",
    "MAX_PROBLEMS",
    "Approver",
    "MCPCallError",
    "MCPServerConfig",
    "MCPToolbox",
    "Tool",
    "ToolSpecError",
    "Toolbox",
    "ainvoke_all",
    "argument_for_bare_value",
    "call_example",
    "check_args",
    "clean_args",
    "clean_value",
    "format_result",
    "in_worker",
    "invoke",
    "invoke_all",
    "load_toolbox",
    "observation_text",
    "prepare",
    "schema_from_function",
    "value_problems",
]
