"""Where the package keeps files between runs: the platform's data and cache folders
(``platformdirs``), each movable with an environment variable."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "react-agent"


def data_dir() -> Path:
    """Where lasting data (the memory files) lives: ``$REACT_AGENT_DATA`` if set, else the
    user data folder: ``$XDG_DATA_HOME/react-agent`` or ``~/.local/share/react-agent`` on
    Linux, ``~/Library/Application Support/react-agent`` on macOS,
    ``%LOCALAPPDATA%\\react-agent`` on Windows."""
    if os.environ.get("REACT_AGENT_DATA"):
        return Path(os.environ["REACT_AGENT_DATA"])
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def cache_dir() -> Path:
    """Where things that can be made again (the assembled weights, the CPU probe's verdicts)
    live: ``$REACT_AGENT_CACHE`` if set, else the user cache folder:
    ``$XDG_CACHE_HOME/react-agent`` or ``~/.cache/react-agent`` on Linux,
    ``~/Library/Caches/react-agent`` on macOS, ``%LOCALAPPDATA%\\react-agent\\Cache`` on
    Windows."""
    if os.environ.get("REACT_AGENT_CACHE"):
        return Path(os.environ["REACT_AGENT_CACHE"])
    return platformdirs.user_cache_path(APP_NAME, appauthor=False)
