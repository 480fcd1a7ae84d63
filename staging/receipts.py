"""Graph sync receipts: one row per sync, content-free (ids, counts, status, times)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from ontology import stable_id
from staging.db import transaction, utc_now
from staging.staging_store import Run

__all__ = ["SyncReceipt", "finish_receipt", "last_receipt", "start_receipt"]


@dataclass(frozen=True)
class SyncReceipt:
    id: str
    run_id: str
    backend: str
    status: str
    counts: dict[str, Any]
    started_at: str
    finished_at: str | None


def start_receipt(db: sqlite_utils.Database, run: Run, backend: str, target: str) -> str:
    """Record a sync as started; ``counts`` holds the target until the sync finishes."""
    started = utc_now()
    receipt_id = stable_id("sync", run.id, backend, target)
    with transaction(db):
        db.table("sync_receipts").insert({
            "id": receipt_id, "backend": backend, "status": "started",
            "counts": json.dumps({"target": target}), "started_at": started,
            "finished_at": None, **run.provenance("graph.sync").columns(),
        })
    return receipt_id


def finish_receipt(
    db: sqlite_utils.Database, receipt_id: str, status: str, counts: dict[str, Any]
) -> None:
    with transaction(db):
        db.table("sync_receipts").update(receipt_id, {
            "status": status, "finished_at": utc_now(),
            "counts": json.dumps(counts, sort_keys=True),
        })


def last_receipt(
    db: sqlite_utils.Database, backend: str, status: str | None = "completed"
) -> SyncReceipt | None:
    """The newest receipt of a backend (completed ones by default)."""
    sql = "SELECT * FROM sync_receipts WHERE backend = ?"
    params: list[Any] = [backend]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    rows = list(db.query(sql + " ORDER BY started_at DESC, rowid DESC LIMIT 1", params))
    if not rows:
        return None
    r = rows[0]
    return SyncReceipt(r["id"], r["run_id"], r["backend"], r["status"], json.loads(r["counts"]),
                       r["started_at"], r["finished_at"])
