"""Claude ``conversations.json`` (claude.ai data export), 2024 and 2025 layouts.

2024 messages carry only ``text``. 2025 messages carry ``content`` blocks, and their top-level
``text`` may run thinking and answer together, so when blocks exist the message text is the
``text`` blocks only; ``thinking`` blocks become parts of kind ``thinking`` (never in the text),
``tool_use``/``tool_result`` become parts, and attachments' ``extracted_content`` become parts
of kind ``attachment``. ``human`` maps to role ``user``.

Branching follows ``parent_message_uuid`` (the all-zero uuid marks the root). Exports have no
current-branch marker, so the path from the latest leaf is the current branch. Old exports
without parent links are a chain in (created_at, export order).

Whitespace-only messages are stored verbatim: they are part of the tree (children may point at
them) and the extractor skips empty text. A conversation without ``chat_messages`` is stored
with no messages.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from ontology import ContentPart
from pipeline.importers.base import (
    Draft,
    ImportContext,
    Parsed,
    RecordError,
    build_conversation,
    build_messages,
    derived_external_id,
    iter_dicts,
    map_role,
    part,
    per_record,
    timestamp,
)

__all__ = ["content_blocks", "convert", "read"]

_ROOT = "00000000-0000-4000-8000-000000000000"


def _block_text(value: object) -> str:
    """Best-effort text of a tool_result's content (string or list of text blocks)."""
    if isinstance(value, str):
        return value
    return "\n".join(str(b.get("text") or "") for b in iter_dicts(value) if b.get("text"))


def _block(block: dict[str, Any]) -> tuple[str | None, ContentPart | None]:
    kind = str(block.get("type") or "unknown")
    data = {k: v for k, v in block.items() if k not in ("text", "thinking")}
    if kind == "text":
        return str(block.get("text") or ""), None
    if kind == "thinking":
        return None, part("thinking", str(block.get("thinking") or ""), data)
    if kind == "tool_use":
        payload = json.dumps(block.get("input"), ensure_ascii=False, default=str)
        return None, part("tool_use", f"{block.get('name') or 'tool'} {payload}", data)
    if kind == "tool_result":
        return None, part("tool_result", _block_text(block.get("content")), data)
    return None, part(kind, str(block.get("text") or ""), data)


def content_blocks(blocks: list[Any]) -> tuple[str, list[ContentPart]]:
    """(answer text from the text blocks, parts for everything else)."""
    texts: list[str] = []
    parts: list[ContentPart] = []
    for block in iter_dicts(blocks):
        text, extra = _block(block)
        if text is not None:
            texts.append(text)
        if extra is not None:
            parts.append(extra)
    return "\n\n".join(t for t in texts if t), parts


def _attachments(message: dict[str, Any], meta: dict[str, Any]) -> list[ContentPart]:
    parts: list[ContentPart] = []
    attachments = message.get("attachments")
    if isinstance(attachments, str) and attachments not in ("", "[]"):
        meta["attachments_raw"] = attachments
    for item in iter_dicts(attachments):
        data = {k: v for k, v in item.items() if k != "extracted_content"}
        parts.append(part("attachment", str(item.get("extracted_content") or ""), data))
    files = message.get("files")
    if isinstance(files, str) and files not in ("", "[]"):
        meta["files_raw"] = files
    names = [str(f.get("file_name")) for f in iter_dicts(files) if f.get("file_name")]
    if names:
        meta["files"] = names
    return parts


def _draft(index: int, message: dict[str, Any]) -> Draft:
    role = map_role(message.get("sender"), f"message {message.get('uuid') or index}")
    meta: dict[str, Any] = {}
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        text, parts = content_blocks(blocks)
    else:
        text, parts = str(message.get("text") or ""), []
    parts.extend(_attachments(message, meta))
    uuid = message.get("uuid")
    external = uuid if isinstance(uuid, str) and uuid else derived_external_id(index, role, text)
    parent = message.get("parent_message_uuid")
    meta["order"] = index
    return Draft(
        external_id=external,
        parent_external_id=parent if isinstance(parent, str) and parent != _ROOT else None,
        role=role, text=text, created_at=timestamp(message.get("created_at"), "created_at", meta),
        parts=parts, metadata=meta,
    )


def _drafts(raw_messages: list[Any]) -> list[Draft]:
    drafts = []
    for index, message in enumerate(raw_messages):
        if not isinstance(message, dict):
            raise RecordError(f"chat_messages[{index}] is not an object")
        drafts.append(_draft(index, message))
    linked = any("parent_message_uuid" in m for m in iter_dicts(raw_messages))
    if not linked:  # old layout: a chain in time order, export order breaking ties
        chain = sorted(drafts, key=lambda d: (d.created_at is not None, d.created_at
                                              and d.created_at.timestamp(), d.metadata["order"]))
        for previous, draft in itertools.pairwise(chain):
            draft.parent_external_id = previous.external_id
    for draft in drafts:
        del draft.metadata["order"]
    return drafts


def convert(raw: dict[str, Any], ctx: ImportContext) -> Parsed:
    external = raw.get("uuid")
    if not isinstance(external, str) or not external:
        raise RecordError("conversation has no uuid")
    raw_messages = raw.get("chat_messages")
    meta: dict[str, Any] = {}
    if raw.get("summary"):
        meta["summary"] = raw["summary"]
    if raw_messages is None:
        meta["chat_messages"] = "missing"
        raw_messages = []
    elif not isinstance(raw_messages, list):
        raise RecordError(f"chat_messages is a {type(raw_messages).__name__}, not a list")
    name = raw.get("name")
    conversation = build_conversation(
        ctx, external, name if isinstance(name, str) else None,
        timestamp(raw.get("created_at"), "created_at", meta),
        timestamp(raw.get("updated_at"), "updated_at", meta), meta,
    )
    drafts = _drafts(raw_messages)
    return Parsed(conversation, build_messages(ctx, conversation, drafts))


read = per_record(convert)
