"""Content-free lineage receipts at every stage boundary (seed 000)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline import lineage
from pipeline.health import diagnose
from pipeline.settings import Settings
from staging import StagingStore
from staging.receipts import (
    RECEIPT_STATUSES,
    Receipt,
    ReceiptNotContentFree,
    check_content_free,
    read_receipts,
    record_receipt,
)

_TOKEN_LIKE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+@/=-]{0,127}$")
FIELDS = ("run_id", "user_scope", "assistant_scope", "stage", "target", "version",
          "source_version", "status", "at_utc")


def _receipts(settings: Settings) -> list[dict[str, object]]:
    rows = []
    for path in (settings.source_db, settings.staging_db):  # ingest: source.db; others: staging
        conn = sqlite3.connect(path)
        conn.row_factory = sqlite3.Row
        try:
            rows += [dict(r) for r in conn.execute("SELECT * FROM receipts ORDER BY rowid")]
        finally:
            conn.close()
    return rows


def _store_texts(settings: Settings) -> set[str]:
    """Every text the store holds: messages, titles, quotes, descriptions, aliases, labels."""
    texts: set[str] = set()
    queries = {
        settings.source_db: ["SELECT text FROM messages", "SELECT title FROM conversations",
                             "SELECT parts FROM messages"],
        settings.staging_db: ["SELECT quote FROM evidence", "SELECT title FROM concepts",
                              "SELECT description FROM concepts", "SELECT quote FROM mentions",
                              "SELECT title FROM mentions", "SELECT label FROM topics",
                              "SELECT keywords FROM topics", "SELECT aliases FROM concepts"],
    }
    for path, sqls in queries.items():
        conn = sqlite3.connect(path)
        try:
            for sql in sqls:
                for (value,) in conn.execute(sql):
                    if value:
                        texts.add(str(value))
                        if str(value).startswith("["):
                            texts.update(str(v) for v in json.loads(value) if isinstance(v, str))
        finally:
            conn.close()
    return {t.strip() for t in texts if len(t.strip()) >= 4}


def test_every_stage_boundary_has_receipts(sample_store: Settings) -> None:
    rows = _receipts(sample_store)
    stages = {(r["stage"], r["status"]) for r in rows}
    for stage in ("ingest", "segment", "extract", "map", "garden", "sync"):
        assert any(s == stage and status == "committed" for s, status in stages), stage
    for stage in ("extract", "garden", "sync"):  # ingest commits one transaction per file
        assert (stage, "started") in stages, stage
    assert {r["status"] for r in rows} <= set(RECEIPT_STATUSES)
    for row in rows:
        assert all(row[name] for name in FIELDS), row
        assert "+" in str(row["source_version"])  # code version + config hash
    staging = StagingStore.open(sample_store.staging_db)
    try:  # one extract and one map receipt per extracted segment
        segments = staging.count("segments", "status = 'extracted'")
        assert sum(1 for r in rows if r["stage"] == "map") == segments
        run_ids = {r[0] for r in staging.db.execute("SELECT id FROM runs")}
    finally:
        staging.close()
    assert {r["run_id"] for r in rows if r["stage"] not in ("ingest", "lineage")} <= run_ids


def test_no_receipt_contains_any_text_of_the_store(sample_store: Settings) -> None:
    rows = _receipts(sample_store)
    texts = _store_texts(sample_store)
    assert len(texts) > 300  # the sample really has texts to leak
    # every value except the two enums (a concept may well be titled "started")
    blob = "\n".join(str(v) for r in rows for k, v in r.items() if k not in ("stage", "status"))
    leaked = [t for t in texts if t in blob]
    assert leaked == []
    # and the other way round: no receipt value (ids, hashes) occurs in a stored text
    values = {str(r[k]) for r in rows for k in ("run_id", "target", "version")}
    assert not [v for v in values for t in texts if v in t]


def test_a_receipt_carrying_text_is_rejected(sample_store: Settings, tmp_path) -> None:
    staging = StagingStore.open(tmp_path / "staging.db")
    try:
        good = Receipt("run_1", "u", "a", "search", "c_1", "rev:3", "0.1.0+cfg_1", "committed",
                       depends_on_version={"c_1": "3"})
        record_receipt(staging.db, good)
        for bad in (
            Receipt("run_1", "u", "a", "search", "c_1", "I moved to Lisbon", "v", "committed"),
            Receipt("run_1", "u", "a", "search", "c_1", "v1", "v", "done"),
            Receipt("run_1", "u", "a", "search", "c_1", "v1", "v", "committed",
                    depends_on_version={"c_1": "my secret title"}),
        ):
            with pytest.raises(ReceiptNotContentFree):
                record_receipt(staging.db, bad)
        assert staging.count("receipts") == 1
    finally:
        staging.close()


def test_a_lineage_read_records_the_versions_it_depended_on(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    staging = StagingStore.open(settings.staging_db)
    try:
        concept, revisions = staging.db.execute(
            "SELECT c.id, c.revision_count FROM concepts c JOIN evidence e ON e.concept_id ="
            " c.id WHERE c.merged_into IS NULL GROUP BY c.id ORDER BY c.id LIMIT 1").fetchone()
    finally:
        staging.close()
    rows = lineage.concept_evidence(settings, concept)
    staging = StagingStore.open(settings.staging_db)
    try:
        (read,) = read_receipts(staging.db, stage="lineage")
        depends = json.loads(read["depends_on_version"])
        assert depends[concept] == f"rev:{revisions}"
        assert {r.message_id for r in rows} <= set(depends)
        assert all(v.startswith("text_") for k, v in depends.items() if k != concept)
        assert diagnose(settings, graph=False).state == "healthy"
        record_receipt(staging.db, Receipt("read_1", "default-user", "default-assistant",
                                           "search", "q_1", "v1", "0.1.0+x", "committed"))
    finally:
        staging.close()
    report = diagnose(settings, graph=False)  # a result with no dependency receipt
    assert report.state == "unverified"
    assert {f.reason for f in report.findings} == {"result_without_dependency_versions"}


@given(st.text(min_size=1, max_size=60).filter(lambda t: not _TOKEN_LIKE.match(t)))
def test_any_value_that_is_not_token_shaped_is_refused(value: str) -> None:
    receipt = Receipt("run_1", "u", "a", "search", "c_1", value, "0.1.0+cfg", "committed")
    with pytest.raises(ReceiptNotContentFree):
        check_content_free(receipt)
