"""Tools for the CLI subprocess tests (loaded with ``--tools tests/data/cli_tools.py:toolbox``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from react_agent import Toolbox

toolbox = Toolbox()


@toolbox.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@toolbox.tool(timeout=120)
def slow(seconds: float) -> str:
    """Wait a number of seconds; writes the file named by $MARKER when it starts."""
    Path(os.environ["MARKER"]).write_text("started")
    time.sleep(seconds)
    return "slept"


@toolbox.tool(requires_approval=True)
def send_email(to: str) -> str:
    """Send an email (needs the user's approval)."""
    return f"sent to {to}"
