"""ConceptRepo on a real staging file: hypotheses round-trip, idempotent evidence, revisions."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ontology import ConceptHypothesis
from staging import StagingStore, transaction
from staging.concept_repo import ConceptRepo, ConceptRow, EvidenceRow, RelationRow, evidence_id


@pytest.fixture
def repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    staging = StagingStore.open(tmp_path / "staging.db")
    yield ConceptRepo(staging)
    staging.close()


def _concept(cid: str, title: str) -> ConceptRow:
    seen = datetime(2024, 3, 1, tzinfo=UTC).isoformat()
    return ConceptRow(id=cid, title=title, type="goal", description="d", state="active",
                      confidence=0.6, aliases=["alt"], first_seen=seen, last_seen=seen)


def test_round_trip_to_hypotheses(repo: ConceptRepo) -> None:
    run = repo.staging.start_run("extract", {}, "t", "u", "a")
    prov = run.provenance("test")
    with transaction(repo.db):
        repo.save_concept(_concept("c_1", "Learn Rust"), prov)
        repo.save_concept(_concept("c_2", "New job"), prov)
        evidence = EvidenceRow("c_1", "msg-1", "src", "learn Rust", 10, 20, 0.8, "mn_1")
        assert repo.add_evidence(evidence, prov)
        assert not repo.add_evidence(evidence, prov)  # idempotent by stable id
        assert evidence.id == evidence_id("c_1", "msg-1", 10, 20)
        assert repo.add_relation(RelationRow("c_1", "c_2", "enables", 0.5, None, "msg-1"), prov)
        assert repo.record_revision("c_1", "create", "new", prov) == 0
        assert repo.record_revision("c_1", "refine", "alias", prov) == 1
    hypotheses = repo.load_hypotheses()
    assert [h.concept_id for h in hypotheses] == ["c_1", "c_2"]
    first = hypotheses[0]
    assert isinstance(first, ConceptHypothesis)
    span = first.evidence_spans[0]
    assert (span.message_id, span.start, span.end, span.text) == ("msg-1", 10, 20, "learn Rust")
    assert first.relations[0].target_id == "c_2"
    assert first.first_seen == datetime(2024, 3, 1, tzinfo=UTC)
    assert repo.get("c_1") == first and repo.get("nope") is None
    assert repo.evidence_for("c_1") == first.evidence_spans
    assert repo.staging.count("evidence") == 1
    snapshot = repo.db.execute(
        "SELECT snapshot FROM concept_revisions WHERE concept_id='c_1' AND revision=1"
    ).fetchone()[0]
    assert ConceptHypothesis.model_validate_json(snapshot).concept_id == "c_1"


def test_save_updates_and_filters_by_state(repo: ConceptRepo) -> None:
    prov = repo.staging.start_run("extract", {}, "t", "u", "a").provenance("test")
    row = _concept("c_1", "Learn Rust")
    with transaction(repo.db):
        repo.save_concept(row, prov)
        row.aliases.append("rust")
        row.state = "merged"
        row.merged_into = "c_9"
        repo.save_concept(row, prov)
    assert repo.staging.count("concepts") == 1
    assert repo.load_hypotheses() == []
    stored = repo.row("c_1")
    assert stored is not None and stored.aliases == ["alt", "rust"]
    assert stored.merged_into == "c_9"
    assert [h.state for h in repo.load_hypotheses(("merged",))] == ["merged"]
