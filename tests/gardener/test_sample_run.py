"""The bundled sample's `conceptmem run` gardens into >= 2 topics, visible in both graph engines."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path

import pytest

from graph import open_graph
from pipeline.cli.app import main
from pipeline.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


def _require_neo4j(settings: Settings) -> None:
    path = ROOT / "tests" / "graph" / "builders.py"
    spec = importlib.util.spec_from_file_location("graph_builders", path)
    assert spec is not None and spec.loader is not None
    builders = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("graph_builders", builders)  # dataclasses look their module up
    spec.loader.exec_module(builders)
    builders.require_neo4j(settings)  # skips (or fails under CI=true) when unreachable


@pytest.mark.slow
@pytest.mark.neo4j
def test_sample_run_yields_topics_in_staging_and_both_graphs(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    exports = sorted(SAMPLE.glob("*_conversations.json"))
    assert main(["--store", str(settings.store), "run", *map(str, exports)]) == 0
    staging = sqlite3.connect(settings.staging_db)
    topics = staging.execute("SELECT COUNT(*) FROM topics WHERE active = 1").fetchone()[0]
    members = staging.execute(
        "SELECT COUNT(*) FROM topic_memberships WHERE active = 1").fetchone()[0]
    assert topics >= 2 and members >= topics
    parents = staging.execute("SELECT COUNT(*) FROM parent_topics").fetchone()[0]
    children = staging.execute(
        "SELECT COUNT(*) FROM topics WHERE parent_id IS NOT NULL").fetchone()[0]
    assert children >= 2 * parents  # a parent topic groups two topics or more
    assert staging.execute(
        "SELECT COUNT(*) FROM gardener_plans WHERE status = 'applied' AND step = 'topics'"
    ).fetchone()[0] == 1

    _require_neo4j(settings)
    assert main(["--store", str(settings.store), "sync", "--backend", "neo4j"]) == 0
    for backend in ("embedded", "neo4j"):
        graph = open_graph(settings, backend)
        try:
            counts = graph.counts()
        finally:
            graph.close()
        assert (counts["Topic"], counts["BELONGS_TO"], counts["SUBTOPIC_OF"]) == (
            topics + parents, members, children), backend
