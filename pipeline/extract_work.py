"""Work items of the extract stage: pending segments with their messages; the dry-run estimate."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ontology import Conversation, ExtractionRequest, Message
from pipeline.llm import CostEstimate, estimate_extraction_cost
from pipeline.segmenter import segment_conversation, to_extraction_request
from pipeline.settings import Settings
from staging import SourceStore
from staging.errors import StoreNotFound
from staging.segments_repo import SegmentRow

__all__ = ["SegmentWork", "dry_run_estimate", "open_source", "pending_work"]

_CHUNK = 200


@dataclass
class SegmentWork:
    """One segment to extract: the request as the extractor sees it, and its source messages."""

    request: ExtractionRequest
    messages: dict[str, Message]
    call_id: str | None = None

    def scope(self) -> tuple[str, str] | None:
        """(user_scope, assistant_scope) of the segment's messages, if it has any."""
        for message in self.messages.values():
            return message.user_scope, message.assistant_scope
        return None


def open_source(settings: Settings) -> SourceStore:
    if not settings.source_db.exists():
        raise StoreNotFound(
            f"no source database at {settings.source_db}",
            "run `conceptmem --store DIR ingest PATH...` (or `conceptmem run PATH...`) first",
        )
    return SourceStore.open(settings.source_db)


def pending_work(source: SourceStore, pending: Sequence[SegmentRow]) -> Iterator[SegmentWork]:
    """Requests for the pending segments, in order, reading messages a chunk at a time."""
    titles: dict[str, str | None] = {}
    for start in range(0, len(pending), _CHUNK):
        chunk = pending[start : start + _CHUNK]
        messages = source.get_messages(mid for row in chunk for mid in row.message_ids)
        _load_titles(source, titles, (row.conversation_id for row in chunk))
        for row in chunk:
            own = {mid: messages[mid] for mid in row.message_ids if mid in messages}
            request = to_extraction_request(row, own, titles.get(row.conversation_id))
            yield SegmentWork(request, own)


def _load_titles(
    source: SourceStore, titles: dict[str, str | None], ids: Iterable[str]
) -> None:
    missing = {cid for cid in ids if cid not in titles}
    if missing:
        for conversation in source.conversations(missing):
            titles[conversation.id] = conversation.title


def dry_run_estimate(settings: Settings) -> CostEstimate:
    """Calls and tokens the extract stage would spend now; reads, never writes, either db."""
    source = open_source(settings)
    try:
        done = _finished_segment_ids(settings)
        conversations = {c.id: c for c in source.conversations()}
        requests = _requests(source, conversations, done, settings)
        return estimate_extraction_cost(requests, settings)
    finally:
        source.close()


def _requests(
    source: SourceStore, conversations: dict[str, Conversation], done: set[str],
    settings: Settings,
) -> Iterator[ExtractionRequest]:
    for conversation_id, group in itertools.groupby(
        source.messages(), key=lambda m: m.conversation_id
    ):
        messages = list(group)
        by_id = {m.id: m for m in messages}
        conversation = conversations.get(conversation_id)
        title = conversation.title if conversation else None
        for plan in segment_conversation(
            messages, settings.segment_max_tokens, settings.segment_overlap_messages
        ):
            if plan.id not in done:
                yield to_extraction_request(plan, by_id, title)


def _finished_segment_ids(settings: Settings) -> set[str]:
    if not settings.staging_db.exists():
        return set()
    conn = sqlite3.connect(f"file:{settings.staging_db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT id FROM segments WHERE status IN ('extracted', 'skipped')"
        ).fetchall()
    except sqlite3.OperationalError:  # no segments table yet
        return set()
    finally:
        conn.close()
    return {row[0] for row in rows}
