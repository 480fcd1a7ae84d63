"""Lineage lists each supporting span once, even after a merge left two rows for it."""

from __future__ import annotations

from graph import EvidenceRow
from pipeline.lineage import distinct_spans


def _row(evidence_id: str, message_id: str, start: int, end: int, confidence: float) -> EvidenceRow:
    return EvidenceRow(
        evidence_id=evidence_id, concept_id="c_survivor", quote="I moved to Lisbon",
        start=start, end=end, confidence=confidence, message_id=message_id,
        conversation_id="conv_1", created_at="2024-01-01T00:00:00.000000+00:00", role="user",
        run_id="run_1",
    )


def test_same_span_from_two_merged_concepts_is_listed_once_with_the_best_confidence() -> None:
    rows = [
        _row("ev_a", "msg_1", 0, 17, 0.37),
        _row("ev_b", "msg_2", 5, 22, 0.50),
        _row("ev_c", "msg_1", 0, 17, 0.43),
        _row("ev_d", "msg_1", 3, 17, 0.30),
    ]
    kept = distinct_spans(rows)
    assert [row.evidence_id for row in kept] == ["ev_b", "ev_c", "ev_d"]
    assert distinct_spans(kept) == kept
    assert distinct_spans([]) == []
