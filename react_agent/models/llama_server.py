"""llama-cpp-python's OpenAI-compatible HTTP server, with the CPU decision of
:mod:`react_agent.models._cpu_probe` applied before the model loads.

``python -m llama_cpp.server`` loads with llama.cpp's defaults, so on a machine whose CPU
advertises instructions it does not run, the server dies by SIGILL on its first request. Run it
through this module instead; the arguments are the server's own::

    python -m react_agent.models.llama_server --model FILE.gguf --host 127.0.0.1 --port 8080

``REACT_AGENT_EXTRA_BUFFER_TYPES=1``/``0`` forces the choice, as for ``LlamaCppModel``.
"""

from __future__ import annotations

import argparse
import logging
import runpy
import sys
from pathlib import Path

from ._cpu_probe import decide
from ._llama_cpp import use_extra_bufts


def main(argv: list[str]) -> None:
    """Decide for ``--model``, then run ``llama_cpp.server`` with ``argv`` in this process.

    Raises:
        SystemExit: no ``--model`` was given, or the server exits.
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model")
    known, _ = parser.parse_known_args(argv)
    if not known.model:
        sys.exit("usage: python -m react_agent.models.llama_server --model FILE.gguf "
                 "[llama_cpp.server options]")
    logging.basicConfig(level=logging.WARNING, format="react-agent: %(message)s")
    verdict = decide(Path(known.model))
    sys.argv = ["llama_cpp.server", *argv]
    with use_extra_bufts(verdict.extra_buffer_types):  # held for the server's whole life
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
