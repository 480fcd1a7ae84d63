"""`forget` reaches Neo4j too: no node or relationship property holds the deleted text."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))

from builders import require_neo4j
from residue import deleted_fragments, file_residues, neo4j_residues

from graph import open_graph
from pipeline.forget import GraphNotForgotten, Selector, forget
from pipeline.health import diagnose
from pipeline.settings import Settings
from pipeline.sync import sync_store

GONE = "f02673a5-67f8-5485-b658-9b9e67f0a8e6"

pytestmark = pytest.mark.neo4j


def test_forget_leaves_nothing_in_neo4j_or_the_embedded_graph(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    require_neo4j(settings)
    sync_store(settings, backend="neo4j")
    graph = open_graph(settings, "neo4j")
    try:
        before = deleted_fragments(sample_store.store, GONE, None)
        assert neo4j_residues(graph, before)  # the text really was in Neo4j
    finally:
        graph.close()
    report = forget(settings, Selector(conversation=GONE))
    assert report.graphs == {"embedded": "committed", "neo4j": "committed"}
    fragments = deleted_fragments(sample_store.store, GONE, settings.store)
    graph = open_graph(settings, "neo4j")
    try:
        assert neo4j_residues(graph, fragments) == []
    finally:
        graph.close()
    assert file_residues(settings.store, fragments) == {}
    assert diagnose(settings).state == "healthy"  # both backends verify against SQLite


def test_an_unreachable_backend_fails_forget_loudly_and_doctor_says_so(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    require_neo4j(settings)
    sync_store(settings, backend="neo4j")
    down = settings.model_copy(update={"neo4j_uri": "bolt://127.0.0.1:9"})
    with pytest.raises(GraphNotForgotten) as failed:
        forget(down, Selector(conversation=GONE))
    assert failed.value.backends == ["neo4j"] and "sync --rebuild" in str(failed.value.hint)
    assert file_residues(settings.store, deleted_fragments(sample_store.store, GONE,
                                                           settings.store)) == {}
    report = diagnose(settings)  # Neo4j is reachable again: the old rows are still there
    assert report.state == "stale"
    assert "deleted_still_visible" in {f.reason for f in report.findings}
    assert diagnose(down).state == "unverified"  # cannot be checked at all
