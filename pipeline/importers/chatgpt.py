"""ChatGPT ``conversations.json`` (one file or several ``conversations-000.json`` ...).

Each conversation holds a ``mapping`` tree: ``node id -> {message | null, parent, children}``.
Every branch is kept (edited prompts and regenerated answers are siblings); the path from
``current_node`` to the root is flagged ``on_current_branch``. Null messages (the root) are not
stored; a child of a skipped node points to its nearest stored ancestor. Empty hidden or system
messages ARE stored (the source db keeps what the export holds) with
``metadata.hidden``/``empty`` flags; segmentation skips messages with no text. The message's own
``id`` is its external id (the node id, when different, is kept in metadata). Non-text content
(code, execution output, browsing, quotes, system errors, multimodal parts, thoughts) is kept as
parts with a best-effort text; thoughts and reasoning recaps stay out of the message text. A
conversation without ``mapping`` is stored with no messages and ``metadata.mapping =
"missing"``.
"""

from __future__ import annotations

from typing import Any

from ontology import ContentPart, Message
from pipeline.importers.base import (
    ROLE_ALIASES,
    Draft,
    ImportContext,
    Parsed,
    RecordError,
    build_conversation,
    build_messages,
    map_role,
    part,
    per_record,
    timestamp,
)

__all__ = ["convert", "read"]

_THINKING = {"thoughts", "reasoning_recap"}
_MEDIA_KINDS = {
    "image_asset_pointer": "image",
    "audio_asset_pointer": "audio",
    "real_time_user_audio_video_asset_pointer": "video",
    "audio_transcription": "audio_transcription",
}


def _strings(values: object) -> list[str]:
    if not isinstance(values, list):
        return []
    return [v for v in values if isinstance(v, str)]


def _multimodal(parts: list[Any]) -> tuple[str, list[ContentPart]]:
    texts: list[str] = []
    out: list[ContentPart] = []
    for item in parts:
        if isinstance(item, str):
            if item:
                texts.append(item)
                out.append(part("text", item))
        elif isinstance(item, dict):
            ctype = str(item.get("content_type", "object"))
            kind = _MEDIA_KINDS.get(ctype, ctype)
            dalle = (item.get("metadata") or {}).get("dalle") or {}
            text = item.get("text") or dalle.get("prompt") or ""
            if kind == "audio_transcription" and text:
                texts.append(text)
            out.append(part(kind, str(text), item))
    return "\n".join(texts), out


def _thinking_text(content: dict[str, Any]) -> str:
    if content.get("content_type") == "reasoning_recap":
        return str(content.get("content") or "")
    chunks: list[str] = []
    for thought in content.get("thoughts") or []:
        if isinstance(thought, dict):
            chunks.extend(str(thought.get(k) or "") for k in ("summary", "content"))
    return "\n".join(c for c in chunks if c)


def _special_text(ctype: str, content: dict[str, Any]) -> str:
    if ctype == "system_error":
        return f"{content.get('name') or 'error'}: {content.get('text') or ''}"
    if ctype == "user_editable_context":
        fields = ("user_profile", "user_instructions")
        return "\n".join(str(content[k]) for k in fields if content.get(k))
    if ctype == "model_editable_context":
        return str(content.get("model_set_context") or "")
    for key in ("text", "result", "summary"):
        if isinstance(content.get(key), str):
            return str(content[key])
    return "\n".join(_strings(content.get("parts")))


def content_text(content: object) -> tuple[str, list[ContentPart]]:
    """(message text, parts) of one ChatGPT ``content`` object."""
    if not isinstance(content, dict):
        return "", []
    ctype = str(content.get("content_type") or "text")
    if ctype == "text":
        return "\n".join(_strings(content.get("parts"))), []
    if ctype == "multimodal_text":
        parts = content.get("parts")
        return _multimodal(parts if isinstance(parts, list) else [])
    data = {k: v for k, v in content.items() if k not in ("parts", "text", "content_type")}
    if ctype in _THINKING:
        return "", [part("thinking", _thinking_text(content), data)]
    text = _special_text(ctype, content)
    return text, [part(ctype, text, data)]


