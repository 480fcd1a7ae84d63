"""Search obeys the write policy: expired messages are never returned, and a search leaves a
content-free read receipt naming the revisions it used."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pipeline.extract import extract_store
from pipeline.ingest import ingest_paths
from pipeline.retrieval import Searcher, SearchRequest
from pipeline.retrieval.searcher import ROUTES
from pipeline.run import RunOptions, run_pipeline
from pipeline.settings import Settings
from staging import StagingStore
from staging.receipts import read_receipts

LINES = [
    ("c1", "My api key for the zeppelin hangar portal is sk-abcdefghijklmnop1234."),
    ("c2", "The zeppelin hangar portal needs a new roof before winter."),
]


def _store(tmp_path: Path, **policy: object) -> Settings:
    tmp_path.mkdir(parents=True, exist_ok=True)
    export = tmp_path / "export.jsonl"
    export.write_text("".join(
        json.dumps({"conversation_id": cid, "id": f"{cid}-1", "role": "user", "content": text,
                    "timestamp": f"2024-06-0{i + 1}T09:00:00Z"}) + "\n"
        for i, (cid, text) in enumerate(LINES)))
    settings = Settings(store=tmp_path / "store", embedder="hashing", **policy)
    if policy:  # the stages one by one: `run` would compact the expired rows at its end
        ingest_paths(settings, [export])
        extract_store(settings, offline=True)
    else:
        run_pipeline(settings, RunOptions((export,), "jsonl", True))
    return settings


def _found(settings: Settings, route: str) -> set[str]:
    with Searcher(settings, receipts=False) as searcher:
        return {r.external_id for r in searcher.search(
            SearchRequest("zeppelin hangar portal api key", 10), route)}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Settings]:
    root = tmp_path_factory.mktemp("policy-gate")
    return _store(root / "kept"), _store(root / "expiring", retention_days={"restricted": 0})


@pytest.mark.parametrize("route", ROUTES)
def test_expired_messages_are_never_returned(stores: tuple[Settings, Settings],
                                             route: str) -> None:
    kept, expiring = stores
    assert _found(kept, route) == {"c1-1", "c2-1"}  # without retention both answer
    # the restricted message expired at once; it is still stored (not compacted yet), never shown
    assert _count(expiring, "SELECT COUNT(*) FROM messages WHERE external_id = 'c1-1'") == 1
    assert _found(expiring, route) == {"c2-1"}


def _count(settings: Settings, sql: str) -> int:
    conn = sqlite3.connect(settings.source_db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_a_search_leaves_a_content_free_read_receipt(tmp_path: Path) -> None:
    settings = _store(tmp_path)
    with Searcher(settings) as searcher:
        results = searcher.search(SearchRequest("zeppelin hangar roof", 3), "memory")
    staging = StagingStore.open(settings.staging_db)
    try:
        receipts = read_receipts(staging.db, stage="search")
    finally:
        staging.close()
    assert len(receipts) == 1
    depends = json.loads(receipts[0]["depends_on_version"])
    assert {r.message_id for r in results} <= set(depends) | {
        k.split(":", 1)[-1] for k in depends}
    blob = json.dumps(receipts[0])
    assert all(text[:20] not in blob for _, text in LINES)
