"""Queries over the ``segments`` and ``segment_messages`` tables of the staging db."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from staging.errors import StagingError
from staging.staging_store import Run, StagingStore

__all__ = ["SEGMENT_STATUSES", "SegmentLike", "SegmentRow", "SegmentsRepo", "UnknownSegment"]

SEGMENT_STATUSES = ("pending", "running", "extracted", "failed", "skipped")
_WRITER = "segmenter"


class SegmentLike(Protocol):
    """What the repo needs from a segment plan (``pipeline.segmenter.SegmentPlan``)."""

    @property
    def id(self) -> str: ...
    @property
    def conversation_id(self) -> str: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def branch(self) -> str: ...
    @property
    def message_ids(self) -> tuple[str, ...]: ...
    @property
    def token_estimate(self) -> int: ...


@dataclass(frozen=True)
class SegmentRow:
    """A stored segment."""

    id: str
    conversation_id: str
    ordinal: int
    branch: str
    token_estimate: int
    status: str
    message_ids: tuple[str, ...]
    run_id: str


class UnknownSegment(StagingError):
    """A segment id that the staging db does not hold."""

    def __init__(self, segment_id: str) -> None:
        self.segment_id = segment_id
        super().__init__(
            f"segment {segment_id} is not in the staging db",
            "run `conceptmem extract` (it segments first) or check the store path",
        )


class SegmentsRepo:
    def __init__(self, staging: StagingStore) -> None:
        self.staging = staging
        self.conn = staging.db.conn

    def upsert_segments(self, plans: Iterable[SegmentLike], run: Run) -> int:
        """Insert the segments not yet stored (with membership rows); returns how many.

        Call inside ``staging.db.transaction`` so that a batch lands whole or not at all.
        """
        prov = run.provenance(_WRITER).columns()
        new = 0
        for plan in plans:
            cursor = self.conn.execute(
                "INSERT OR IGNORE INTO segments (id, conversation_id, ordinal, branch,"
                " token_estimate, status, source_message_ids, run_id, user_scope,"
                " assistant_scope, writer, written_at) VALUES (?,?,?,?,?,'pending',?,?,?,?,?,?)",
                [plan.id, plan.conversation_id, plan.ordinal, plan.branch, plan.token_estimate,
                 json.dumps(list(plan.message_ids)), prov["run_id"], prov["user_scope"],
                 prov["assistant_scope"], prov["writer"], prov["written_at"]],
            )
            if cursor.rowcount:
                new += 1
                self.conn.executemany(
                    "INSERT OR IGNORE INTO segment_messages (segment_id, message_id, position)"
                    " VALUES (?,?,?)",
                    [(plan.id, mid, pos) for pos, mid in enumerate(plan.message_ids)],
                )
        return new

    def pending_segments(self, limit: int | None = None) -> list[SegmentRow]:
        """Segments still to extract ('pending' or 'failed'), in insertion order."""
        sql = "SELECT * FROM segments WHERE status IN ('pending', 'failed') ORDER BY rowid"
        params: list[Any] = []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_row(r) for r in self.staging.db.query(sql, params)]

    def get(self, segment_id: str) -> SegmentRow:
        rows = list(self.staging.db.query("SELECT * FROM segments WHERE id = ?", [segment_id]))
        if not rows:
            raise UnknownSegment(segment_id)
        return _row(rows[0])

    def mark(self, segment_id: str, status: str) -> None:
        if status not in SEGMENT_STATUSES:
            raise StagingError(
                f"segment {segment_id}: unknown status {status!r}",
                f"use one of {', '.join(SEGMENT_STATUSES)}",
            )
        cursor = self.conn.execute(
            "UPDATE segments SET status = ? WHERE id = ?", [status, segment_id]
        )
        if cursor.rowcount == 0:
            raise UnknownSegment(segment_id)

    def mark_many(self, segment_ids: Sequence[str], status: str) -> None:
        for segment_id in segment_ids:
            self.mark(segment_id, status)

    def segment_messages(self, segment_id: str) -> list[str]:
        """Message ids of a segment, in order."""
        rows = self.conn.execute(
            "SELECT message_id FROM segment_messages WHERE segment_id = ? ORDER BY position",
            [segment_id],
        )
        return [str(row[0]) for row in rows]

    def segments_for_message(self, message_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT segment_id FROM segment_messages WHERE message_id = ? ORDER BY segment_id",
            [message_id],
        )
        return [str(row[0]) for row in rows]

    def count_by_status(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT status, COUNT(*) FROM segments GROUP BY status")
        return {str(status): int(n) for status, n in rows}


def _row(row: dict[str, Any]) -> SegmentRow:
    return SegmentRow(
        id=row["id"],
        conversation_id=row["conversation_id"],
        ordinal=int(row["ordinal"]),
        branch=row["branch"],
        token_estimate=int(row["token_estimate"]),
        status=row["status"],
        message_ids=tuple(json.loads(row["source_message_ids"])),
        run_id=row["run_id"],
    )
