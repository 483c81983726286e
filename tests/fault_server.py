"""A small OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves on request.

Each ``POST /v1/chat/completions`` takes the next behaviour of its script (the last one repeats):

- ``"reply:TEXT"``: a normal completion whose content is TEXT (with token usage); streamed as
  server-sent events in pieces of 4 characters when the request says ``"stream": true``;
- ``"cut:TEXT"``: a stream that sends TEXT and then closes the connection without finishing;
- ``"status:CODE[:MESSAGE]"``: an HTTP error with an OpenAI-style ``{"error": {...}}`` body;
- ``"stall"``: no answer until the test ends (the client's timeout fires);
- ``"garbage"``: HTTP 200 with a body that is not JSON;
- ``"deep"``: HTTP 200 with a JSON body nested 5,000 levels deep;
- ``"close"``: headers and half a body, then the connection is closed;
- ``"no_choices"``: a well-formed completion with an empty ``choices`` list.

``GET /v1/models`` lists one model, ``fault-model``. A request whose ``response_format.type`` is
in ``refuse_formats`` gets HTTP 400 without using up a behaviour (a server that does not know
that form).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fault-model"


class FaultServer:
    """Start with ``FaultServer(script)``; ``url`` ends in ``/v1``; ``close()`` when done."""

    def __init__(self, script: Iterable[str] = ("reply:hello",)) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self.refuse_formats: set[str] = set()
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        serve = lambda: self._httpd.serve_forever(poll_interval=0.05)  # noqa: E731
        threading.Thread(target=serve, daemon=True).start()

    def next_behaviour(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.requests.append(body)
            index = min(len(self.requests), len(self.script)) - 1
            return self.script[index]

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (timeouts, Ctrl-C) are part of the tests, not errors."""


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fault", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text},
        }],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def _handler(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            form = (body.get("response_format") or {}).get("type")
            if form in server.refuse_formats:
                server.refused.append(body)
                message = f"response_format type {form!r} is not supported"
                self._json(400, {"error": {"message": message, "type": "invalid_request_error"}})
                return
            kind, _, rest = server.next_behaviour(body).partition(":")
            if kind == "reply" and body.get("stream"):
                self._stream(rest, finish=True)
            elif kind == "reply":
                self._json(200, completion(rest))
            elif kind == "cut":
                self._stream(rest, finish=False)
            elif kind == "status":
                code, _, message = rest.partition(":")
                self._json(int(code), {"error": {"message": message or "fault", "type": "x"}})
            elif kind == "stall":
                server.release.wait(60)
                self.close_connection = True
            elif kind == "garbage":
                self._raw(200, b"<html>502 Bad Gateway</html> {{{", "application/json")
            elif kind == "deep":
                self._raw(200, b'{"choices": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                          "application/json")
            elif kind == "close":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4000")
                self.end_headers()
                self.wfile.write(b'{"id": "chatcmpl-fault", "choices": [{"index": 0, "mes')
                self.wfile.flush()
                self.close_connection = True
            elif kind == "no_choices":
                self._json(200, {**completion(""), "choices": []})
            else:
                raise ValueError(f"unknown behaviour {kind!r}")

        def _stream(self, text: str, finish: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            base = {"id": "chatcmpl-fault", "object": "chat.completion.chunk", "created": 0,
                    "model": MODEL}
            for start in range(0, len(text), 4):
                delta = {"content": text[start : start + 4]}
                self._event({**base, "choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": None}]})
            if not finish:
                self.close_connection = True
                return  # no final chunk: the client sees the stream break off
            self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
            self._event({**base, "choices": [], "usage": usage})
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _event(self, payload: Any) -> None:
            self._chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _json(self, code: int, payload: Any) -> None:
            self._raw(code, json.dumps(payload).encode(), "application/json")

        def _raw(self, code: int, data: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
