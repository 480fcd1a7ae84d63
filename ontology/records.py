"""Stored-side records of raw data: sources, conversations and messages.

These are not sent to an LLM. Every record carries ``user_scope`` and ``assistant_scope`` so
that scoping and deletion never need a migration of meaning. Timestamps are tz-aware UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ContentPart",
    "Conversation",
    "ImportFormat",
    "Message",
    "Role",
    "Source",
    "ensure_utc",
]

Role = Literal["user", "assistant", "system", "tool"]
ImportFormat = Literal["chatgpt", "claude", "jsonl", "sharegpt", "locomo", "openwebui"]


def ensure_utc(value: datetime | None) -> datetime | None:
    """Naive datetimes are taken as UTC; aware ones are converted to UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Stored):
    """One imported file."""

    id: str
    path: str
    sha256: str
    format: ImportFormat
    imported_at: datetime
    user_scope: str
    assistant_scope: str


class ContentPart(_Stored):
    """One piece of a message's content, kept even when it is not plain text."""

    kind: str = Field(description="text, code, thinking, tool_use, tool_result, image, ...")
    text: str = Field(description="Best-effort text of the part (may be empty).")
    data: dict[str, Any] | None = Field(default=None, description="Original structured payload.")


class Conversation(_Stored):
    id: str
    source_id: str
    external_id: str
    title: str | None
    created_at: datetime | None
    updated_at: datetime | None
    user_scope: str
    assistant_scope: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    _utc = field_validator("created_at", "updated_at")(ensure_utc)


class Message(_Stored):
    id: str
    conversation_id: str
    source_id: str = Field(description="The source (file) that first imported the message.")
    parent_id: str | None
    external_id: str
    role: Role
    author: str | None = Field(description="Speaker name or author label, when the export has one.")
    text: str = Field(description="The answer/utterance text used for extraction and evidence.")
    parts: list[ContentPart]
    created_at: datetime | None
    position: int = Field(description="Order within the conversation (depth-first, stable).")
    on_current_branch: bool
    user_scope: str
    assistant_scope: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    _utc = field_validator("created_at")(ensure_utc)
