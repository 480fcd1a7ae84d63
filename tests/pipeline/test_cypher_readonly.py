"""Issue 11, class 4: `cypher` cannot forge the projection, and `verify` sees a forgery."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))

from builders import build_store, require_neo4j

from graph import GraphError, open_graph
from graph.ladybug_backend import LadybugGraph
from graph.readonly import write_clauses
from pipeline.cli.app import main
from pipeline.settings import Settings


def _cli(settings: Settings, *args: str) -> int:
    return main(["--store", str(settings.store), *args])


@pytest.fixture
def synced(settings: Settings, capsys: pytest.CaptureFixture[str]) -> Settings:
    build_store(settings)
    assert _cli(settings, "sync") == 0
    capsys.readouterr()
    return settings


def _quotes(settings: Settings, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert _cli(settings, "cypher", "MATCH ()-[e:EVIDENCE_FOR]->() RETURN e.quote AS q "
                "ORDER BY q", "--json") == 0
    return [row["q"] for row in json.loads(capsys.readouterr().out)]


WRITES = [
    "MATCH ()-[e:EVIDENCE_FOR]->() SET e.quote = 'forged'",
    "MATCH (n) DETACH DELETE n",
    "MATCH (c:Concept) REMOVE c.title",
    "CREATE (:Topic {id: 'x'})",
    "MATCH (c:Concept) MERGE (c)-[:RELATES {id: 'r'}]->(c)",
    "COPY (MATCH (c:Concept) RETURN c.title) TO '{out}'",
    "LOAD FROM '{out}' RETURN *",
    "match (c:Concept) /* sneaky */ set c.title = 'x'",
]


def test_writes_are_refused_and_change_nothing(
    synced: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _quotes(synced, capsys)
    out = tmp_path / "leak.csv"
    for query in WRITES:
        assert _cli(synced, "cypher", query.replace("{out}", str(out))) == 1, query
        err = capsys.readouterr().err
        assert "cypher is read-only: the query uses" in err and "conceptmem sync" in err
    assert not out.exists()
    assert _quotes(synced, capsys) == before
    assert _cli(synced, "verify") == 0


def test_write_flag_is_refused_on_the_embedded_graph(
    synced: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(synced, "cypher", "MATCH ()-[e:EVIDENCE_FOR]->() SET e.quote = 'x'",
                "--write") == 1
    assert "refused on the embedded graph" in capsys.readouterr().err
    assert "x" not in _quotes(synced, capsys)


def test_reads_that_mention_write_words_in_values_still_run(
    synced: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(synced, "cypher", "MATCH (c:Concept) WHERE c.title <> 'SET x; DELETE' "
                "RETURN count(c) AS `delete`, $p AS p", "--param", "p=CREATE", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["p"] == "CREATE" and rows[0]["delete"] > 0


def test_write_clauses_skips_strings_comments_names_and_properties() -> None:
    assert write_clauses("MATCH (n) WHERE n.set = 'DELETE' // CREATE\nRETURN n.`merge`") == []
    assert write_clauses("MATCH (n) DETACH DELETE n") == ["DETACH", "DELETE"]
    assert write_clauses("call { create (x) } in transactions") == ["CREATE"]
    assert write_clauses("RETURN 'unterminated ; SET") == []


def test_verify_compares_content_so_a_forged_quote_is_drift(
    synced: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = LadybugGraph(synced.graph_path)  # forging it behind the pipeline's back
    try:
        forged = graph.run_cypher("MATCH ()-[e:EVIDENCE_FOR]->() SET e.quote = 'forged' "
                                  "RETURN count(e) AS n")[0]["n"]
    finally:
        graph.close()
    assert forged > 0
    assert _cli(synced, "verify", "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"]
    assert [(d["kind"], d["n_changed"]) for d in report["drift"]] == [("EVIDENCE_FOR", forged)]
    assert _cli(synced, "verify") == 1
    assert "sync --rebuild" in capsys.readouterr().err
    assert _cli(synced, "sync", "--rebuild") == 0
    assert _cli(synced, "verify") == 0
    assert "in sync" in capsys.readouterr().out
    assert "forged" not in _quotes(synced, capsys)


@pytest.mark.neo4j
def test_neo4j_reads_in_read_mode_and_writes_only_with_the_flag(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    require_neo4j(settings)
    build_store(settings)
    assert _cli(settings, "sync", "--backend", "neo4j") == 0
    reader = open_graph(settings, "neo4j", read_only=True)
    try:  # the engine refuses too, whatever the query text looks like
        with pytest.raises(GraphError, match="read access mode"):
            reader.run_cypher("CREATE (:Topic {id: 'probe'})")
    finally:
        reader.close()
    capsys.readouterr()
    assert _cli(settings, "cypher", "MATCH (t:Topic) SET t.label = 'x'", "--backend",
                "neo4j") == 1
    assert "pass --write to write to Neo4j anyway" in capsys.readouterr().err
    assert _cli(settings, "verify", "--backend", "neo4j") == 0
    capsys.readouterr()
    assert _cli(settings, "cypher", "MATCH (t:Topic) SET t.label = 'x' RETURN count(t) AS n",
                "--backend", "neo4j", "--write", "--json") == 0
    assert json.loads(capsys.readouterr().out)[0]["n"] > 0
    assert _cli(settings, "verify", "--backend", "neo4j") == 1  # the write shows as drift
