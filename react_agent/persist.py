"""Saving and loading JSON files safely: runs, conversations, checkpoints and memory.

Writes are atomic (a temporary file in the same folder, flushed to disk, then ``os.replace``d
over the target), so a crash or a full disk never leaves half a file and never loses the
previous version.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

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


def read_json(path: Path) -> Any:
    """The JSON value in ``path``.

    Raises:
        ConfigError: the file is missing, unreadable or not JSON (the message names the file).
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}.") from exc
