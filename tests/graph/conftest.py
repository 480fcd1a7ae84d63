"""Graph fixtures: every contract test runs on the embedded engine and on Neo4j.

Neo4j is reached at settings.neo4j_uri (NEO4J_URI, default bolt://127.0.0.1:7687; start one
with ``bash .ci/neo4j.sh start``). When it is unreachable its tests are skipped with the
reason shown, except with ``CI=true``, where an unreachable Neo4j fails them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # makes `import builders` work

from builders import Built, build_store, require_neo4j

from graph import GraphStore, open_graph
from pipeline.settings import Settings
from pipeline.sync import sync_store

BACKENDS = ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, settings: Settings) -> str:
    """A backend name with an empty graph behind ``settings``."""
    name: str = request.param
    if name == "neo4j":
        require_neo4j(settings)
    return name


@pytest.fixture(scope="module", params=BACKENDS)
def synced(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[GraphStore, Built]]:
    """The builder's store synced once per module and backend; for read-only tests."""
    settings = Settings(store=tmp_path_factory.mktemp("graph") / "store")
    if request.param == "neo4j":
        require_neo4j(settings)
    built = build_store(settings)
    sync_store(settings, backend=request.param)
    graph = open_graph(settings, request.param)
    yield graph, built
    graph.close()
