"""Open WebUI chat export (``chat-export-*.json``): a list of chats.

Each chat keeps a message tree in ``chat.history.messages`` (``id -> {parentId, childrenIds,
role, content, timestamp}``) with ``chat.history.currentId`` as the current leaf; older exports
have only the linear ``chat.messages`` list. The assistant's ``content`` may embed
``<details type="reasoning">`` / ``<details type="tool_calls">`` blocks: they are cut out of the
message text and kept as parts (``thinking`` / ``tool_calls``), or taken from the structured
``output`` list when present (reasoning -> ``thinking``, function_call -> ``tool_use``,
function_call_output -> ``tool_result``).
"""

from __future__ import annotations

import html
import itertools
import re
from typing import Any

from ontology import ContentPart
from pipeline.importers.base import (
    Draft,
    ImportContext,
    Parsed,
    RecordError,
    build_conversation,
    build_messages,
    iter_dicts,
    map_role,
    part,
    per_record,
    timestamp,
)

__all__ = ["convert", "read", "split_details"]

_DETAILS = re.compile(r"<details\b([^>]*)>(.*?)</details>", re.DOTALL)
_TYPE = re.compile(r'type="([^"]*)"')
_SUMMARY = re.compile(r"<summary>.*?</summary>", re.DOTALL)
_DETAIL_KINDS = {"reasoning": "thinking", "tool_calls": "tool_calls"}
_OUTPUT_KINDS = {"reasoning": "thinking", "function_call": "tool_use",
                 "function_call_output": "tool_result"}


def split_details(content: str) -> tuple[str, list[ContentPart]]:
    """Text without ``<details>`` blocks, and one part per block."""
    parts: list[ContentPart] = []
    for match in _DETAILS.finditer(content):
        kind_match = _TYPE.search(match.group(1))
        kind = kind_match.group(1) if kind_match else "details"
        body = html.unescape(_SUMMARY.sub("", match.group(2))).strip()
        parts.append(part(_DETAIL_KINDS.get(kind, kind), body, {"attributes": match.group(1)}))
    return _DETAILS.sub("", content).strip(), parts


def _output_parts(output: list[Any]) -> list[ContentPart]:
    parts = []
    for item in iter_dicts(output):
        kind = _OUTPUT_KINDS.get(str(item.get("type")))
        if kind is None:
            continue  # "message" items repeat the answer text
        if kind == "tool_use":
            text = f"{item.get('name') or 'tool'} {item.get('arguments') or ''}".strip()
        else:
            inner = item.get("content") if kind == "thinking" else item.get("output")
            text = "\n".join(str(b.get("text") or "") for b in iter_dicts(inner))
        parts.append(part(kind, text, item))
    return parts


def _draft(key: str, message: dict[str, Any]) -> Draft:
    role = map_role(message.get("role"), f"message {key}")
    content = message.get("content")
    text, parts = split_details(content if isinstance(content, str) else "")
    if isinstance(message.get("output"), list):
        parts = _output_parts(message["output"])
    parent = message.get("parentId")
    meta = {k: message[k] for k in ("model",) if message.get(k)}
    created = timestamp(message.get("timestamp"), "timestamp", meta)
    return Draft(
        external_id=str(message.get("id") or key),
        parent_external_id=str(parent) if parent not in (None, "") else None,
        role=role, text=text, created_at=created,
        author=message.get("model") if role == "assistant" else None, parts=parts,
        metadata=meta,
    )


def _messages(chat: dict[str, Any]) -> tuple[list[Draft], str | None]:
    history = chat.get("history")
    if isinstance(history, dict) and isinstance(history.get("messages"), dict):
        drafts = [_draft(str(k), m) for k, m in history["messages"].items()
                  if isinstance(m, dict)]
        current = history.get("currentId")
        return drafts, str(current) if current else None
    linear = chat.get("messages")
    if isinstance(linear, list):
        drafts = [_draft(str(i), m) for i, m in enumerate(linear) if isinstance(m, dict)]
        for previous, draft in itertools.pairwise(drafts):
            draft.parent_external_id = draft.parent_external_id or previous.external_id
        return drafts, None
    raise RecordError("chat has neither history.messages nor messages")


def convert(raw: dict[str, Any], ctx: ImportContext) -> Parsed:
    external = raw.get("id")
    chat = raw.get("chat")
    if not isinstance(external, str) or not external:
        raise RecordError("chat has no id")
    if not isinstance(chat, dict):
        raise RecordError("chat is not an object")
    title = raw.get("title") or chat.get("title")
    drafts, current = _messages(chat)
    meta = {k: raw[k] for k in ("user_id",) if raw.get(k)}
    if isinstance(chat.get("models"), list):
        meta["models"] = chat["models"]
    conversation = build_conversation(
        ctx, external, str(title) if title else None,
        timestamp(raw.get("created_at"), "created_at", meta),
        timestamp(raw.get("updated_at"), "updated_at", meta), meta,
    )
    return Parsed(conversation, build_messages(ctx, conversation, drafts, current))


read = per_record(convert)
