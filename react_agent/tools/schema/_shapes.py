"""Words and fallbacks for a flattened schema (:mod:`._flatten`): the fields of a nested
object described in the argument's text (the prompt shows an argument's type and description
only), and a plainer schema for when the flattened one is not a valid one.
"""

from __future__ import annotations

import copy
import json
from typing import Any

CUT_TEXT = "(schema cut: too large)"
"""The end of the description of an argument whose schema was cut."""

_SHAPE_CHARS = 600  # the most characters a description of an object's fields adds
_SHOWN_VALUE_CHARS = 40  # an enum value in it, at most


def describe_shape(spec: dict[str, Any]) -> str | None:
    """The argument's description with the fields of a nested object (or of an array's objects)
    added (the rendering shows an argument's type and description only); ``None`` when there
    is nothing to add."""
    target, lead = spec, "an object with"
    if _is_type(spec, "array") and isinstance(spec.get("items"), dict):
        target, lead = spec["items"], "each item an object with"
    props = target.get("properties") if _is_type(target, "object") else None
    if not isinstance(props, dict) or not props:
        return None
    shape = _fields(target, 2)
    if len(shape) > _SHAPE_CHARS:
        shape = shape[:_SHAPE_CHARS].rstrip() + " ..."
    description = str(spec.get("description") or "").strip()
    cut = description.endswith(CUT_TEXT)
    if cut:
        description = description[:-len(CUT_TEXT)].rstrip()
    if not shape or shape in description:
        return None
    if description.endswith((".", "!", "?")):
        description, lead = f"{description} ", lead[0].upper() + lead[1:]
    elif description:
        description += "; "
    return f"{description}{lead} {shape}" + (f" {CUT_TEXT}" if cut else "")


def _is_type(spec: dict[str, Any], kind: str) -> bool:
    kinds = spec.get("type")
    return kinds == kind or (isinstance(kinds, list) and kind in kinds)


def _fields(spec: dict[str, Any], depth: int) -> str:
    props = spec.get("properties") or {}
    required = set(r for r in spec.get("required") or [] if isinstance(r, str))
    items = []
    for name, sub in list(props.items())[:12]:
        sub = sub if isinstance(sub, dict) else {}
        kind = sub.get("type")
        words = " or ".join(map(str, kind)) if isinstance(kind, list) else str(kind or "value")
        if "enum" in sub and isinstance(sub["enum"], list):
            words = "one of " + ", ".join(_shown(v) for v in sub["enum"][:6])
        inner = ""
        if depth > 1 and _is_type(sub, "object") and isinstance(sub.get("properties"), dict):
            inner = f" {{{_fields(sub, depth - 1)}}}"
        items.append(f"{name} ({words}{', required' if name in required else ''}){inner}")
    more = ", ..." if len(props) > 12 else ""
    return "fields " + ", ".join(items) + more if items else ""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_VALUE_CHARS else text[:_SHOWN_VALUE_CHARS] + "..."


def simplified(schema: dict[str, Any]) -> dict[str, Any]:
    """A plainer schema: each argument with its type, description, enum and default only."""
    props: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kept = {k: copy.deepcopy(spec[k]) for k in ("type", "description", "enum", "default")
                if k in spec}
        if isinstance(kept.get("type"), list):
            kept["type"] = [t for t in kept["type"] if t in _JSON_TYPE_NAMES] or "string"
        elif kept.get("type") not in _JSON_TYPE_NAMES:
            kept.pop("type", None)
        if "enum" in kept and not isinstance(kept["enum"], list):
            kept.pop("enum")
        props[str(name)] = kept
    out: dict[str, Any] = {"type": "object", "properties": props}
    required = [r for r in schema.get("required") or [] if r in props]
    if required:
        out["required"] = required
    if schema.get("additionalProperties") is True:
        out["additionalProperties"] = True
    return out


_JSON_TYPE_NAMES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
