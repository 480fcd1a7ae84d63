"""JSON lines of messages, and ShareGPT conversations.

**Message lines** (format ``jsonl``): one message per line, ``{conversation_id, role,
content | text, timestamp | created_at, id?, parent_id?, author | name?}``; ``content`` may be
a string or a list of ``{type, text}`` blocks. Lines are read one at a time; consecutive lines
of the same conversation form a run that is stored together. Without ``id`` a message's
external id is derived from its position, role and text hash; without ``parent_id`` a message
follows the previous message of its conversation. A conversation whose lines are interleaved
with another's is stored in several runs; positions continue across runs, and the current
branch is computed per run. A line that is not JSON, or lacks a conversation id, role or text,
is quarantined with its line number; the other lines are stored.

**ShareGPT** (format ``sharegpt``): ``{id?, conversations: [{from, value}]}`` per line or per
array item; ``from`` human/gpt/system/... is mapped to a role, and a turn's ``name`` (or
``speaker``) is its author, so two people talking are two ``user`` speakers. Without ``id`` the
conversation's external id is a hash of its whole content (so an extended copy is a new
conversation).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ontology import Role
from pipeline.importers.base import (
    Draft,
    ImportContext,
    Parsed,
    RecordError,
    build_conversation,
    build_messages,
    derived_external_id,
    excerpt,
    iter_dicts,
    map_role,
    per_record,
    timestamp,
)
from pipeline.importers.detect import BadLine
from staging import QuarantinedRecord

__all__ = ["read_messages", "read_sharegpt"]


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(b.get("text") or "") for b in iter_dicts(value) if b.get("text"))
    raise RecordError(f"content is a {type(value).__name__}, not text")


@dataclass
class _ConversationState:
    """What later runs of a conversation need: next position, last and known message ids."""

    next_position: int = 0
    last: str | None = None
    known: set[str] = field(default_factory=set)


@dataclass
class _Line:
    label: str
    conversation: str
    role: Role
    text: str
    raw: dict[str, Any]


def _line(label: str, raw: object) -> _Line:
    if not isinstance(raw, dict):
        raise RecordError(f"expected an object, got {type(raw).__name__}")
    conv = raw.get("conversation_id", raw.get("conversation"))
    if not isinstance(conv, str | int) or isinstance(conv, bool) or conv == "":
        raise RecordError("line has no conversation_id")
    role = map_role(raw.get("role", raw.get("sender")), "line")
    text = _text(raw.get("content", raw.get("text", "")))
    return _Line(label, str(conv), role, text, raw)


def _run_drafts(run: list[_Line], state: _ConversationState) -> list[Draft]:
    drafts = []
    for offset, line in enumerate(run):
        raw, role, text = line.raw, line.role, line.text
        position = state.next_position + offset
        ext = raw.get("id")
        external = str(ext) if ext not in (None, "") else derived_external_id(position, role, text)
        parent = raw.get("parent_id")
        if parent in (None, "") and "parent_id" not in raw:
            parent = state.last
        meta: dict[str, Any] = {"line": line.label}
        name = "timestamp" if "timestamp" in raw else "created_at"
        drafts.append(Draft(
            external_id=external, parent_external_id=None if parent is None else str(parent),
            role=role, text=text, created_at=timestamp(raw.get(name), name, meta),
            author=raw.get("author") or raw.get("name"), metadata=meta,
        ))
        state.last = external
    return drafts


def _flush(
    run: list[_Line], ctx: ImportContext, states: dict[str, _ConversationState]
) -> Parsed:
    state = states.setdefault(run[0].conversation, _ConversationState())
    first = run[0].raw
    conversation = build_conversation(
        ctx, run[0].conversation, first.get("title") if isinstance(first.get("title"), str)
        else None, None, None,
    )
    drafts = _run_drafts(run, state)
    messages = build_messages(
        ctx, conversation, drafts, known_parents=state.known,
        start_position=state.next_position,
    )
    state.next_position += len(messages)
    state.known.update(m.external_id for m in messages)
    times = [m.created_at for m in messages if m.created_at is not None]
    if times:
        conversation = conversation.model_copy(
            update={"created_at": min(times), "updated_at": max(times)}
        )
    return Parsed(conversation, messages)


def read_messages(
    records: Iterable[tuple[str, object]], ctx: ImportContext
) -> Iterator[Parsed | QuarantinedRecord]:
    """Message lines -> one Parsed per run of consecutive lines of a conversation."""
    states: dict[str, _ConversationState] = {}
    run: list[_Line] = []
    for label, raw in records:
        if isinstance(raw, BadLine):
            yield QuarantinedRecord(label, raw.reason, raw.excerpt)
            continue
        try:
            line = _line(label, raw)
        except RecordError as exc:
            yield QuarantinedRecord(label, exc.reason, excerpt(raw))
            continue
        if run and line.conversation != run[0].conversation:
            yield from _safe_flush(run, ctx, states)
            run = []
        run.append(line)
    if run:
        yield from _safe_flush(run, ctx, states)


def _safe_flush(
    run: list[_Line], ctx: ImportContext, states: dict[str, _ConversationState]
) -> Iterator[Parsed | QuarantinedRecord]:
    try:
        yield _flush(run, ctx, states)
    except (RecordError, TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        where = f"{run[0].label}..{run[-1].label} (conversation {run[0].conversation})"
        reason = exc.reason if isinstance(exc, RecordError) else \
            f"malformed record ({type(exc).__name__}: {exc})"
        yield QuarantinedRecord(where, reason, excerpt([line.raw for line in run[:3]]))


def _sharegpt(raw: dict[str, Any], ctx: ImportContext) -> Parsed:
    turns = raw.get("conversations")
    if not isinstance(turns, list):
        raise RecordError("conversations is not a list of {from, value} turns")
    ext = raw.get("id")
    if ext in (None, ""):
        digest = hashlib.sha256(
            json.dumps(turns, ensure_ascii=False, sort_keys=True).encode("utf-8")
        ).hexdigest()[:24]
        ext = f"sha256:{digest}"
    conversation = build_conversation(
        ctx, str(ext), raw.get("title") if isinstance(raw.get("title"), str) else None,
        None, None,
    )
    drafts: list[Draft] = []
    for position, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise RecordError(f"turn {position} is not an object")
        role = map_role(turn.get("from", turn.get("role")), f"turn {position}")
        text = _text(turn.get("value", turn.get("content", "")))
        drafts.append(Draft(
            external_id=derived_external_id(position, role, text),
            parent_external_id=drafts[-1].external_id if drafts else None,
            role=role, text=text, created_at=None,
            author=str(turn.get("name") or turn.get("speaker") or turn.get("from")),
        ))
    return Parsed(conversation, build_messages(ctx, conversation, drafts))


read_sharegpt = per_record(_sharegpt)
