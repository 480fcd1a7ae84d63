"""Writes through the GraphStore contract on every backend: idempotence, diffs, rebuilds."""

from __future__ import annotations

from builders import HOSTILE, add_concept, add_evidence, build_store, require_neo4j

from graph import open_graph
from pipeline.settings import Settings
from pipeline.sync import sync_store, verify_store
from staging import StagingStore, transaction


def _export(settings: Settings, backend: str) -> dict[str, list[dict[str, object]]]:
    graph = open_graph(settings, backend)
    try:
        return graph.export()
    finally:
        graph.close()


def test_resync_writes_nothing_and_rebuild_is_identical(settings: Settings, backend: str) -> None:
    build_store(settings)
    first = sync_store(settings, backend=backend)
    exported = _export(settings, backend)
    second = sync_store(settings, backend=backend)
    rebuilt = sync_store(settings, backend=backend, rebuild=True)
    assert first.rows_written == sum(first.counts.values()) > 0
    assert second.rows_written == 0 and not second.bulk
    assert rebuilt.bulk and rebuilt.counts == first.counts
    assert _export(settings, backend) == exported
    assert verify_store(settings, backend).ok


def test_incremental_sync_equals_rebuild(settings: Settings, backend: str) -> None:
    built = build_store(settings)
    sync_store(settings, backend=backend)
    staging = StagingStore.open(settings.staging_db)
    run = staging.start_run("extract", {}, "test", "user-a", "asst")
    with transaction(staging.db):
        new = add_concept(staging, run.id, "user-a", "new", "Ownership")
        add_evidence(staging, run.id, "user-a", new, built.messages["m4"], "Ownership")
        staging.db.execute("UPDATE concepts SET title = ? WHERE id = ?",
                           [HOSTILE + " v2", built.concepts["hostile"]])
        staging.db.execute("DELETE FROM concept_links WHERE kind = 'split_into'")
    staging.close()
    drift = verify_store(settings, backend)
    assert {d.kind for d in drift.drift} == {"Concept", "EVIDENCE_FOR", "SPLIT_INTO"}
    report = sync_store(settings, backend=backend)
    assert report.written["Concept"] == 2 and report.written["EVIDENCE_FOR"] == 1
    assert report.deleted["SPLIT_INTO"] == 1 and report.written["Message"] == 0
    incremental = _export(settings, backend)
    sync_store(settings, backend=backend, rebuild=True)
    assert _export(settings, backend) == incremental
    assert verify_store(settings, backend).ok


def test_both_engines_hold_the_same_graph(settings: Settings) -> None:
    require_neo4j(settings)
    build_store(settings)
    sync_store(settings, backend="embedded")
    sync_store(settings, backend="neo4j")
    embedded, neo4j = _export(settings, "embedded"), _export(settings, "neo4j")
    assert embedded == neo4j
    assert sum(len(rows) for rows in embedded.values()) == 42


def test_failed_open_is_recorded(settings: Settings) -> None:
    import pytest

    from graph import GraphUnavailable

    build_store(settings)
    unreachable = settings.model_copy(update={"neo4j_uri": "bolt://127.0.0.1:9"})
    with pytest.raises(GraphUnavailable):
        sync_store(unreachable, backend="neo4j")
    staging = StagingStore.open(settings.staging_db)
    status = staging.db.execute("SELECT status FROM runs WHERE stage = 'sync'").fetchall()
    staging.close()
    assert status == [("failed",)]
