"""The package's shape: modules import only from the layers before them and no module imports
another package's private module, every public class and function has resolvable type hints,
and what users import from ``react_agent`` is there."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import typing
from pathlib import Path

import pytest

import react_agent

PACKAGE = Path(react_agent.__file__).parent
DOCS = Path(__file__).resolve().parent.parent / "docs"

ROOT = ""
"""The package root, ``react_agent/__init__.py``: the top layer, imported by none of the
package's modules."""

LAYERS: list[tuple[str, list[str]]] = [
    ("errors, word matching and plain data; the shared lowest layer", [
        "_version", "errors", "_lexical", "_json", "_persist", "types", "_paths",
    ]),
    ("tools: schemas, the toolbox, the invoker; MCP; the built-in tools", [
        "tools.schema._bounds", "tools.schema._validation", "tools.schema._normalize",
        "tools.schema._shapes", "tools.schema._flatten", "tools.schema",
        "tools._toolbox", "tools._arguments", "tools._invoker", "tools._loading",
        "tools.mcp._config", "tools.mcp._stdio", "tools.mcp._results", "tools.mcp._connection",
        "tools.mcp._toolbox", "tools.mcp", "tools",
        "tools.builtin._calculator", "tools.builtin._clock", "tools.builtin._files",
        "tools.builtin._memory", "tools.builtin",
    ]),
    ("prompts; reading replies", [
        "prompts",
        "parsing._vocabulary", "parsing._scan", "parsing._escapes", "parsing._repair",
        "parsing._load", "parsing._envelope", "parsing._placeholders", "parsing._placement",
        "parsing._stream", "parsing._reply", "parsing",
    ]),
    ("the model backends", [
        "models.base", "models._scripted", "models._weights", "models._cpu_probe",
        "models._answer_floor", "models._chat_tokens", "models._prompt_cache",
        "models._canonical_start", "models._llama_cpp",
        "models.llama_server",
        "models._openai_chat",
        "models",
    ]),
    ("events; the engine (protocol, run state, policy contract, loop core); the small-model "
     "policies; options", [
        "events", "engine._framing", "engine._protocol", "engine._output", "engine._facts",
        "engine._run", "engine._loop", "engine",
        "policies._constrained", "policies._answer_floor", "policies._repeat",
        "policies._grounding", "policies._held_calls", "policies._values", "policies._restated",
        "policies._announced", "policies._review", "policies._routing", "policies._unknown_args",
        "policies._best_effort", "policies._provenance", "policies._relevance",
        "policies._made_up", "policies._stated_values", "policies._missed_call", "policies",
        "config",
    ]),
    ("the agent: model I/O, conversations, the facade", [
        "agent._model_io", "agent._conversation", "agent._agent", "agent",
    ]),
    ("the harness: runs in bulk, evaluation, traces, printing", [
        "harness._checks", "harness._tasks", "harness._batch", "harness._ray",
        "harness._evaluation", "harness._trace",
        "harness._display", "harness._redaction", "harness._view_entries", "harness._view",
        "harness._otel", "harness",
    ]),
    ("the OpenAI-compatible endpoint (`serve`); the command line", [
        "serve._openai", "serve._config", "serve._admission", "serve._turn", "serve._app",
        "serve",
        "cli._parser", "cli._session", "cli._view", "cli._run", "cli._chat", "cli._eval",
        "cli._serve", "cli._show", "cli",
    ]),
    ("the package root: what users import; `python -m react_agent`", [ROOT, "__main__"]),
]
"""The layers, lowest first, each module in the order it may be imported in."""

ORDER = [module for _, modules in LAYERS for module in modules]
"""Every module, each importing only from those before it."""


def source_path(module: str, package: Path = PACKAGE) -> Path:
    """The file of ``module`` (a dotted name below the package; ``ROOT`` for the root)."""
    parts = module.split(".") if module else []
    path = package.joinpath(*parts).with_suffix(".py") if parts else package / "__init__.py"
    return path if path.exists() else package.joinpath(*parts, "__init__.py")


def known_modules(package: Path = PACKAGE) -> set[str]:
    """Every module and package below ``package`` as dotted names, the root as ``ROOT``."""
    found = {ROOT}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.add(".".join(parts))
    return found


def package_of(module: str, package: Path = PACKAGE) -> str:
    """The package ``module``'s relative imports start from: itself for an ``__init__``."""
    if source_path(module, package).name == "__init__.py":
        return module
    return module.rpartition(".")[0]


