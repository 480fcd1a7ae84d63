"""The LLM call log: every attempt recorded, committed on its own, safe across threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from staging import StagingStore
from staging.llm_log import (
    Capability,
    LLMCallLog,
    LLMCallRecord,
    llm_call_counts,
    llm_capabilities,
)


@pytest.fixture
def staging(tmp_path: Path) -> Iterator[StagingStore]:
    store = StagingStore.open(tmp_path / "staging.db")
    yield store
    store.close()


def record(**overrides: Any) -> LLMCallRecord:
    fields: dict[str, Any] = dict(
        segment_id="seg_1", schema_name="ExtractionResult", schema_hash="abc", model="m",
        base_url_host="127.0.0.1:9", prompt_hash="p", attempt=1,
        request={"messages": [{"role": "user", "content": "héllo"}]}, reply='{"mentions": []}',
        prompt_tokens=10, completion_tokens=3, tokens_estimated=False, latency_ms=12.5,
        status="ok",
    )
    fields.update(overrides)
    return LLMCallRecord(**fields)


def test_record_writes_every_column_with_provenance(staging: StagingStore) -> None:
    run = staging.start_run("extract", {}, "t", "user-x", "asst-y")
    with LLMCallLog(staging, run) as log:
        call_id = log.record(record())
        log.record(record(status="invalid", error_class="extra_keys", error_detail="x: extra",
                          attempt=2, tokens_estimated=True))
    row = next(staging.db.query("SELECT * FROM llm_calls WHERE id = ?", [call_id]))
    assert row["request"] == '{"messages": [{"content": "héllo", "role": "user"}]}'
    assert (row["run_id"], row["user_scope"], row["assistant_scope"], row["writer"]) == (
        run.id, "user-x", "asst-y", "llm-client")
    assert row["written_at"] and row["tokens_estimated"] == 0 and row["latency_ms"] == 12.5
    counts = llm_call_counts(staging, run.id)
    assert counts["calls"] == 2 and counts["status:ok"] == 1 and counts["class:extra_keys"] == 1
    assert counts["prompt_tokens"] == 20 and counts["completion_tokens"] == 6
    assert llm_call_counts(staging, "other-run") == {}


def test_a_call_stays_on_record_when_the_stage_rolls_back(staging: StagingStore) -> None:
    log = LLMCallLog(staging, staging.start_run("extract", {}, "t", "u", "a"))
    conn = staging.db.conn
    conn.execute("BEGIN IMMEDIATE")  # the stage holds the write lock...
    conn.execute("UPDATE runs SET status = 'x'")
    worker = threading.Thread(target=log.record, args=(record(),))
    worker.start()
    worker.join(timeout=0.3)
    assert worker.is_alive()  # ...so the log waits for it rather than joining its transaction
    conn.execute("ROLLBACK")
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert staging.count("llm_calls") == 1
    assert staging.count("runs", "status = 'x'") == 0
    log.close()


def test_concurrent_records_are_all_kept(staging: StagingStore) -> None:
    log = LLMCallLog(staging, staging.start_run("extract", {}, "t", "u", "a"))

    def work(n: int) -> None:
        for i in range(25):
            log.record(record(segment_id=f"seg_{n}_{i}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert staging.count("llm_calls") == 200
    assert len({r["id"] for r in staging.db.query("SELECT id FROM llm_calls")}) == 200
    log.close()


def test_in_memory_store_shares_its_connection() -> None:
    store = StagingStore.open(":memory:")
    log = LLMCallLog(store, store.start_run("extract", {}, "t", "u", "a"))
    log.record(record())
    assert log.db is store.db and store.count("llm_calls") == 1
    log.close()
    assert store.count("llm_calls") == 1  # closing the log leaves the store's connection open


def test_capabilities_are_replaced_per_endpoint_and_model(staging: StagingStore) -> None:
    run = staging.start_run("extract", {}, "t", "u", "a")
    with LLMCallLog(staging, run) as log:
        assert log.capability("h:1", "m") is None
        log.remember_capability(Capability("h:1", "m", "json_object_schema", False, "HTTP 500"))
        log.remember_capability(Capability("h:1", "m", "json_object_schema", True, "HTTP 500"))
        log.remember_capability(Capability("h:2", "m", "json_schema", True, None))
        assert log.capability("h:1", "m") == Capability(
            "h:1", "m", "json_object_schema", True, "HTTP 500")
        log.record(record(structured_output="json_object_schema"))
    assert [cap.base_url_host for cap in llm_capabilities(staging)] == ["h:1", "h:2"]
    row = staging.db.execute("SELECT run_id, writer FROM llm_capabilities").fetchone()
    assert tuple(row) == (run.id, "llm-client")
    [step] = staging.db.execute("SELECT structured_output FROM llm_calls").fetchone()
    assert step == "json_object_schema"


def test_a_store_made_before_the_ladder_gains_it(tmp_path: Path) -> None:
    from staging.db import apply_migrations, open_database
    from staging.staging_schema import STAGING_MIGRATIONS

    db = open_database(tmp_path / "old.db")
    apply_migrations(db, STAGING_MIGRATIONS[:1])
    db.conn.close()
    store = StagingStore.open(tmp_path / "old.db")
    try:
        columns = {c.name for c in store.db.table("llm_calls").columns}
        assert "structured_output" in columns and store.db.table("llm_capabilities").exists()
    finally:
        store.close()
