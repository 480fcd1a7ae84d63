"""Shared pieces of the importers: context, record errors, timestamps and the message tree.

An importer turns one raw record (a conversation as the export holds it) into a
``Conversation`` and its ``Message`` list. It builds :class:`Draft` messages (external ids,
parent external ids, role, text, parts) and hands them to :func:`build_messages`, which assigns
the content-addressed ids, a deterministic depth-first ``position`` (siblings ordered by
``created_at`` then external id) and the ``on_current_branch`` flag.

Records are built with ``model_construct``: the importers normalise every field themselves
(roles mapped to the ``Role`` literal, timestamps made tz-aware UTC), so pydantic validation
would only repeat that work on hundreds of thousands of rows. Tests re-validate the output.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from ontology import ContentPart, Conversation, Message, Role, stable_id
from pipeline.importers.detect import BadLine
from staging import QuarantinedRecord

__all__ = [
    "ROLE_ALIASES",
    "BadTime",
    "Draft",
    "ImportContext",
    "Parsed",
    "RecordError",
    "build_conversation",
    "build_messages",
    "conversation_id",
    "derived_external_id",
    "excerpt",
    "iter_dicts",
    "map_role",
    "message_id",
    "parse_time",
    "part",
    "per_record",
    "read_time",
    "record_label",
    "timestamp",
]

ROLE_ALIASES: dict[str, Role] = {
    "user": "user", "human": "user", "person": "user",
    "assistant": "assistant", "gpt": "assistant", "bot": "assistant", "model": "assistant",
    "chatgpt": "assistant", "ai": "assistant", "claude": "assistant",
    "system": "system", "developer": "system",
    "tool": "tool", "function": "tool", "observation": "tool", "ipython": "tool",
}


class RecordError(ValueError):
    """A record inside a readable file cannot be imported; it goes to the quarantine table."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class ImportContext:
    """What every record of one file shares: its source and the scopes."""

    source_id: str
    user_scope: str
    assistant_scope: str
    family: str


@dataclass
class Draft:
    """A message before ids, position and branch flag are assigned."""

    external_id: str
    parent_external_id: str | None
    role: Role
    text: str
    created_at: datetime | None
    author: str | None = None
    parts: list[ContentPart] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Parsed:
    """One converted record."""

    conversation: Conversation
    messages: list[Message]


def map_role(raw: object, where: str, prefix: str = "") -> Role:
    """The Role for an export's role/sender label; an unknown label is a RecordError."""
    if isinstance(raw, str):
        role = ROLE_ALIASES.get(raw) or ROLE_ALIASES.get(raw.strip().lower())
        if role is not None:
            return role
    raise RecordError(f"{prefix}{where}: unknown role {raw!r}")


_MIN_EPOCH = 0.0  # 1970-01-01
_MAX_EPOCH = datetime(3000, 1, 1, tzinfo=UTC).timestamp()
_TIME_RANGE = "1970-01-01..2999-12-31"


class BadTime(ValueError):
    """A timestamp value that cannot be a message time; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _from_number(seconds: float) -> datetime:
    if not math.isfinite(seconds):
        raise BadTime("not a finite number")
    for _ in range(3):  # milliseconds, microseconds, nanoseconds
        if abs(seconds) <= 1e11:
            break
        seconds /= 1000.0
    if not _MIN_EPOCH <= seconds < _MAX_EPOCH:
        raise BadTime(f"outside {_TIME_RANGE}")
    return datetime.fromtimestamp(seconds, UTC)


def _from_text(text: str) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise BadTime("neither ISO 8601 nor an epoch number") from None
        return _from_number(number)
    try:
        parsed = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except OverflowError:
        raise BadTime(f"outside {_TIME_RANGE}") from None
    if not _MIN_EPOCH <= parsed.timestamp() < _MAX_EPOCH:
        raise BadTime(f"outside {_TIME_RANGE}")
    return parsed


def read_time(value: object) -> datetime | None:
    """Epoch seconds (or ms, µs, ns), ISO 8601 strings, or None -> tz-aware UTC datetime.

    Missing values (None, "") give None; a value that is present but cannot be a time in
    1970..2999 (NaN, 1e20, negative, year 9999, a bool, an object) raises :class:`BadTime`.
    """
    if type(value) is float and _MIN_EPOCH < value < _MAX_EPOCH:  # the common case
        return datetime.fromtimestamp(value, UTC)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return _from_text(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadTime(f"not a timestamp ({type(value).__name__})")
    try:
        return _from_number(float(value))
    except OverflowError:
        raise BadTime(f"outside {_TIME_RANGE}") from None


def parse_time(value: object) -> datetime | None:
    """:func:`read_time`, with None for a bad value."""
    try:
        return read_time(value)
    except BadTime:
        return None


def timestamp(value: object, name: str, metadata: dict[str, Any]) -> datetime | None:
    """:func:`read_time`; a bad value gives None and is recorded in
    ``metadata["invalid_time"][name]`` (the value as text and the reason)."""
    if type(value) is float and _MIN_EPOCH < value < _MAX_EPOCH:  # read_time's common case
        return datetime.fromtimestamp(value, UTC)
    try:
        return read_time(value)
    except BadTime as exc:
        shown = value if isinstance(value, str) else excerpt(value, 80)
        metadata.setdefault("invalid_time", {})[name] = {
            "value": shown[:80], "reason": exc.reason,
        }
        return None


def part(kind: str, text: str, data: Mapping[str, Any] | None = None) -> ContentPart:
    return ContentPart.model_construct(kind=kind, text=text, data=dict(data) if data else None)


def derived_external_id(position: int, role: str, text: str) -> str:
    """External id for formats without message ids: position + role + text hash."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{position}:{role}:{digest}"