def package_imports(module: str, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """The package's modules that ``module`` imports, as (line, module) pairs: relative and
    absolute imports, ``import x`` and ``from x import y``, at the top and inside functions.
    ``from p import y`` imports ``p.y`` where that is a module, else ``p`` itself."""
    modules = known_modules(package)
    tree = ast.parse(source_path(module, package).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head, _, rest = alias.name.partition(".")
                if head == package.name:
                    found.append((node.lineno, rest))
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = [part for part in package_of(module, package).split(".") if part]
            base = parts[: len(parts) - node.level + 1]
            base += node.module.split(".") if node.module else []
        elif node.module and node.module.split(".")[0] == package.name:
            base = node.module.split(".")[1:]
        else:
            continue
        for alias in node.names:
            submodule = ".".join([*base, alias.name])
            found.append((node.lineno, submodule if submodule in modules else ".".join(base)))
    return list(dict.fromkeys(found))


def is_private(module: str) -> bool:
    """Whether a part of the dotted name starts with ``_`` (``__main__`` aside)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def reaches_into(importer: str, target: str, package: Path = PACKAGE) -> bool:
    """Whether ``importer`` imports ``target``, a private module of a package it is not in. A
    package's private modules are open to the modules of that package and of its subpackages
    (``tools.mcp`` uses ``tools._toolbox``), so the root's (``_json``, ``_lexical``, ...) are
    the shared lowest layer, open to all; ``engine`` uses ``tools``, not ``tools._invoker``."""
    owner = target.split(".")[:-1]
    inside = package_of(importer, package).split(".")
    return is_private(target) and inside[: len(owner)] != owner


def test_every_module_is_placed_in_the_layers() -> None:
    modules = {
        m.name.removeprefix("react_agent.")
        for m in pkgutil.walk_packages(react_agent.__path__, "react_agent.")
    }
    assert modules | {ROOT} == set(ORDER)
    assert len(ORDER) == len(set(ORDER))


@pytest.mark.parametrize("module", ORDER)
def test_modules_import_only_from_earlier_layers(module: str) -> None:
    later = set(ORDER[ORDER.index(module):])
    assert [(line, name or "react_agent") for line, name in package_imports(module)
            if name in later] == []


@pytest.mark.parametrize("module", ORDER)
def test_no_module_imports_another_packages_private_module(module: str) -> None:
    assert [(line, name) for line, name in package_imports(module)
            if reaches_into(module, name)] == []


@pytest.mark.parametrize(("importer", "source", "found"), [
    ("engine._loop", "from ..tools._invoker import invoke\n", [(1, "tools._invoker")]),
    ("engine._loop", "from ..tools import Toolbox\n", [(1, "tools")]),
    ("engine._loop", "from .. import _json, types\n", [(1, "_json"), (1, "types")]),
    ("cli._run", "def f():\n    from .. import __version__\n", [(2, ROOT)]),
    ("harness._view", "import react_agent.tools._invoker as inv\n", [(1, "tools._invoker")]),
    ("harness._view", "import react_agent\n", [(1, ROOT)]),
    ("serve", "from react_agent.agent import _agent\n", [(1, "agent._agent")]),
    ("serve", "from ._app import create_app\n", [(1, "serve._app")]),
    ("serve._app", "from . import _turn\n", [(1, "serve._turn")]),
    ("tools", "from .mcp._toolbox import x\n", [(1, "tools.mcp._toolbox")]),
    ("serve._app", "import json\nfrom fastapi import FastAPI\n", []),
])
def test_the_imports_are_read_from_the_syntax_tree(
    tmp_path: Path, importer: str, source: str, found: list[tuple[int, str]],
) -> None:
    package = tmp_path / "react_agent"
    for module in ORDER:
        path = source_path(module)
        copy = package / path.relative_to(PACKAGE)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text("", encoding="utf-8")
    source_path(importer, package).write_text(source, encoding="utf-8")
    assert package_imports(importer, package) == found


@pytest.mark.parametrize(("importer", "target", "forbidden"), [
    ("engine._loop", "tools._invoker", True),
    ("tools", "tools.mcp._toolbox", True),
    ("tools.builtin._memory", "tools.mcp._toolbox", True),
    ("agent", "engine._run", True),
    ("tools.mcp._toolbox", "tools._toolbox", False),
    ("engine._loop", "_json", False),
    ("engine._loop", "tools", False),
    ("cli._run", "_version", False),
    ("serve._app", "serve._turn", False),
    ("serve", "serve._app", False),
    ("models", "models.base", False),
])
def test_a_private_module_is_open_to_its_package_and_subpackages_only(
    importer: str, target: str, forbidden: bool,
) -> None:
    assert reaches_into(importer, target) is forbidden


def test_the_docs_state_the_layers_of_this_test() -> None:
    concepts = (DOCS / "concepts.md").read_text(encoding="utf-8")
    section = concepts.split("## The layers", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^\d+\. (.*(?:\n {3}.*)*)", section, re.MULTILINE)
    listed = [re.findall(r"`([\w.]+)`", item) for item in items]
    expected = [sorted({module.split(".")[0] or "react_agent" for module in modules})
                for _, modules in LAYERS]
    assert [sorted(set(names)) for names in listed] == expected


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
