"""``react-agent serve``: the OpenAI-compatible endpoint (on loopback unless ``--api-key``)."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, ModelError, install_hint
from ..harness import OtelMiddleware, global_tracer_provider, safe
from ..models import OpenAIChatModel
from ..policies import BUILT_IN, Policy, default_policies
from ._session import make_model


def serve(args: argparse.Namespace) -> int:
    if args.api_key is not None and not args.api_key.strip():
        raise ConfigError("--api-key is empty: give the key clients must send (Authorization: "
                          "Bearer KEY), or leave --api-key out on a loopback address.")
    if not args.api_key and not _is_loopback(args.host):
        raise ConfigError(
            f"--host {args.host} exposes the model beyond this machine: also pass --api-key KEY "
            "(clients then send Authorization: Bearer KEY)."
        )
    try:
        import uvicorn

        from ..serve import LOOPBACK_HOSTS, ServeConfig, create_app, server_options
    except ImportError as exc:
        raise ConfigError(
            f"serve needs the serve extra ({exc.name} is missing): {install_hint('serve')}."
        ) from exc
    model = _model(args)
    config = ServeConfig(
        api_key=args.api_key, concurrency=args.concurrency, queue=args.queue,
        max_connections=args.max_connections,
        max_parse_retries=args.max_parse_retries, thoughts=not args.no_thoughts,
        allowed_hosts=None if args.allow_host is None else
        (*LOOPBACK_HOSTS, *args.allow_host),
        allowed_origins=tuple(args.allow_origin),
        policies=serve_policies(model, args.with_policy, args.without_policy),
        frame_observations=args.frame_observations == "on",
    )
    if isinstance(model, OpenAIChatModel):
        try:
            model.model_name()  # which model the server serves, asked now if not given
        except ModelError as exc:
            print(f"react-agent: warning: {safe(str(exc))}", file=sys.stderr)
    app: Any = create_app(model, config)
    if args.otel:
        app = OtelMiddleware(app, global_tracer_provider(), model=model.name)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Serving {model.name} at http://{shown}:{args.port}/v1 (OpenAI-compatible; "
          "Ctrl-C stops it)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", **server_options(config))
    return 0


def serve_policies(model: Any, with_policy: Sequence[str], without_policy: Sequence[str]
                   ) -> list[Policy] | None:
    """The policies of each turn for ``--with-policy`` / ``--without-policy``: ``None`` (serve's
    defaults) when neither is given.

    Raises:
        ConfigError: a policy asked for does not run in ``serve`` (it replaces a final answer
            the client may already have streamed, or needs a step budget).
    """
    if not with_policy and not without_policy:
        return None
    use = [BUILT_IN[name]() for name in with_policy]
    for policy in use:
        if policy.name == "routing":
            raise ConfigError("--with-policy routing: serve shows the model the request's own "
                              "tools; choose them in the request.")
        if not policy.runs_in_serve:
            raise ConfigError(f"--with-policy {policy.name}: this policy does not run in serve "
                              "(it replaces a final answer or needs a step budget).")
    return [p for p in default_policies(model, use=use, off=without_policy) if p.runs_in_serve]


def _model(args: argparse.Namespace) -> Any:
    spec = args.model
    if not args.base_url and spec.endswith(".gguf") and not spec.startswith("local:"):
        spec = f"local:{spec}"  # serve --model FILE.gguf
    return make_model(spec, args.base_url, args.backend_api_key, args.max_tokens)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
