"""Tool parameters schemas: the one place where a schema from any source is bounded, made
self-contained, written in JSON Schema's own words and checked against.

Every source goes through here before the prompt renders a schema or the invoker checks
arguments against it:

============================  =====================================================
source                        what it goes through
============================  =====================================================
a Python signature            :func:`from_signature` (pydantic's schema of each hint)
an OpenAI tool spec           :func:`from_openai` (``serve``'s requests, eval suites,
                              :meth:`~react_agent.tools.Toolbox.from_openai_specs`)
an MCP server's tools/list    :func:`flatten` (bounded work and a bounded result)
every tool a toolbox adds     :func:`check_valid`
============================  =====================================================

- bounds (:mod:`._bounds`): :func:`check` keeps a schema within :data:`MAX_DEPTH` levels and
  :data:`MAX_NODES` values, with references only to places inside it;
- normalising (:mod:`._normalize`): loose type names (:func:`normalize`), nullable options
  (:func:`merge_nullable`), ``allOf`` parts (:func:`merge_all_of`), local references
  (:func:`resolve_local`);
- flattening (:mod:`._flatten`, :mod:`._shapes`): references resolved in place, what the
  validator cannot take dropped, nested objects described in words;
- validating (:mod:`._validation`): the bounded Draft 2020-12 :func:`validator`, its
  :func:`budget` of :data:`VALIDATION_SECONDS`, and :func:`surely_valid` for the common cases.
"""

from ._bounds import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_PATTERN_CHARS,
    UnresolvedReference,
    check,
    check_valid,
    no_retrieval,
)
from ._flatten import (
    MAX_ARGUMENTS,
    MAX_CHARS,
    MAX_INPUT_DEPTH,
    MAX_INPUT_NODES,
    MAX_NOTES,
    MAX_SCHEMAS,
    MAX_TEXT_CHARS,
    MAX_VALUES,
    MAX_WORK,
    REF_CUT_DEPTH,
    flatten,
)
from ._normalize import (
    add_null,
    from_openai,
    from_signature,
    merge_all_of,
    merge_nullable,
    normalize,
    resolve_local,
)
from ._shapes import CUT_TEXT
from ._validation import (
    MAX_PATTERN_WEIGHT,
    VALIDATION_SECONDS,
    Unchecked,
    Validator,
    all_different,
    budget,
    budget_seconds,
    search,
    spend,
    surely_valid,
    validator,
)

__all__ = [
    "CUT_TEXT", "MAX_ARGUMENTS", "MAX_CHARS", "MAX_DEPTH", "MAX_INPUT_DEPTH", "MAX_INPUT_NODES",
    "MAX_NODES", "MAX_NOTES", "MAX_PATTERN_CHARS", "MAX_PATTERN_WEIGHT", "MAX_SCHEMAS",
    "MAX_TEXT_CHARS",
    "MAX_VALUES", "MAX_WORK", "REF_CUT_DEPTH", "VALIDATION_SECONDS", "Unchecked",
    "UnresolvedReference", "Validator", "add_null", "all_different", "budget",
    "budget_seconds", "check",
    "check_valid", "flatten", "from_openai", "from_signature", "merge_all_of", "merge_nullable",
    "no_retrieval", "normalize", "resolve_local", "search", "spend", "surely_valid",
    "validator",
]
