"""`conceptmem run` ends with a synced embedded graph whose lineage quotes are verbatim."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from graph import open_graph
from pipeline.cli.app import main
from pipeline.lineage import as_json
from pipeline.settings import Settings

DATA = Path(__file__).parent / "data" / "chatgpt_small.json"
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture
def store(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    return settings.store


def _lineage_is_verbatim(store: Path, capsys: pytest.CaptureFixture[str]) -> int:
    """Every concept's evidence through the Python API; the first few also through the CLI."""
    source = sqlite3.connect(store / "source.db")
    texts = dict(source.execute("SELECT id, text FROM messages").fetchall())
    roles = dict(source.execute("SELECT id, role FROM messages").fetchall())
    staging = sqlite3.connect(store / "staging.db")
    concepts = [r[0] for r in staging.execute("SELECT DISTINCT concept_id FROM evidence")]
    assert concepts
    graph = open_graph(Settings(store=store))
    try:
        rows = [as_json(row) for c in concepts for row in graph.evidence_for_concept(c)]
    finally:
        graph.close()
    for concept_id in concepts[:3]:
        capsys.readouterr()
        assert main(["--store", str(store), "lineage", "concept", concept_id, "--json"]) == 0
        cli_rows = json.loads(capsys.readouterr().out)
        assert cli_rows and cli_rows == [r for r in rows if r["concept_id"] == concept_id]
    for row in rows:
        assert texts[row["message_id"]][row["start"] : row["end"]] == row["quote"]
        assert roles[row["message_id"]] == row["role"]
        assert row["conversation_id"] and row["created_at"]
    return len(rows)


def test_run_ends_with_a_synced_graph(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(store), "run", str(DATA)]) == 0
    assert "sync" in capsys.readouterr().err
    assert (store / "graph.lbug").exists()
    assert main(["--store", str(store), "verify"]) == 0
    evidence = sqlite3.connect(store / "staging.db").execute("SELECT COUNT(*) FROM evidence")
    assert _lineage_is_verbatim(store, capsys) == evidence.fetchone()[0]


def test_bundled_sample_lineage_is_verbatim(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exports = sorted(SAMPLE.glob("*_conversations.json"))
    assert exports, "the bundled sample is missing"
    for args in (["ingest", *map(str, exports)], ["extract"], ["sync"]):
        assert main(["--store", str(store), *args]) == 0
    assert _lineage_is_verbatim(store, capsys) >= 50
