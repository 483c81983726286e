"""``react-agent view`` and ``run --html``: runs written as one offline HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..harness import SECRET_PATTERNS, load_view, safe, write_view
from ._session import same_file


def view(args: argparse.Namespace) -> int:
    out = Path(args.out or Path(args.files[0]).with_suffix(".html"))
    if any(same_file(str(out), f) for f in args.files):
        raise ConfigError(f"{out} is one of the files to view: name another page with -o.")
    write_html(args, load_view(*args.files), out)
    return 0


def write_html(args: argparse.Namespace, items: Any, out: Path | None = None) -> None:
    """Write the view of ``items`` to ``out`` (``--html``), masking what ``--redact`` and
    ``--redact-pattern`` name."""
    keys = [k for value in args.redact for k in value.split(",") if k.strip()]
    path = write_view(out or args.html, items, redact=keys,
                      patterns=[*SECRET_PATTERNS, *args.redact_pattern])
    print(safe(f"View: {path} ({path.stat().st_size / 1024:.0f} KB; open it in a browser)"),
          file=sys.stderr)
