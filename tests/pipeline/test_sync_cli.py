"""`conceptmem sync / verify / lineage / cypher` on a real store and the embedded graph."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))

from builders import HOSTILE, build_store

from pipeline.cli.app import main
from pipeline.settings import Settings
from staging import SourceStore, StagingStore


def cli(settings: Settings, *args: str) -> int:
    # read paths show only the reader's scope: read as the builder's user and assistant
    return main(["--store", str(settings.store), "--user-scope", "user-a",
                 "--assistant-scope", "asst", *args])


@pytest.fixture
def synced_store(settings: Settings) -> object:
    built = build_store(settings)
    assert cli(settings, "sync") == 0
    return built


def test_lineage_concept_json_quotes_are_verbatim(
    settings: Settings, synced_store: object, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    concept_id = synced_store.concepts["hostile"]  # type: ignore[attr-defined]
    assert cli(settings, "lineage", "concept", concept_id, "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    source = SourceStore.open(settings.source_db)
    texts = source.get_messages(r["message_id"] for r in rows)
    source.close()
    assert len(rows) == 1
    for row in rows:
        assert set(row) >= {"quote", "start", "end", "message_id", "conversation_id",
                            "created_at", "role"}
        assert texts[row["message_id"]].text[row["start"] : row["end"]] == row["quote"] == HOSTILE
        assert texts[row["message_id"]].conversation_id == row["conversation_id"]


def test_verify_reports_drift_then_sync_repairs(
    settings: Settings, synced_store: object, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(settings, "verify", "--json") == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["ok"] is True
    staging = StagingStore.open(settings.staging_db)
    staging.db.execute("UPDATE concepts SET state = 'archived'")
    staging.close()
    assert cli(settings, "verify", "--json") == 1
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [d["kind"] for d in report["drift"]] == ["Concept"]
    assert report["drift"][0]["n_changed"] == 4
    assert cli(settings, "sync") == 0
    assert cli(settings, "verify") == 0
    staging = StagingStore.open(settings.staging_db)
    receipts = staging.db.execute(
        "SELECT status, counts FROM sync_receipts ORDER BY started_at"
    ).fetchall()
    staging.close()
    assert [r[0] for r in receipts] == ["completed", "completed"]
    assert json.loads(receipts[-1][1])["written"]["Concept"] == 4


def test_other_lineage_commands(
    settings: Settings, synced_store: object, capsys: pytest.CaptureFixture[str]
) -> None:
    built = synced_store
    m3 = built.messages["m3"].id  # type: ignore[attr-defined]
    rust = built.concepts["rust"]  # type: ignore[attr-defined]
    capsys.readouterr()
    assert cli(settings, "lineage", "message", m3, "--json") == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert cli(settings, "lineage", "window", m3, "-n", "1", "--json") == 0
    assert [w["offset"] for w in json.loads(capsys.readouterr().out)] == [-1, 0, 1]
    assert cli(settings, "lineage", "history", rust, "--json") == 0
    assert len(json.loads(capsys.readouterr().out)["revisions"]) == 2
    assert cli(settings, "lineage", "as-of", "2024-03-15", "--then", "--json") == 0
    assert len(json.loads(capsys.readouterr().out)["relations"]) == 2  # believed back then
    assert cli(settings, "lineage", "as-of", "2024-03-15", "--json") == 0
    assert len(json.loads(capsys.readouterr().out)["relations"]) == 1  # one since retracted


def test_cypher_takes_values_only_as_parameters(
    settings: Settings, synced_store: object, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    query = "MATCH (c:Concept) WHERE c.title = $t RETURN c.title AS title"
    assert cli(settings, "cypher", query, "--param", f"t={HOSTILE}", "--json") == 0
    assert json.loads(capsys.readouterr().out) == [{"title": HOSTILE}]
    assert cli(settings, "cypher", "MATCH (m:Message) WHERE m.position >= $p RETURN count(m) AS n",
               "--param", "p=5", "--json") == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 1}]
    assert cli(settings, "cypher", "RETURN 1", "--param", "no equals sign") == 1
    assert "NAME=VALUE" in capsys.readouterr().err


def test_errors_name_the_record_and_the_next_step(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(settings, "sync") == 1
    assert "conceptmem ingest" in capsys.readouterr().err
    build_store(settings)
    assert cli(settings, "sync") == 0
    capsys.readouterr()
    assert cli(settings, "lineage", "concept", "concept_nope") == 1
    err = capsys.readouterr().err
    assert "concept_nope" in err and "conceptmem sync" in err
    assert cli(settings, "lineage", "as-of", "yesterday-ish") == 1
    assert "ISO-8601" in capsys.readouterr().err


def test_dangling_edges_are_counted_not_projected(
    settings: Settings, synced_store: object, capsys: pytest.CaptureFixture[str]
) -> None:
    staging = StagingStore.open(settings.staging_db)
    staging.db.execute(
        "INSERT INTO segment_messages (segment_id, message_id, position) VALUES (?, ?, 9)",
        [synced_store.segment_id, "msg_not_imported"],  # type: ignore[attr-defined]
    )
    staging.close()
    capsys.readouterr()
    assert cli(settings, "verify", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["dangling"]["CONTAINS_MESSAGE"] == 1
