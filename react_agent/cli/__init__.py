"""The ``react-agent`` command: ``run`` a task (or a JSON Lines file of tasks, or a saved run to
resume), ``chat`` over several turns, ``eval`` the first action on a suite, ``replay`` a trace,
``serve`` an OpenAI-compatible endpoint that gives ``tools=`` to models without function calling,
or ``parse`` a raw reply to see what the parser makes of it. Exit codes: 0 final answer (for
``eval``: the eval ran), 1 the run ended otherwise (or the reply was unusable), 2 usage or
configuration error, 130 interrupted."""


from __future__ import annotations

import logging
import os
import sys

from ..errors import ConfigError
from ..harness import safe
from ..tools import load_toolbox
from . import _chat, _eval, _run, _serve, _show, _view
from ._parser import build_parser
from ._session import EXIT_CODES, cli_policies, make_model

__all__ = ["EXIT_CODES", "build_parser", "cli_policies", "load_toolbox", "main", "make_model"]

COMMANDS = {"parse": _show.parse, "replay": _show.replay, "chat": _chat.chat, "run": _run.run,
            "eval": _eval.evaluate, "serve": _serve.serve, "tools": _show.tools,
            "view": _view.view}
"""What each command runs: its parsed arguments -> the exit code."""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_command(argv)
    _show_warnings()
    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        print(f"react-agent: {safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("react-agent: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`react-agent tools | head`): no traceback, and none at exit
        # when Python flushes stdout (https://docs.python.org/3/library/signal.html#note-on-sigpipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _show_warnings() -> None:
    """The library's warnings (e.g. the embedded model's safe CPU configuration), one line each
    on stderr."""
    logger = logging.getLogger("react_agent")
    if not any(getattr(h, "react_agent_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("react-agent: %(message)s"))
        handler.setLevel(logging.WARNING)
        handler.react_agent_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
