"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Real HTTP, OpenAI's wire format, so the real ``openai`` client talks to it unpatched::

    with ScriptedLLMServer() as server:
        server.script(json_reply({"mentions": []}), error_reply(500, "boom"))
        settings = Settings(llm_base_url=server.base_url, ...)
        ...
        server.requests  # every request body received, in order

Queued replies are served first; when the queue is empty ``responder`` answers (by default a
valid extraction quoting the first message, see ``echo_extraction``). Every loop is bounded and
``stop()`` wakes any reply that is still sleeping.

``formats`` limits the ``response_format`` variants the server accepts, the way real servers do:
``ScriptedLLMServer(formats=LLAMA_CPP_PYTHON)`` answers a ``json_schema`` request with the
HTTP 500 and body llama-cpp-python's server sends, before any scripted reply is used.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ontology import ExtractionRequest, SegmentMessage
from pipeline.llm.prompts import parse_data_block

__all__ = [
    "ALL_FORMATS",
    "LLAMA_CPP_PYTHON",
    "Reply",
    "ScriptedLLMServer",
    "echo_extraction",
    "error_reply",
    "format_rejection",
    "format_variant",
    "json_reply",
    "mention",
    "sample_request",
    "text_reply",
]

_NO_USAGE = object()

# response_format variants: json_schema, json_object with a "schema", bare json_object, text.
ALL_FORMATS = frozenset({"json_schema", "json_object_schema", "json_object", "text"})
LLAMA_CPP_PYTHON = frozenset({"json_object_schema", "json_object", "text"})
# The body llama-cpp-python 0.3's server answers a json_schema request with (HTTP 500).
LLAMA_CPP_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)


@dataclass
class Reply:
    """One scripted answer. ``usage=None`` leaves usage out of the reply."""

    status: int = 200
    content: str | None = None
    refusal: str | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | object | None = _NO_USAGE
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    error: dict[str, Any] | None = None
    raw: str | None = None  # sent as the whole body instead of a completion (broken servers)


Responder = Callable[[dict[str, Any]], Reply]


def json_reply(payload: Any, **kwargs: Any) -> Reply:
    return Reply(content=json.dumps(payload, ensure_ascii=False), **kwargs)


def text_reply(text: str | None, **kwargs: Any) -> Reply:
    return Reply(content=text, **kwargs)


def error_reply(status: int, message: str, headers: dict[str, str] | None = None,
                param: str | None = None, **kwargs: Any) -> Reply:
    error = {"message": message, "type": "scripted_error", "param": param, "code": None}
    return Reply(status=status, error=error, headers=headers or {}, **kwargs)


def mention(title: str, quote: str, ref: str = "m1", **fields: Any) -> dict[str, Any]:
    """A valid RawMention payload; ``fields`` override or add keys (to make it invalid)."""
    item: dict[str, Any] = {
        "title": title,
        "type": "project",
        "description": f"{title}, as discussed.",
        "quote": quote,
        "message_ref": ref,
        "confidence": 0.8,
        "relations": [],
    }
    item.update(fields)
    return item


def sample_request(segment_id: str = "seg_1", texts: list[str] | None = None,
                   title: str | None = "Planning the garden") -> ExtractionRequest:
    """A segment of alternating user/assistant messages labelled m1, m2..."""
    texts = texts or [
        "I want to build a vegetable garden this spring.",
        "Great idea. Raised beds drain well and warm up early.",
        "My goal is to grow tomatoes for the whole family.",
    ]
    messages = tuple(
        SegmentMessage(ref=f"m{i}", message_id=f"{segment_id}-msg{i}",
                       role="user" if i % 2 else "assistant", author=None,
                       created_at=datetime(2024, 3, 1, 9, i, tzinfo=UTC), text=text)
        for i, text in enumerate(texts, start=1)
    )
    return ExtractionRequest(segment_id=segment_id, conversation_title=title, messages=messages)


