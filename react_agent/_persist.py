"""Saving and loading JSON files safely: runs, conversations, checkpoints and memory; and
reading JSON Lines files (tasks, eval suites, results, traces).

Writes are atomic (a temporary file in the same folder, flushed to disk, then ``os.replace``d
over the target), so a crash or a full disk never leaves half a file and never loses the
previous version.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Literal

from .errors import ConfigError


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step. A lone surrogate (half a UTF-16
    pair, which a model reply can carry) is written as its JSON escape ``\\udXXX`` instead of
    failing the write; inside a JSON string that reads back as the same character.

    Raises:
        OSError: the folder is not writable or the disk is full; ``path`` is then unchanged.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


MAX_JSON_DEPTH = 100
"""The deepest nesting of arrays and objects the JSON this package reads may have: files,
request bodies and arguments written as JSON text (the values it writes stay far below)."""


def loads(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with the nesting bounded: work on the value stays linear and shallow.

    Raises:
        ValueError: ``text`` is not JSON, or nests arrays and objects deeper than
            ``max_depth`` levels (the message says so).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node \
            if isinstance(node, list) else None
        if children is None:
            continue
        if depth > max_depth:
            raise ValueError(f"nested deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in children)
    return value


def read_json(path: Path) -> Any:
    """The JSON value in ``path``.

    Raises:
        ConfigError: the file is missing, unreadable or not JSON (the message names the file).
    """
    try:
        return loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}.") from exc


def read_json_lines(
    path: str | os.PathLike[str],
    what: str,
    *,
    missing_ok: bool = False,
    skip_broken: Literal["none", "last", "all"] = "none",
) -> list[tuple[int, Any]]:
    """The JSON value of each non-blank line of a JSON Lines file, with its line number.

    Args:
        path: the file (UTF-8).
        what: what the file is, for messages (``"tasks file"``, ``"trace"``, ...).
        missing_ok: a missing file reads as no lines (an output file not written yet).
        skip_broken: which lines that are not JSON are passed over instead of raising:
            ``"none"`` (files people write), ``"last"`` (a file this package writes in one go,
            whose last line a crash can cut short) or ``"all"`` (a file this package appends
            to across runs, where a cut-short line can end up in the middle).

    Returns:
        ``[(line number (1-based), value), ...]`` in file order.

    Raises:
        ConfigError: the file cannot be read, or a line that is not JSON is not skipped (the
            line is named).
    """
    try:  # bytes: a line cut short may end inside a character; U+2028 is no line break here
        lines = Path(path).read_bytes().splitlines()
    except FileNotFoundError as exc:
        if missing_ok:
            return []
        raise ConfigError(f"Cannot read the {what} {path}: {exc.strerror or exc}") from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read the {what} {path}: {exc.strerror or exc}") from exc
    values = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            values.append((number, loads(line.decode("utf-8"))))
        except ValueError as exc:  # UnicodeDecodeError included
            if skip_broken == "all" or (skip_broken == "last" and number == len(lines)):
                continue
            raise ConfigError(f"{path}, line {number}: not a JSON record ({exc}).") from exc
    return values


def append_json_lines(path: str | os.PathLike[str]) -> IO[str]:
    """``path`` opened to append JSON lines (its folder made if needed), starting on a new line
    if a crash left the last one cut short, so that the next record is not glued to it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab+") as raw:  # bytes: a cut-short line may end inside a character
        size = raw.seek(0, os.SEEK_END)
        raw.seek(max(0, size - 1))
        cut_short = size > 0 and raw.read(1) != b"\n"
    sink = path.open("a", encoding="utf-8", errors="backslashreplace")  # a lone surrogate
    if cut_short:
        sink.write("\n")
    return sink


def write_json_line(sink: IO[str], record: Any) -> None:
    """Append ``record`` as one line and flush it, so that it survives a crash that follows."""
    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    sink.flush()