def conversation_id(user_scope: str, family: str, external_id: str) -> str:
    return stable_id("conv", user_scope, family, external_id)


def message_id(user_scope: str, conversation_external_id: str, external_id: str) -> str:
    """``stable_id("msg", user_scope, conversation external id, message external id)``.

    Spelled out (same bytes as ``stable_id``, checked by a test) because it runs per message.
    """
    joined = f"{user_scope}\x1f{conversation_external_id}\x1f{external_id}"
    return "msg_" + hashlib.sha256(joined.encode("utf-8")).hexdigest()[:24]


def build_conversation(
    ctx: ImportContext,
    external_id: str,
    title: str | None,
    created_at: datetime | None,
    updated_at: datetime | None,
    metadata: dict[str, Any] | None = None,
) -> Conversation:
    return _construct(Conversation, _CONVERSATION_FIELDS, {
        "id": conversation_id(ctx.user_scope, ctx.family, external_id),
        "source_id": ctx.source_id, "external_id": external_id, "title": title,
        "created_at": created_at, "updated_at": updated_at, "user_scope": ctx.user_scope,
        "assistant_scope": ctx.assistant_scope, "metadata": metadata or {},
    })


def _sort_key(draft: Draft) -> tuple[bool, float, str]:
    ts = draft.created_at.timestamp() if draft.created_at else 0.0
    return (draft.created_at is None, ts, draft.external_id)


def depth_first(drafts: list[Draft]) -> list[Draft]:
    """Deterministic depth-first order: siblings by created_at then external id."""
    return _depth_first(drafts, {d.external_id: d for d in drafts})


def _depth_first(drafts: list[Draft], by_id: Mapping[str, Draft]) -> list[Draft]:
    children: dict[str | None, list[Draft]] = {}
    for d in drafts:
        parent = d.parent_external_id if d.parent_external_id in by_id else None
        siblings = children.get(parent)
        if siblings is None:
            children[parent] = [d]
        else:
            siblings.append(d)
    for siblings in children.values():
        if len(siblings) > 1:  # most nodes of a chat tree have one child
            siblings.sort(key=_sort_key)
    ordered: list[Draft] = []
    seen: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        node = stack.pop()
        ext = node.external_id
        if ext in seen:
            continue
        seen.add(ext)
        ordered.append(node)
        below = children.get(ext)
        if below is not None:
            stack.extend(reversed(below))
    if len(ordered) != len(by_id):
        missing = sorted(set(by_id) - seen)[:3]
        raise RecordError(f"message tree has a cycle through {', '.join(missing)}")
    return ordered


def _current_path(
    ordered: list[Draft], by_id: Mapping[str, Draft], current: str | None
) -> set[str]:
    if current is None or current not in by_id:
        parents = {d.parent_external_id for d in ordered}
        leaves = [d for d in ordered if d.external_id not in parents]
        if not leaves:
            return set()
        index = {d.external_id: i for i, d in enumerate(ordered)}
        latest = max(leaves, key=lambda d: (d.created_at is not None, _sort_key(d)[1],
                                            index[d.external_id]))
        current = latest.external_id
    path: set[str] = set()
    node: str | None = current
    while node is not None and node in by_id and node not in path:
        path.add(node)
        node = by_id[node].parent_external_id
    return path


_MESSAGE_FIELDS = frozenset(Message.model_fields)
_CONVERSATION_FIELDS = frozenset(Conversation.model_fields)
_set = object.__setattr__
_M = TypeVar("_M", bound=BaseModel)


