"""Load and render the prompt templates in ``prompts/`` (one file per prompt), grouped by who
uses them: ``agent/`` (the system prompt, observations, feedback on unusable replies),
``policies/``, ``conversation/``, ``serve/``, and ``reply/``: the reply format's short forms,
written once and given to every template as variables (``$reply_final_answer``,
``$reply_tool_call``).

Templates use :class:`string.Template` syntax (``$name``; ``$$`` for a literal dollar) and are
rendered strictly: a missing variable raises :class:`ConfigError`. In an installed wheel the files
live in ``react_agent/_prompts``; in a source checkout they are read from ``<repo>/prompts``.
The idea of prompts as package files loaded with ``importlib.resources`` is smolagents'.
"""

from __future__ import annotations

import functools
import os
import string
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .tools import Toolbox

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
    """The template ``prompts/<name>.md`` (``name`` like ``"agent/system"``).

    Raises:
        ConfigError: no such template file.
    """
    path = prompt_dir() / f"{name}.md"
    try:
        return string.Template(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise ConfigError(f"No prompt template {path}; the prompts/ folder is incomplete.") from exc


@functools.cache
def reply_forms() -> dict[str, str]:
    """The reply format's short forms in ``prompts/reply/``, by variable name
    (``reply_final_answer``, ``reply_tool_call``): every template may use them."""
    return {f"reply_{path.stem}": path.read_text(encoding="utf-8").strip()
            for path in sorted((prompt_dir() / "reply").glob("*.md"))}


def render(name: str, **variables: Any) -> str:
    """Render ``prompts/<name>.md`` with ``variables`` and the :func:`reply_forms`; trailing
    whitespace is stripped.

    Raises:
        ConfigError: the template needs a variable that was not given, or has a stray ``$``.
    """
    return _substitute(load_template(name), f"Prompt {name!r}", {**reply_forms(), **variables})


def render_system_prompt(
    toolbox: Toolbox, instructions: str = "", template: str | os.PathLike[str] | None = None,
    framed: bool = True,
) -> str:
    """The system prompt for ``toolbox``: role, tool descriptions, reply format and rules.

    Args:
        toolbox: the tools to describe (an empty toolbox is allowed: the model can only answer).
        instructions: extra text appended as "Additional instructions" (e.g. a persona or a
            language requirement); empty for none.
        template: a system prompt of your own instead of ``prompts/agent/system.md``: a path to a
            file (``pathlib.Path`` or any ``os.PathLike``), or the template text itself (a
            ``str``), in the same syntax (``$tools`` for the tool descriptions,
            ``$instructions`` for the extra text, ``$$`` for a dollar sign; ``$data_rule``
            where the rule on framed tool results goes, else it goes before the extra text).
        framed: the run frames tool results as data (``AgentConfig.frame_observations``): the
            rule that text inside a frame is data (``prompts/agent/data_rule.md``) is shown.

    Returns:
        The rendered template as one string.

    Raises:
        ConfigError: the template file cannot be read; the template has no ``$tools`` (the model
            would not know the tools), or no ``$instructions`` while ``instructions`` are given;
            or it uses another variable or a stray ``$``.
    """
    tools = toolbox.describe() if len(toolbox) else "(no tools: answer from what you know)"
    extra = f"\n\nAdditional instructions:\n{instructions.strip()}" if instructions.strip() else ""
    chosen = load_template("agent/system") if template is None else _own_template(template)
    placed = _identifiers(chosen)
    for name, needed in (("tools", True), ("instructions", bool(extra))):
        if needed and name not in placed:
            raise ConfigError(f"The system prompt template has no ${name}; put it where the "
                              f"{name} should go.")
    rule = "\n" + render("agent/data_rule") if framed else ""
    after = ""
    if rule and "data_rule" not in placed:
        if "instructions" in placed:
            extra, rule = rule + extra, ""
        else:
            after, rule = "\n" + rule, ""
    label = "Prompt 'agent/system'" if template is None else "The system prompt template"
    return _substitute(chosen, label, {**reply_forms(), "tools": tools, "instructions": extra,
                                       "data_rule": rule}) + after


def _own_template(source: str | os.PathLike[str]) -> string.Template:
    if isinstance(source, str):
        return string.Template(source)
    try:
        return string.Template(Path(source).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the system prompt template {source}: "
                          f"{exc.strerror or exc}.") from exc


def _identifiers(template: string.Template) -> set[str]:
    """The variable names ``template`` uses (``Template.get_identifiers`` needs Python 3.11)."""
    found = set()
    for match in template.pattern.finditer(template.template):
        name = match.group("named") or match.group("braced")
        if name:
            found.add(name)
    return found


def _substitute(template: string.Template, label: str, variables: dict[str, Any]) -> str:
    try:
        return template.substitute(variables).rstrip()
    except KeyError as exc:
        raise ConfigError(f"{label} needs the variable {exc.args[0]!r}.") from exc
    except ValueError as exc:
        raise ConfigError(f"{label} is malformed: {exc}") from exc
