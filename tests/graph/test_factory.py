"""open_graph: backend choice, missing packages and unreachable servers as errors for people."""

from __future__ import annotations

import sys

import pytest

from graph import GraphError, GraphStore, GraphUnavailable, open_graph
from pipeline.settings import Settings


def test_embedded_is_the_default_and_satisfies_the_protocol(settings: Settings) -> None:
    graph = open_graph(settings)
    try:
        assert isinstance(graph, GraphStore)
        assert graph.backend == "embedded" and graph.target == str(settings.graph_path)
        assert set(graph.counts().values()) == {0}
    finally:
        graph.close()
    assert settings.graph_path.exists()


def test_unknown_backend(settings: Settings) -> None:
    with pytest.raises(GraphError, match="unknown graph backend") as info:
        open_graph(settings, "sqlite")
    assert info.value.hint is not None and "embedded" in info.value.hint


@pytest.mark.parametrize(
    ("backend", "module", "command"),
    [("embedded", "ladybug", "pip install --force-reinstall conceptmem"),
     ("neo4j", "neo4j", "pip install 'conceptmem[neo4j]'")],
)
def test_missing_package_names_the_install_command(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, backend: str, module: str, command: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` fail
    with pytest.raises(GraphUnavailable) as info:
        open_graph(settings, backend)
    assert info.value.hint is not None and command in info.value.hint


def test_unreachable_neo4j_says_how_to_start_it(settings: Settings) -> None:
    unreachable = settings.model_copy(update={"neo4j_uri": "bolt://127.0.0.1:9"})
    with pytest.raises(GraphUnavailable, match="cannot reach Neo4j") as info:
        open_graph(unreachable, "neo4j")
    assert info.value.hint is not None and ".ci/neo4j.sh start" in info.value.hint