def _construct(model: type[_M], fields: frozenset[str], values: dict[str, Any]) -> _M:
    """``model.model_construct(**values)`` minus its per-field default lookups (all fields
    given).

    Profiling the 24,639-message benchmark put model_construct first; the importers have
    already normalised every value, and tests re-validate what they produce.
    """
    record = model.__new__(model)
    _set(record, "__dict__", values)
    _set(record, "__pydantic_fields_set__", set(fields))
    _set(record, "__pydantic_extra__", None)
    _set(record, "__pydantic_private__", None)
    return record


def build_messages(
    ctx: ImportContext,
    conversation: Conversation,
    drafts: list[Draft],
    current: str | None = None,
    *,
    known_parents: Iterable[str] = (),
    start_position: int = 0,
) -> list[Message]:
    """Drafts -> Messages with ids, depth-first positions and the current-branch flag.

    ``current`` is the external id of the current leaf; without it the latest leaf's path is
    the current branch. A parent that is neither a draft nor in ``known_parents`` is dropped
    (the message becomes a root) and recorded in its metadata as ``missing_parent``.
    """
    unique: dict[str, Draft] = {}
    for d in drafts:
        if d.external_id in unique:
            raise RecordError(f"duplicate message id {d.external_id!r}")
        unique[d.external_id] = d
    known = set(known_parents)
    ordered = _depth_first(drafts, unique)
    on_branch = _current_path(ordered, unique, current)
    scope, conv_ext = ctx.user_scope, conversation.external_id
    # message_id() inlined: one sha256 per message is the bulk of this loop
    prefix, sha256 = f"{scope}\x1f{conv_ext}\x1f", hashlib.sha256
    ids = {ext: "msg_" + sha256((prefix + ext).encode()).hexdigest()[:24] for ext in unique}
    conv_id, source_id, assistant_scope = conversation.id, ctx.source_id, ctx.assistant_scope
    messages: list[Message] = []
    for position, d in enumerate(ordered, start=start_position):
        parent, ext = d.parent_external_id, d.external_id
        metadata = d.metadata
        if parent is None:
            parent_id = None
        elif parent in ids:
            parent_id = ids[parent]
        elif parent in known:
            parent_id = message_id(scope, conv_ext, parent)
        else:
            metadata = {**metadata, "missing_parent": parent}
            parent_id = None
        author = d.author
        messages.append(_construct(Message, _MESSAGE_FIELDS, {
            "id": ids[ext], "conversation_id": conv_id, "source_id": source_id,
            "parent_id": parent_id, "external_id": ext, "role": d.role,
            "author": author if isinstance(author, str) else None, "text": d.text,
            "parts": d.parts, "created_at": d.created_at, "position": position,
            "on_current_branch": ext in on_branch, "user_scope": scope,
            "assistant_scope": assistant_scope, "metadata": metadata,
        }))
    return messages


def iter_dicts(value: object) -> Iterator[dict[str, Any]]:
    """The dict items of a list (anything else yields nothing)."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


_ID_KEYS = ("id", "uuid", "conversation_id", "sample_id")


def record_label(label: str, raw: object) -> str:
    """``record 3 (id abc)`` when the raw record carries an id."""
    if isinstance(raw, dict):
        for key in _ID_KEYS:
            value = raw.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool):
                return f"{label} ({key} {value})"
    return label


def excerpt(raw: object, limit: int = 500) -> str:
    try:
        text = json.dumps(raw, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(raw)
    return text[:limit]


def per_record(
    convert: Callable[[dict[str, Any], ImportContext], Parsed],
) -> Callable[[Iterable[tuple[str, object]], ImportContext], Iterator[Parsed | QuarantinedRecord]]:
    """Lift a one-record converter to a reader; bad records become quarantine entries."""

    def read(
        records: Iterable[tuple[str, object]], ctx: ImportContext
    ) -> Iterator[Parsed | QuarantinedRecord]:
        for label, raw in records:
            if isinstance(raw, BadLine):
                yield QuarantinedRecord(label, raw.reason, raw.excerpt)
                continue
            if not isinstance(raw, dict):
                yield QuarantinedRecord(
                    label, f"expected an object, got {type(raw).__name__}", excerpt(raw)
                )
                continue
            try:
                yield convert(raw, ctx)
            except RecordError as exc:
                yield QuarantinedRecord(record_label(label, raw), exc.reason, excerpt(raw))
            except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError,
                    RecursionError) as exc:
                reason = f"malformed record ({type(exc).__name__}: {exc})"
                yield QuarantinedRecord(record_label(label, raw), reason, excerpt(raw))

    return read
