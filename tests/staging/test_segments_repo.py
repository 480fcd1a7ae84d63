"""SegmentsRepo on a real staging file: idempotent upserts, statuses, membership."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from staging import StagingStore, transaction
from staging.errors import StagingError
from staging.segments_repo import SegmentsRepo, UnknownSegment


@dataclass(frozen=True)
class Plan:
    id: str
    conversation_id: str
    ordinal: int
    branch: str
    message_ids: tuple[str, ...]
    token_estimate: int


PLANS = [
    Plan("seg_a", "c1", 0, "current", ("m1", "m2", "m3"), 90),
    Plan("seg_b", "c1", 1, "current", ("m3", "m4"), 60),
    Plan("seg_c", "c2", 0, "m9", ("m8", "m9"), 30),
]


@pytest.fixture
def repo(tmp_path: Path) -> SegmentsRepo:
    return SegmentsRepo(StagingStore.open(tmp_path / "staging.db"))


def _upsert(repo: SegmentsRepo, plans: list[Plan]) -> int:
    run = repo.staging.start_run("segment", {}, "test", "u", "a")
    with transaction(repo.staging.db):
        return repo.upsert_segments(plans, run)


def test_upsert_is_idempotent_and_keeps_membership(repo: SegmentsRepo) -> None:
    assert _upsert(repo, PLANS) == 3
    assert _upsert(repo, PLANS) == 0
    assert repo.staging.count("segment_messages") == 7
    assert repo.segment_messages("seg_a") == ["m1", "m2", "m3"]
    assert repo.segments_for_message("m3") == ["seg_a", "seg_b"]
    row = repo.get("seg_c")
    assert (row.branch, row.message_ids, row.status, row.token_estimate) == (
        "m9", ("m8", "m9"), "pending", 30)
    stored = repo.staging.db.execute(
        "SELECT user_scope, assistant_scope, writer FROM segments WHERE id='seg_a'").fetchone()
    assert stored == ("u", "a", "segmenter")


def test_statuses_and_pending(repo: SegmentsRepo) -> None:
    _upsert(repo, PLANS)
    repo.mark("seg_a", "extracted")
    repo.mark("seg_b", "failed")
    assert [r.id for r in repo.pending_segments()] == ["seg_b", "seg_c"]
    assert [r.id for r in repo.pending_segments(limit=1)] == ["seg_b"]
    assert repo.count_by_status() == {"extracted": 1, "failed": 1, "pending": 1}
    _upsert(repo, PLANS)  # re-segmenting never resets a status
    assert repo.count_by_status() == {"extracted": 1, "failed": 1, "pending": 1}


def test_errors_name_the_segment(repo: SegmentsRepo) -> None:
    _upsert(repo, PLANS)
    with pytest.raises(UnknownSegment, match="seg_zzz"):
        repo.mark("seg_zzz", "extracted")
    with pytest.raises(StagingError, match="unknown status"):
        repo.mark("seg_a", "done")
    with pytest.raises(UnknownSegment):
        repo.get("seg_zzz")
