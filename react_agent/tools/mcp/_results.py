"""An MCP tool's result as one observation: text parts, structured content as JSON, a short
placeholder for images, audio and binary resources; an ``isError`` result raises."""

from __future__ import annotations

import json
from typing import Any

from ._config import MCPToolError, _size


# -- results -----------------------------------------------------------------------------------
def observation(result: Any) -> str:
    """A ``CallToolResult`` as the text the model reads.

    Text parts as they are, one after the other; structured content as compact JSON (once: a
    text part that only repeats it is replaced by it, and ``{"result": X}`` beside a text part
    that is X is left out); images, audio and binary resources as a
    placeholder naming the type and size; a text resource with its URI; a resource link as its
    name and URI.

    Raises:
        MCPToolError: the result is an error (``isError``); the message is the server's text.
    """
    content = list(getattr(result, "content", None) or [])
    structured = getattr(result, "structured_content", None)
    parts: list[str] = []
    shown_structured = False
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            text = str(getattr(block, "text", ""))
            if structured is not None and not shown_structured and _same_json(text, structured):
                parts.append(_json(structured))
                shown_structured = True
            else:
                parts.append(text)
                shown_structured = shown_structured or _wraps(structured, text)
        else:
            parts.append(_placeholder(block))
    if structured is not None and not shown_structured:
        parts.append(_json(structured))
    text = "\n".join(p for p in parts if p != "")
    if getattr(result, "is_error", False):
        raise MCPToolError(text or "the tool reported an error and gave no details.")
    return text if text.strip() else "(the tool returned no content)"


def _wraps(structured: Any, text: str) -> bool:
    """Whether ``structured`` is ``{"result": X}`` for a text part that is X (the Python SDK
    wraps a tool's plain return value so, beside the value as text)."""
    if not isinstance(structured, dict) or set(structured) != {"result"}:
        return False
    value = structured["result"]
    return text == value if isinstance(value, str) else _same_json(text, value)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _placeholder(block: Any) -> str:
    kind = str(getattr(block, "type", None) or type(block).__name__)
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "unknown type"
        return f"[{kind}: {mime}, {_size(_b64_bytes(getattr(block, 'data', '')))}; not shown]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = str(getattr(resource, "uri", "") or "")
        mime = getattr(resource, "mime_type", None)
        about = f"{uri} ({mime})" if mime else uri
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {about}]\n{text}"
        blob = getattr(resource, "blob", "") or ""
        return f"[resource {about}: binary, {_size(_b64_bytes(blob))}; not shown]"
    if kind == "resource_link":
        name = getattr(block, "name", None) or ""
        uri = getattr(block, "uri", "") or ""
        extra = [str(x) for x in (getattr(block, "mime_type", None),
                                  getattr(block, "description", None)) if x]
        more = f" ({'; '.join(extra)})" if extra else ""
        return f"[resource link: {name} {uri}{more}]".replace("  ", " ")
    return f"[{kind} content; not shown]"


def _b64_bytes(data: Any) -> int:
    text = str(data or "").strip()
    return max(0, len(text) * 3 // 4 - text[-2:].count("="))
