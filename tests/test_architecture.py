"""The package's shape: modules import only from the layers before them, every public class and
function has resolvable type hints, and what users import from ``react_agent`` is there."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import typing
from pathlib import Path

import pytest

import react_agent

PACKAGE = Path(react_agent.__file__).parent

ORDER = [
    # 1. errors, word matching and plain data
    "_version", "errors", "_lexical", "_json", "_persist", "types", "_paths",
    # 2. tools: schemas, the toolbox, the invoker; the built-in tools
    "tools.schema._bounds", "tools.schema._validation", "tools.schema._normalize",
    "tools.schema._shapes", "tools.schema._flatten", "tools.schema",
    "tools._toolbox", "tools._arguments", "tools._invoker", "tools._loading",
    "tools.mcp._config", "tools.mcp._stdio", "tools.mcp._results", "tools.mcp._connection",
    "tools.mcp._toolbox", "tools.mcp", "tools",
    "tools.builtin._calculator", "tools.builtin._clock", "tools.builtin._files",
    "tools.builtin._memory", "tools.builtin",
    # 3. prompts; reading replies
    "prompts",
    "parsing._vocabulary", "parsing._scan", "parsing._escapes", "parsing._repair",
    "parsing._load", "parsing._envelope", "parsing._placeholders", "parsing._placement",
    "parsing._stream", "parsing._reply", "parsing",
    # 4. the model backends
    "models.base", "models._scripted", "models._weights", "models._cpu_probe",
    "models._answer_floor", "models._chat_tokens", "models._prompt_cache",
    "models._canonical_start", "models._llama_cpp",
    "models.llama_server",
    "models._openai_chat",
    "models",
    # 5. events; the engine (protocol, run state, policy contract, loop core); the small-model
    # policies; options
    "events", "engine._protocol", "engine._output", "engine._facts", "engine._run",
    "engine._loop", "engine",
    "policies._constrained", "policies._answer_floor", "policies._repeat",
    "policies._grounding", "policies._held_calls", "policies._values", "policies._restated",
    "policies._review", "policies._routing", "policies._unknown_args",
    "policies._best_effort", "policies",
    "config",
    # 6. the agent: model I/O, conversations, the facade
    "agent._model_io", "agent._conversation", "agent._agent", "agent",
    # 7. the harness: runs in bulk, evaluation, traces, printing
    "harness._checks", "harness._tasks", "harness._batch", "harness._ray", "harness._evaluation",
    "harness._trace",
    "harness._display", "harness._redaction", "harness._view_entries", "harness._view",
    "harness._otel", "harness",
    # 8. the OpenAI-compatible endpoint (`serve`); the command line
    "serve._openai", "serve._config", "serve._admission", "serve._turn", "serve._app",
    "serve",
    "cli._parser", "cli._session", "cli._view", "cli._run", "cli._chat", "cli._eval",
    "cli._serve", "cli._show", "cli", "__main__",
]
"""Every module, each importing only from those before it."""


def package_imports(module: str) -> set[str]:
    """The modules of the package that ``module`` imports (relative imports; the package root,
    always imported first, left out)."""
    path = PACKAGE.joinpath(*module.split(".")).with_suffix(".py")
    if not path.exists():
        path = PACKAGE.joinpath(*module.split("."), "__init__.py")
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            if node.module:
                found.add(".".join([*base, node.module]))
            else:
                found.update(".".join([*base, alias.name]) for alias in node.names)
    return found & set(ORDER)


def test_every_module_is_placed_in_the_layers() -> None:
    modules = {
        m.name.removeprefix("react_agent.")
        for m in pkgutil.walk_packages(react_agent.__path__, "react_agent.")
    }
    assert modules == set(ORDER)


@pytest.mark.parametrize("module", ORDER)
def test_modules_import_only_from_earlier_layers(module: str) -> None:
    later = set(ORDER[ORDER.index(module):])
    assert not package_imports(module) & later


PUBLIC = [
    obj
    for info in pkgutil.walk_packages(react_agent.__path__, "react_agent.")
    if not info.name.endswith("__main__")
    for name, obj in vars(importlib.import_module(info.name)).items()
    if not name.startswith("_") and getattr(obj, "__module__", None) == info.name
    and (inspect.isclass(obj) or inspect.isfunction(obj))
]


@pytest.mark.parametrize("obj", PUBLIC, ids=lambda o: f"{o.__module__}.{o.__qualname__}")
def test_type_hints_resolve(obj: object) -> None:
    typing.get_type_hints(obj)
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if isinstance(member, property):
                typing.get_type_hints(member.fget)
            elif inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
                typing.get_type_hints(member)


@pytest.mark.parametrize("name", ["Agent", "AgentConfig", "ChatModel", "ModelReply", "Message",
                                  "RunResult", "ScriptedModel", "Status", "Step", "Toolbox"])
def test_what_users_import_from_the_package(name: str) -> None:
    assert name in react_agent.__all__ and getattr(react_agent, name) is not None


def test_the_package_is_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()