def _metadata(node_id: str, message: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"status": message.get("status")}
    if message.get("id") != node_id:
        meta["node_id"] = node_id
    raw_meta = message.get("metadata")
    if raw_meta and isinstance(raw_meta, dict):
        slug = raw_meta.get("model_slug")
        if slug:
            meta["model_slug"] = slug
        if raw_meta.get("is_visually_hidden_from_conversation"):
            meta["hidden"] = True
    recipient = message.get("recipient")
    if recipient is not None and recipient != "all":
        meta["recipient"] = recipient
    return meta


def _draft(node_id: str, message: dict[str, Any]) -> Draft:
    """The message as a Draft (empty hidden/system messages are kept and flagged)."""
    author = message.get("author")
    if not isinstance(author, dict):
        author = {}
    content = message.get("content")
    ctype = content.get("content_type") if isinstance(content, dict) else None
    raw_parts = content.get("parts") if ctype == "text" and isinstance(content, dict) else None
    if type(raw_parts) is list:  # the common case, content_text() inlined
        text = "\n".join([v for v in raw_parts if isinstance(v, str)])
        parts: list[ContentPart] = []
    else:
        text, parts = content_text(content)
    meta = _metadata(node_id, message)
    raw_role = author.get("role")
    role = ROLE_ALIASES.get(raw_role) if type(raw_role) is str else None
    if role is None:
        role = map_role(raw_role, node_id, "message ")
    if ctype == "user_editable_context":
        role = "system"
    if not parts and not text.strip():
        meta["empty"] = True
    if ctype is not None and ctype != "text":
        meta["content_type"] = ctype
    external = message.get("id")
    return Draft(
        external if isinstance(external, str) and external else node_id, None, role, text,
        timestamp(message.get("create_time"), "create_time", meta), author.get("name"), parts,
        meta,
    )


def _stored_ancestor(
    node_id: str | None, mapping: dict[str, Any], stored: dict[str, str]
) -> str | None:
    """External id of the nearest stored node at or above ``node_id``."""
    seen: set[str] = set()
    while node_id is not None and node_id not in seen:
        if node_id in stored:
            return stored[node_id]
        seen.add(node_id)
        node = mapping.get(node_id)
        node_id = node.get("parent") if isinstance(node, dict) else None
    return None


def _drafts(mapping: dict[str, Any]) -> tuple[list[Draft], dict[str, str]]:
    drafts: list[tuple[dict[str, Any], Draft]] = []
    stored: dict[str, str] = {}
    used: set[str] = set()
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            raise RecordError(f"mapping node {node_id!r} is not an object")
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        draft = _draft(node_id, message)
        if draft.external_id in used:
            draft.external_id = node_id
        used.add(draft.external_id)
        stored[node_id] = draft.external_id
        drafts.append((node, draft))
    for node, draft in drafts:
        parent = node.get("parent")
        if parent in stored:  # the common case: the parent node holds a stored message
            draft.parent_external_id = stored[parent]
        else:
            draft.parent_external_id = _stored_ancestor(parent, mapping, stored)
    return [d for _, d in drafts], stored


def convert(raw: dict[str, Any], ctx: ImportContext) -> Parsed:
    external = raw.get("conversation_id") or raw.get("id")
    if not isinstance(external, str) or not external:
        raise RecordError("conversation has no id or conversation_id")
    mapping = raw.get("mapping")
    meta: dict[str, Any] = {
        k: raw[k] for k in ("default_model_slug", "gizmo_id", "is_archived") if raw.get(k)
    }
    if mapping is None:
        meta["mapping"] = "missing"
    elif not isinstance(mapping, dict):
        raise RecordError(f"mapping is a {type(mapping).__name__}, not an object")
    title = raw.get("title") if isinstance(raw.get("title"), str) else None
    conversation = build_conversation(
        ctx, external, title, timestamp(raw.get("create_time"), "create_time", meta),
        timestamp(raw.get("update_time"), "update_time", meta), meta,
    )
    if not mapping:
        return Parsed(conversation, [])
    drafts, stored = _drafts(mapping)
    current = raw.get("current_node")
    leaf = _stored_ancestor(current, mapping, stored) if isinstance(current, str) else None
    messages: list[Message] = build_messages(ctx, conversation, drafts, leaf)
    return Parsed(conversation, messages)


read = per_record(convert)
