"""The bundled sample's `conceptmem run` gardens into >= 2 topics, visible in the graph too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from graph import open_graph
from pipeline.cli.app import main

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.mark.slow
def test_sample_run_yields_topics_in_staging_and_graph(settings, monkeypatch):
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    exports = sorted(SAMPLE.glob("*_conversations.json"))
    assert main(["--store", str(settings.store), "run", *map(str, exports)]) == 0
    staging = sqlite3.connect(settings.staging_db)
    topics = staging.execute("SELECT COUNT(*) FROM topics WHERE active = 1").fetchone()[0]
    members = staging.execute(
        "SELECT COUNT(*) FROM topic_memberships WHERE active = 1").fetchone()[0]
    assert topics >= 2 and members >= topics
    assert staging.execute(
        "SELECT COUNT(*) FROM gardener_plans WHERE status = 'applied' AND step = 'topics'"
    ).fetchone()[0] == 1
    graph = open_graph(settings)
    try:
        counts = graph.counts()
    finally:
        graph.close()
    assert counts["Topic"] == topics and counts["BELONGS_TO"] == members
