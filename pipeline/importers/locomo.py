"""LoCoMo benchmark conversations (``locomo10.json``): one record per ``sample_id``.

Sessions ``session_<N>`` are ordered by the integer N; ``session_<N>_date_time`` ("1:56 pm on
8 May, 2023", no zone given) is read as UTC, and turn i of a session is stamped session time + i
seconds so that time order equals dialogue order. ``dia_id`` ("D3:7") is the external id (unique
within a conversation, which the message id includes). Both speakers are people, so every turn
has role ``user`` and its speaker's name in ``author``: whom a first-person statement is about
is the message's author (the conversation's metadata lists ``speakers``). Shared images are
kept as ``image`` parts (url, query, caption) and the caption is appended to the text as
``[image: caption]``. ``qa`` and ``observation`` are not ingested.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from ontology import ContentPart, Role
from pipeline.importers.base import (
    Draft,
    ImportContext,
    Parsed,
    RecordError,
    build_conversation,
    build_messages,
    part,
    per_record,
)

__all__ = ["convert", "parse_session_time", "read"]

_SESSION = re.compile(r"^session_(\d+)$")
_HUMAN: Role = "user"  # both speakers are people


def parse_session_time(value: object) -> datetime | None:
    """'1:56 pm on 8 May, 2023' -> 2023-05-08T13:56:00+00:00 (None if it does not parse, or
    falls outside 1970..2999)."""
    if not isinstance(value, str):
        return None
    cleaned = " ".join(value.replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%H:%M on %d %B %Y"):
        try:
            parsed = datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        return parsed if 1970 <= parsed.year < 3000 else None
    return None


def _sessions(conv: dict[str, Any]) -> list[tuple[int, list[Any]]]:
    found = []
    for key, value in conv.items():
        match = _SESSION.match(key)
        if match:
            if not isinstance(value, list):
                raise RecordError(f"{key} is not a list of turns")
            found.append((int(match.group(1)), value))
    return sorted(found, key=lambda item: item[0])


def _turn_text(turn: dict[str, Any]) -> tuple[str, list[ContentPart]]:
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    if not (caption or turn.get("img_url")):
        return text, []
    data: dict[str, Any] = {k: turn[k] for k in ("img_url", "query", "blip_caption") if k in turn}
    if caption:
        text = f"{text} [image: {caption}]"
    return text, [part("image", str(caption or ""), data)]


def _drafts(conv: dict[str, Any]) -> list[Draft]:
    drafts: list[Draft] = []
    for number, turns in _sessions(conv):
        raw_time = conv.get(f"session_{number}_date_time")
        start = parse_session_time(raw_time)
        meta: dict[str, Any] = {"session": number}
        if start is None and raw_time not in (None, ""):
            meta["invalid_time"] = {"session_date_time": {
                "value": str(raw_time)[:80], "reason": "not a readable date in 1970..2999"}}
        for i, turn in enumerate(turns):
            if not isinstance(turn, dict) or not isinstance(turn.get("dia_id"), str):
                raise RecordError(f"session_{number}[{i}] has no dia_id")
            speaker = str(turn.get("speaker") or "")
            text, parts = _turn_text(turn)
            drafts.append(Draft(
                external_id=turn["dia_id"],
                parent_external_id=drafts[-1].external_id if drafts else None,
                role=_HUMAN, text=text,
                created_at=start + timedelta(seconds=i) if start else None,
                author=speaker or None, parts=parts, metadata=dict(meta),
            ))
    return drafts


def convert(raw: dict[str, Any], ctx: ImportContext) -> Parsed:
    sample = raw.get("sample_id")
    conv = raw.get("conversation")
    if not isinstance(sample, str | int) or sample == "":
        raise RecordError("record has no sample_id")
    if not isinstance(conv, dict):
        raise RecordError("conversation is not an object")
    speaker_a, speaker_b = conv.get("speaker_a"), conv.get("speaker_b")
    drafts = _drafts(conv)
    times = [d.created_at for d in drafts if d.created_at is not None]
    conversation = build_conversation(
        ctx, str(sample), f"{speaker_a} & {speaker_b}", min(times, default=None),
        max(times, default=None),
        {"speaker_a": speaker_a, "speaker_b": speaker_b, "speakers": [speaker_a, speaker_b]},
    )
    # Each turn's parent is the previous one: one chain, all on the current branch.
    return Parsed(conversation, build_messages(ctx, conversation, drafts, drafts[-1].external_id
                                               if drafts else None))


read = per_record(convert)
