"""A griffe extension for the docs build: the Sphinx roles the docstrings use
(``:class:`~react_agent.Toolbox```, ``:func:`parse_reply```, ``:mod:`react_agent.policies```)
become mkdocstrings cross-references (``[Toolbox][react_agent.Toolbox]``), so that the API
reference links them, and a reference to a public name that does not exist fails the strict
build. Private names (a ``_`` module or object) are shown as code. A reStructuredText literal
block (``Quick start::`` and the indented lines after it) becomes a fenced code block, so the
page shows ``Quick start:`` and the code, not the ``::``."""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`(~?)([^`<>]+?)`")
_LITERAL = re.compile(r"(?m)^(?P<lead>[ \t]*)(?P<text>.*?)::[ \t]*\n(?P<block>(?:[ \t]*\n)+"
                      r"(?:(?P=lead)[ \t]+\S.*\n?|[ \t]*\n)+)")


class RstRoles(griffe.Extension):
    """Rewrite the roles of every docstring once the whole package is loaded (a name is then
    found among the members of its module, imported ones included)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.docstring is not None:
                text = _LITERAL.sub(_fenced, obj.docstring.value)
                obj.docstring.value = _ROLE.sub(lambda m, o=obj: _link(o, m), text)
            stack.extend(m for m in obj.members.values() if not isinstance(m, griffe.Alias))


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    """The cross-reference of one role: to the API reference for a public name of the package;
    plain code for a private one (documented in its module, not in the reference) or a name
    outside the package."""
    short, target = match.group(1) == "~", match.group(2).strip()
    shown = target.rsplit(".", 1)[-1] if short else target
    if target.startswith("."):  # relative to the object's module (Sphinx's ".name")
        target = f"{obj.module.path}{target}"
    elif not target.startswith("react_agent"):  # a name seen from the object's scope
        first, _, rest = target.partition(".")
        scope: griffe.Object | None = obj if obj.is_class or obj.is_module else obj.parent
        while scope is not None and first not in scope.members:
            scope = scope.parent
        if scope is not None:
            member = scope.members[first]
            found = member.target_path if isinstance(member, griffe.Alias) else member.path
            target = f"{found}.{rest}" if rest else found
    parts = target.split(".")
    if parts[0] != "react_agent" or any(p.startswith("_") and not p.startswith("__")
                                        for p in parts):
        return f"`{shown}`"
    return f"[`{shown}`][{target}]"


def _fenced(match: re.Match[str]) -> str:
    """A literal block as a fenced code block (Python where it parses as Python), after its
    paragraph with one colon (reST's ``text::``; a ``::`` alone on its line goes)."""
    lead, text = match.group("lead"), match.group("text").rstrip()
    code = textwrap.dedent(match.group("block").strip("\n"))
    try:
        ast.parse(code)
        language = "python"
    except SyntaxError:
        language = "text"
    fence = textwrap.indent(f"```{language}\n{code}\n```", lead)
    head = f"{lead}{text}:\n\n" if text else ""
    return f"{head}{fence}\n\n"