def echo_extraction(body: dict[str, Any]) -> Reply:
    """A valid extraction quoting the first words of the first message of the data block."""
    user = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")
    blocks = parse_data_block(str(user))
    if not blocks:
        return json_reply({"mentions": []})
    ref, _, text = blocks[0]
    quote = " ".join(text.split()[:4]) or text
    if quote not in text:  # whitespace runs: keep an exact substring
        quote = text[:20]
    return json_reply({"mentions": [mention(quote[:40] or "topic", quote, ref)]})


class ScriptedLLMServer:
    """``POST /v1/chat/completions`` and ``GET /v1/models`` with scripted replies."""

    def __init__(self, responder: Responder | None = echo_extraction,
                 model: str = "scripted-model", formats: frozenset[str] = ALL_FORMATS) -> None:
        self.responder = responder
        self.model = model
        self.formats = formats
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply | Responder] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        self._served = 0

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Reply | Responder) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def served(self) -> int:
        with self._lock:
            return self._served

    def _next(self, body: dict[str, Any]) -> Reply:
        refused = format_rejection(body, self.formats)
        with self._lock:
            self.requests.append(body)
            self._served += 1
            if refused is not None:
                return refused
            item = self._queue.popleft() if self._queue else None
        if item is None:
            if self.responder is None:
                return error_reply(500, "the test script is exhausted")
            return self.responder(body)
        return item if isinstance(item, Reply) else item(body)

    def _payload(self, body: dict[str, Any], reply: Reply) -> bytes:
        if reply.raw is not None:
            return reply.raw.encode("utf-8")
        if reply.status != 200:
            payload = {"error": reply.error or {"message": "error"}}
        else:
            payload = self._completion(body, reply)
        return json.dumps(payload).encode("utf-8")

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content,
                                   "refusal": reply.refusal}
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{self.served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason,
                         "logprobs": None}],
        }
        if reply.usage is _NO_USAGE:
            prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
            done = len(reply.content or "") // 4
            payload["usage"] = {"prompt_tokens": prompt, "completion_tokens": done,
                                "total_tokens": prompt + done}
        elif reply.usage is not None:
            payload["usage"] = reply.usage
        return payload


def format_variant(body: dict[str, Any]) -> str:
    """Which ``response_format`` variant ``body`` asks for (``text`` when it names none)."""
    fmt = body.get("response_format") or {"type": "text"}
    kind = str(fmt.get("type"))
    return "json_object_schema" if kind == "json_object" and "schema" in fmt else kind


def format_rejection(body: dict[str, Any], formats: frozenset[str]) -> Reply | None:
    """The error a server accepting only ``formats`` answers ``body`` with, or None."""
    variant = format_variant(body)
    if variant in formats:
        return None
    if variant == "json_schema":
        return Reply(status=500, error={"message": LLAMA_CPP_REJECTION,
                                        "type": "internal_server_error", "param": None,
                                        "code": None})
    if variant == "json_object_schema":
        return error_reply(400, "Unrecognized request argument supplied: schema",
                           param="response_format.schema")
    return error_reply(400, f"response_format of type {variant!r} is not supported by this model",
                       param="response_format")


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [
                    {"id": server.model, "object": "model", "created": 0, "owned_by": "tests"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            body = json.loads(raw)
            reply = server._next(body)
            if reply.delay_s and server._stopping.wait(min(reply.delay_s, 30.0)):
                return
            self._send_raw(reply.status, server._payload(body, reply), reply.headers)

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send_raw(status, json.dumps(payload).encode("utf-8"), headers)

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

    return Handler


def _main() -> None:
    """Serve echo extractions until stdin closes (``runpy.run_path`` it, see benchmarks/extract.py).

    Prints the base URL on the first line of stdout (for benchmarks in another process).
    """
    import argparse
    import sys
    from dataclasses import replace

    parser = argparse.ArgumentParser(description="scripted OpenAI-compatible server")
    parser.add_argument("--latency", type=float, default=0.0)
    latency = parser.parse_args().latency

    def slow_echo(body: dict[str, Any]) -> Reply:
        return replace(echo_extraction(body), delay_s=latency)

    with ScriptedLLMServer(slow_echo) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    _main()
