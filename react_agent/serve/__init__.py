"""``react-agent serve``: an OpenAI-compatible endpoint that gives ``tools=`` to models that
have none (needs the ``serve`` extra).

:func:`create_app` builds the ASGI app; :func:`running` runs one in a background thread.
"""

from ._admission import LOOPBACK_HOSTS
from ._app import create_app, running, server_options
from ._config import ApiError, ServeConfig

__all__ = [
    "LOOPBACK_HOSTS", "ApiError", "ServeConfig", "create_app", "running", "server_options",
]
