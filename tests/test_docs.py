"""The docs build's griffe extension (docs/_ext/rst_roles.py): the reStructuredText the
docstrings use reads as Markdown on the API pages (a literal block ``text::`` as a fenced code
block, not a literal ``::``). The whole build runs in .ci/run (mkdocs --strict)."""

from __future__ import annotations

import importlib.util
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import react_agent

ROOT = Path(__file__).resolve().parent.parent


def _extension() -> Any:
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("rst_roles", ROOT / "docs/_ext/rst_roles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markdown(docstring: str) -> str:
    ext = _extension()
    return str(ext._LITERAL.sub(ext._fenced, inspect.cleandoc(docstring)))


def test_the_quick_start_is_a_heading_and_a_code_block() -> None:
    text = _markdown(react_agent.__doc__ or "")
    assert "\nQuick start:\n\n```python\nfrom react_agent import Agent, Toolbox\n" in text
    assert text.rstrip().endswith("print(result.status, result.final_answer)\n```")
    assert "::" not in text


def test_a_literal_block_that_is_not_python_is_text_and_a_bare_marker_goes() -> None:
    text = _markdown("Spans::\n\n    run\n      model call\n\nAfter.\n\n::\n\n    x = 1\n")
    assert text.rstrip() == ("Spans:\n\n```text\nrun\n  model call\n```\n\nAfter.\n\n"
                             "```python\nx = 1\n```")


def _public_docstrings() -> list[tuple[str, str]]:
    found = []
    for info in pkgutil.walk_packages(react_agent.__path__, "react_agent."):
        if info.name.endswith("__main__"):  # importing it runs the command
            continue
        module = importlib.import_module(info.name)
        found.append((info.name, module.__doc__ or ""))
        for name, obj in vars(module).items():
            if not name.startswith("_") and getattr(obj, "__module__", None) == info.name:
                found.append((f"{info.name}.{name}", inspect.getdoc(obj) or ""))
    return found


def test_no_docstring_keeps_a_literal_marker_on_its_page() -> None:
    left = [name for name, doc in _public_docstrings()
            if any(line.rstrip().endswith("::") for line in _markdown(doc).splitlines())]
    assert left == []
