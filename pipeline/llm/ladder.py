"""The structured-output capability ladder, per endpoint and model.

Servers differ in the ``response_format`` they accept. The client starts at the strictest step
and steps down only when the server's answer says the format itself was refused:

1. ``json_schema``: ``{"type": "json_schema", "json_schema": {"strict": true, ...}}`` (OpenAI,
   vLLM, Ollama, the llama.cpp C++ server).
2. ``json_object_schema``: ``{"type": "json_object", "schema": {...}}`` (llama-cpp-python's
   server, Anyscale-style; the server turns the schema into a grammar).
3. ``json_object_prompt``: ``{"type": "json_object"}`` with the schema written into the
   instructions (any JSON mode).

Below step 1 the instructions travel in the first user message (see ``messages_for``).

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
    "Choices",
    "Ladder",
    "format_for",
    "grammar_schema",
    "messages_for",
    "refuses_format",
]

STEPS = ("json_schema", "json_object_schema", "json_object_prompt")

SCHEMA_INSTRUCTION = (
    "\n\nReply with one JSON object and nothing else. It must follow this JSON schema "
    "exactly:\n{schema}"
)

# Bounds added to the schema a server compiles into a grammar (see grammar_schema); they only
# stop runaway generation. Arrays: Settings.llm_grammar_max_items.
GRAMMAR_MAX_ITEMS = 8
GRAMMAR_MAX_CHARS = 400

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


Choices = tuple[tuple[str, tuple[str, ...]], ...]


@functools.lru_cache(maxsize=128)
def format_for(step: str, model_cls: type[StrictBase], max_items: int = GRAMMAR_MAX_ITEMS,
               choices: Choices = ()) -> dict[str, Any]:
    """The ``response_format`` body field of ``step`` for ``model_cls`` (cached: read-only).

    On the grammar-compiled step (``json_object_schema``) ``max_items`` bounds every array and
    ``choices`` (``(("message_ref", ("m1", "m2")),)``) restricts the string properties of those
    names to the values this request allows.
    """
    schema = strict_json_schema(model_cls)
    if step == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": model_cls.__name__, "strict": True, "schema": schema},
        }
    if step == "json_object_schema":
        return {"type": "json_object",
                "schema": grammar_schema(schema, max_items, dict(choices))}
    if step == "json_object_prompt":
        return {"type": "json_object"}
    raise ValueError(f"unknown structured-output step {step!r}; expected one of {STEPS}")


def grammar_schema(schema: Any, max_items: int = GRAMMAR_MAX_ITEMS,
                   choices: dict[str, tuple[str, ...]] | None = None) -> Any:
    """``schema`` with the bounds a grammar compiler can enforce, for servers that compile it.

    llama.cpp's JSON-schema-to-grammar ignores ``minimum``/``maximum`` on numbers and lets
    arrays and strings run on until the token limit (tiny models loop there). A number bounded
    on both sides becomes an ``enum`` of 11 evenly spaced values in its range; arrays get
    ``maxItems`` (``max_items``) and strings ``maxLength`` when they have none. Every value the
    grammar allows is valid for the StrictBase model, and each reply is still validated by it.
    A string property named in ``choices`` becomes an ``enum`` of its values.
    """
    if isinstance(schema, list):
        return [grammar_schema(item, max_items, choices) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: grammar_schema(value, max_items, choices) for key, value in schema.items()}
    props = out.get("properties")
    for name, values in (choices or {}).items():
        prop = props.get(name) if isinstance(props, dict) else None
        if isinstance(prop, dict) and prop.get("type") == "string" and values:
            prop.pop("maxLength", None)
            prop["enum"] = list(values)
    kind = out.get("type")
    if kind == "number" and "minimum" in out and "maximum" in out and "enum" not in out:
        low, high = float(out.pop("minimum")), float(out.pop("maximum"))
        out["enum"] = sorted({round(low + (high - low) * i / 10, 6) for i in range(11)})
    elif kind == "array":
        out.setdefault("maxItems", max_items)
    elif kind == "string" and "enum" not in out:
        out.setdefault("maxLength", GRAMMAR_MAX_CHARS)
    return out


def messages_for(
    step: str, model_cls: type[StrictBase], messages: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``messages`` as sent at ``step``.

    Below the first step the server is a local one whose chat template may have no system role
    (llama-cpp-python's ``gemma`` format drops system messages without a word): the system
    prompt is folded into the first user message, ahead of the data. On the prompt-only step
    the schema is appended to the instructions.
    """
    out = [dict(message) for message in messages]
    if step == STEPS[0]:
        return out
    instructions = ""
    if out and out[0].get("role") == "system":
        instructions = str(out.pop(0).get("content") or "")
    if step == "json_object_prompt":
        schema = json.dumps(strict_json_schema(model_cls), ensure_ascii=False,
                            separators=(",", ":"))
        instructions += SCHEMA_INSTRUCTION.format(schema=schema)
    instructions = instructions.strip()
    if not instructions:
        return out
    first_user = next((i for i, m in enumerate(out) if m.get("role") == "user"), None)
    if first_user is None:
        return [{"role": "user", "content": instructions}, *out]
    out[first_user]["content"] = f"{instructions}\n\n{out[first_user].get('content') or ''}"
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
