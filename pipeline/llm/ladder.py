"""The structured-output capability ladder, per endpoint and model.

Servers differ in the ``response_format`` they accept. The client starts at the strictest step
and steps down only when the server's answer says the format itself was refused:

1. ``json_schema``: ``{"type": "json_schema", "json_schema": {"strict": true, ...}}`` (OpenAI,
   vLLM, Ollama, the llama.cpp C++ server).
2. ``json_object_schema``: ``{"type": "json_object", "schema": {...}}`` (llama-cpp-python's
   server, Anyscale-style; the server turns the schema into a grammar).
3. ``json_object_prompt``: ``{"type": "json_object"}`` with the schema written into the system
   prompt (any JSON mode).

The step found is remembered in staging (``llm_capabilities``), so the next run starts there.
Whatever the step, every reply is still validated against the StrictBase model.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from ontology import StrictBase, strict_json_schema
from staging.llm_log import Capability

__all__ = [
    "STEPS",
    "CapabilityStore",
    "Ladder",
    "format_for",
    "messages_for",
    "refuses_format",
]

STEPS = ("json_schema", "json_object_schema", "json_object_prompt")

SCHEMA_INSTRUCTION = (
    "\n\nReply with one JSON object and nothing else. It must follow this JSON schema "
    "exactly:\n{schema}"
)

# How servers say the response_format was refused (OpenAI/vLLM 400s, pydantic 422/500 bodies
# such as llama-cpp-python's "Input should be 'text' or 'json_object'").
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|'text' or", re.IGNORECASE)
_REFUSAL_WORDS = re.compile(
    r"input should be|not supported|unsupported|unrecognized|unknown|invalid|not allowed"
    r"|not permitted|extra inputs|must be one of|literal_error|extra_forbidden|expected",
    re.IGNORECASE,
)


class CapabilityStore(Protocol):
    """Where the ladder remembers what it found (``staging.llm_log.LLMCallLog``)."""

    def capability(self, base_url_host: str, model: str) -> Capability | None: ...

    def remember_capability(self, capability: Capability) -> None: ...


@functools.lru_cache(maxsize=64)
def format_for(step: str, model_cls: type[StrictBase]) -> dict[str, Any]:
    """The ``response_format`` body field of ``step`` for ``model_cls`` (cached: read-only)."""
    schema = strict_json_schema(model_cls)
    if step == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": model_cls.__name__, "strict": True, "schema": schema},
        }
    if step == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if step == "json_object_prompt":
        return {"type": "json_object"}
    raise ValueError(f"unknown structured-output step {step!r}; expected one of {STEPS}")


def messages_for(
    step: str, model_cls: type[StrictBase], messages: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``messages``, with the schema appended to the system prompt on the prompt-only step."""
    out = [dict(message) for message in messages]
    if step != "json_object_prompt":
        return out
    schema = json.dumps(strict_json_schema(model_cls), ensure_ascii=False, separators=(",", ":"))
    instruction = SCHEMA_INSTRUCTION.format(schema=schema)
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content') or ''}{instruction}"
    else:
        out.insert(0, {"role": "system", "content": instruction.lstrip()})
    return out


def refuses_format(status: int, detail: str, param: str = "") -> bool:
    """True if an HTTP error says the request's ``response_format`` is not accepted.

    Needs a client-error or server-error status, a mention of the format (in the message or
    the ``param`` field) and words of refusal: a transient 500 naming no format is not one.
    """
    if status < 400 or status in (401, 403, 404, 408, 429):
        return False
    if param.startswith("response_format"):
        return True
    return bool(_FORMAT_WORDS.search(detail) and _REFUSAL_WORDS.search(detail))


class Ladder:
    """The current step per model of one endpoint; thread-safe; steps only go down."""

    def __init__(self, host: str, store: CapabilityStore | None = None) -> None:
        self.host = host
        self._store = store
        self._known: dict[str, Capability] = {}
        self._exhausted: dict[str, str] = {}  # model -> the last refusal (this process only)
        self._lock = threading.Lock()

    def step(self, model: str) -> str:
        """The step to use now for ``model`` (remembered, else the strictest)."""
        return self._current(model).step

    def capability(self, model: str) -> Capability:
        return self._current(model)

    def exhausted(self, model: str) -> str | None:
        """The last refusal if every step was refused for ``model`` in this process, else None."""
        with self._lock:
            return self._exhausted.get(model)

    def step_down(self, model: str, refused: str, detail: str) -> str | None:
        """Record that ``refused`` was refused; the next step, or None if none is left.

        Concurrent calls that saw the same refusal move the ladder once.
        """
        with self._lock:
            now = self._current_locked(model)
            if STEPS.index(now.step) > STEPS.index(refused):
                return now.step  # another thread stepped down already
            index = STEPS.index(refused) + 1
            if index >= len(STEPS):
                self._exhausted[model] = detail
                return None
            found = Capability(self.host, model, STEPS[index], False, detail[:2000])
            self._known[model] = found
        if self._store is not None:
            self._store.remember_capability(found)
        return found.step

    def confirm(self, model: str, step: str) -> None:
        """A reply at ``step`` validated: remember that the step works (once)."""
        with self._lock:
            now = self._current_locked(model)
            if now.confirmed or now.step != step:
                return
            found = Capability(self.host, model, step, True, now.detail)
            self._known[model] = found
        if self._store is not None:
            self._store.remember_capability(found)

    def _current(self, model: str) -> Capability:
        with self._lock:
            return self._current_locked(model)

    def _current_locked(self, model: str) -> Capability:
        known = self._known.get(model)
        if known is None:
            stored = self._store.capability(self.host, model) if self._store else None
            known = stored if stored is not None and stored.step in STEPS else None
            known = known or Capability(self.host, model, STEPS[0], False, None)
            self._known[model] = known
        return known
