"""Load and render the prompt templates in ``prompts/`` (one file per prompt).

Templates use :class:`string.Template` syntax (``$name``; ``$$`` for a literal dollar) and are
rendered strictly: a missing variable raises :class:`ConfigError`. In an installed wheel the files
live in ``react_agent/_prompts``; in a source checkout they are read from ``<repo>/prompts``.
The idea of prompts as package files loaded with ``importlib.resources`` is smolagents'.
"""

from __future__ import annotations

import functools
import string
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .toolbox import Toolbox

_SOURCE_DIR = Path(__file__).resolve().parent.parent / "prompts"


def prompt_dir() -> Path:
    """The directory holding the prompt templates (wheel location first, then the checkout)."""
    packaged = resources.files("react_agent") / "_prompts"
    if packaged.is_dir():
        return Path(str(packaged))
    if _SOURCE_DIR.is_dir():
        return _SOURCE_DIR
    raise ConfigError(
        "The prompt templates were not found (looked in react_agent/_prompts and "
        f"{_SOURCE_DIR}); reinstall react-agent."
    )


@functools.cache
def load_template(name: str) -> string.Template:
    """The template ``prompts/<name>.md``.

    Raises:
        ConfigError: no such template file.
    """
    path = prompt_dir() / f"{name}.md"
    try:
        return string.Template(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"No prompt template {path}; the prompts/ folder is incomplete.") from exc


def render(name: str, **variables: Any) -> str:
    """Render ``prompts/<name>.md`` with ``variables``; trailing whitespace is stripped.

    Raises:
        ConfigError: the template needs a variable that was not given, or has a stray ``$``.
    """
    try:
        return load_template(name).substitute(variables).rstrip()
    except KeyError as exc:
        raise ConfigError(f"Prompt {name!r} needs the variable {exc.args[0]!r}.") from exc
    except ValueError as exc:
        raise ConfigError(f"Prompt {name!r} is malformed: {exc}") from exc


def render_system_prompt(toolbox: Toolbox, instructions: str = "") -> str:
    """The system prompt for ``toolbox``: role, tool descriptions, reply format and rules.

    Args:
        toolbox: the tools to describe (an empty toolbox is allowed: the model can only answer).
        instructions: extra text appended as "Additional instructions" (e.g. a persona or a
            language requirement); empty for none.

    Returns:
        The rendered ``prompts/system.md`` as one string.
    """
    tools = toolbox.describe() if len(toolbox) else "(no tools: answer from what you know)"
    extra = f"\n\nAdditional instructions:\n{instructions.strip()}" if instructions.strip() else ""
    return render("system", tools=tools, instructions=extra)
