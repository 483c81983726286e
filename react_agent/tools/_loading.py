"""Tools named on the command line or in a tasks file: ``MODULE:OBJECT`` or ``FILE.py:OBJECT``.

Importing a module runs its code: name only modules you trust (your own tools).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._lexical import did_you_mean
from ..errors import ConfigError
from ._toolbox import Toolbox


def load_toolbox(spec: str) -> Toolbox:
    """Import ``MODULE:OBJECT`` (or ``path/to/file.py:OBJECT``) and return the Toolbox there.

    ``OBJECT`` may be a Toolbox or a function returning one. A file is run anew at each call;
    while it runs, its folder is searched last for the modules it imports (after the installed
    ones), and then taken off ``sys.path`` again, so that no later import finds a module there.

    Raises:
        ConfigError: the module, the attribute or the Toolbox is missing.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"Tools are named MODULE:OBJECT or FILE.py:OBJECT, got {spec!r}.")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name).resolve()
            if not path.is_file():
                raise ConfigError(f"Tools {spec!r}: no file {path}.")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            if module_spec is None or module_spec.loader is None:
                raise ConfigError(f"Tools {spec!r}: {path} cannot be imported as a module.")
            module = importlib.util.module_from_spec(module_spec)
            with _searched_last(str(path.parent)):
                module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        raise ConfigError(f"Tools {spec!r}: {_not_found(module_name, exc)}") from exc
    except Exception as exc:  # ImportError, SyntaxError, ToolDefinitionError, ...
        raise ConfigError(
            f"Tools {spec!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    if not hasattr(module, attr):
        names = [n for n in vars(module) if not n.startswith("_")]
        toolboxes = [n for n in names if isinstance(getattr(module, n), Toolbox)]
        listed = f" Its Toolboxes: {', '.join(toolboxes)}." if toolboxes else ""
        raise ConfigError(
            f"Tools {spec!r}: the module has no object {attr!r}"
            f"{did_you_mean(attr, names)}.{listed}")
    obj: Any = getattr(module, attr)
    if obj is not None and not isinstance(obj, Toolbox) and callable(obj):
        obj = obj()
    if not isinstance(obj, Toolbox):
        raise ConfigError(f"Tools {spec!r}: not a Toolbox (got {type(obj).__name__}).")
    return obj


_PATH_LOCK = threading.RLock()
"""Held while a tools file runs with its folder on ``sys.path`` (batches load tools in
threads; a tools file may load another)."""


@contextmanager
def _searched_last(folder: str) -> Iterator[None]:
    """``folder`` at the end of ``sys.path`` for the time of the block (unless it is there
    already), then removed."""
    with _PATH_LOCK:
        added = folder not in sys.path
        if added:
            sys.path.append(folder)
        try:
            yield
        finally:
            if added and folder in sys.path:
                del sys.path[len(sys.path) - 1 - sys.path[::-1].index(folder)]


def _not_found(module_name: str, exc: ModuleNotFoundError) -> str:
    """Why ``module_name`` cannot be imported, in words: a module it imports is missing, or no
    module has that name (then the closest one there is, or the file meant)."""
    missing = exc.name or module_name
    if missing != module_name and not module_name.startswith(f"{missing}."):
        return (f"importing {module_name!r} needs the module {missing!r}, which is not "
                "installed.")
    parent = missing.rpartition(".")[0]
    try:
        search = importlib.import_module(parent).__path__ if parent else None
    except (ImportError, AttributeError):
        search = None
    prefix = f"{parent}." if parent else ""
    options = [] if parent and search is None else \
        [prefix + m.name for m in pkgutil.iter_modules(search)]
    text = f"no module named {missing!r} can be imported{did_you_mean(missing, options)}"
    if Path(f"{module_name.replace('.', '/')}.py").is_file():
        text += f"; to load the file, name it {module_name.replace('.', '/')}.py:OBJECT"
    return text + "."
