"""Receipts: graph sync receipts, and content-free lineage receipts at every stage boundary.

A lineage receipt (seed 000) carries only stable ids, scopes, versions (content hashes or
revisions), the code+config version, a status and a time; retrieval adds the versions it
depended on. :func:`check_content_free` enforces that shape, so no message text, quote, title
or embedding can ever be written into one (every value must look like an id, a hash, a version,
an enum or a timestamp).
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlite_utils

from ontology import stable_id
from staging.db import transaction, utc_now
from staging.errors import StagingError

if TYPE_CHECKING:
    from staging.staging_store import Run

__all__ = [
    "RECEIPT_STAGES",
    "RECEIPT_STATUSES",
    "Receipt",
    "ReceiptNotContentFree",
    "SyncReceipt",
    "check_content_free",
    "finish_receipt",
    "last_receipt",
    "read_receipts",
    "record_receipt",
    "run_receipt",
    "source_version",
    "stage_receipt",
    "start_receipt",
    "unit_receipts",
    "worker_id",
]

RECEIPT_STAGES = ("ingest", "segment", "extract", "map", "garden", "sync", "verify", "search",
                  "lineage", "forget", "redact", "run")
RECEIPT_STATUSES = ("started", "waiting", "committed", "verified", "failed")

# An id, a hash, a version, a scope name or a timestamp: no spaces, bounded, a small alphabet.
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+@/=-]{0,127}$")


class ReceiptNotContentFree(StagingError):
    """A receipt value does not look like an id, hash, version or enum (it may carry text)."""

    def __init__(self, name: str) -> None:
        self.field = name
        super().__init__(
            f"receipt field {name!r} is not an id, hash, version, enum or timestamp",
            "pass a stable id or a content hash (stable_id(...)), never text",
        )


@dataclass(frozen=True)
class Receipt:
    """One transition of one unit across one stage boundary."""

    run_id: str
    user_scope: str
    assistant_scope: str
    stage: str
    target: str
    version: str
    source_version: str
    status: str
    at_utc: str = field(default_factory=utc_now)
    depends_on_version: Mapping[str, str] | None = None
    worker: str | None = None
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return stable_id("rcpt", self.run_id, self.stage, self.target, self.version,
                         self.status, self.at_utc)

    def row(self) -> dict[str, Any]:
        return {
            "id": self.id, "run_id": self.run_id, "user_scope": self.user_scope,
            "assistant_scope": self.assistant_scope, "stage": self.stage,
            "target": self.target, "version": self.version,
            "source_version": self.source_version, "status": self.status,
            "at_utc": self.at_utc,
            "depends_on_version": (None if self.depends_on_version is None
                                   else json.dumps(dict(self.depends_on_version),
                                                   sort_keys=True)),
            "worker": self.worker,
            "counts": json.dumps(dict(self.counts), sort_keys=True),
        }


def check_content_free(receipt: Receipt) -> None:
    """Raise :class:`ReceiptNotContentFree` unless every value has the shape of a token."""
    if receipt.stage not in RECEIPT_STAGES:
        raise ReceiptNotContentFree("stage")
    if receipt.status not in RECEIPT_STATUSES:
        raise ReceiptNotContentFree("status")
    for name in ("user_scope", "assistant_scope"):  # configuration, not content
        value = str(getattr(receipt, name))
        if not value or len(value) > 128 or any(ord(c) < 32 for c in value):
            raise ReceiptNotContentFree(name)
    for name in ("run_id", "target", "version", "source_version", "at_utc"):
        if not _TOKEN.match(str(getattr(receipt, name))):
            raise ReceiptNotContentFree(name)
    if receipt.worker is not None and not _TOKEN.match(receipt.worker):
        raise ReceiptNotContentFree("worker")
    for key, value in (receipt.depends_on_version or {}).items():
        if not (_TOKEN.match(key) and _TOKEN.match(str(value))):
            raise ReceiptNotContentFree("depends_on_version")
    for key, count in receipt.counts.items():
        if not (_TOKEN.match(key) and isinstance(count, int)):
            raise ReceiptNotContentFree("counts")


def worker_id() -> str:
    """``host:pid`` of this process (so `doctor` can tell a live run from a killed one)."""
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname())[:64] or "host"
    return f"{host}:{os.getpid()}"


def source_version(code_version: str, config_hash: str) -> str:
    return f"{code_version}+{config_hash}"


def record_receipt(db: sqlite_utils.Database, receipt: Receipt) -> str:
    """Check and store one receipt (inside the caller's transaction when there is one)."""
    check_content_free(receipt)
    with transaction(db):
        db.table("receipts").insert(receipt.row(), replace=True)
    return receipt.id


def run_receipt(
    db: sqlite_utils.Database, run: Run, status: str, *, stage: str | None = None,
    target: str | None = None, version: str | None = None,
    counts: Mapping[str, int] | None = None,
    depends_on: Mapping[str, str] | None = None,
) -> str:
    """A receipt of ``run`` (defaults: the run's own stage, the run id as target and version)."""
    row = db.execute("SELECT code_version, config_hash FROM runs WHERE id = ?",
                     [run.id]).fetchone()
    version_of_code = source_version(*row) if row else "unknown"
    return record_receipt(db, Receipt(
        run_id=run.id, user_scope=run.user_scope, assistant_scope=run.assistant_scope,
        stage=stage or _stage_of(run.stage), target=target or run.id,
        version=version or run.id, source_version=version_of_code, status=status,
        depends_on_version=depends_on, worker=worker_id(), counts=dict(counts or {}),
    ))


def stage_receipt(
    db: sqlite_utils.Database, run: Run, stage: str, target: str, outcome: Any
) -> str:
    """The receipt of one unit at one stage boundary of ``run`` (inside its transaction).

    ``outcome`` is what the stage produced: None (the unit failed), a pydantic model (its
    JSON is hashed into the version), a mapping tally (``actions``/``evidence``/``relations``
    counts), or, for ``segment``, None: the version is the hash of every stored segment id.
    """
    if stage == "segment":
        ids = [row[0] for row in db.execute("SELECT id FROM segments ORDER BY id")]
        return run_receipt(db, run, "committed", stage=stage, target=target,
                           version=stable_id("segments", *ids), counts={"segments": len(ids)})
    if outcome is None:
        return run_receipt(db, run, "failed", stage=stage, target=target, version=target)
    if hasattr(outcome, "model_dump_json"):
        return run_receipt(db, run, "committed", stage=stage, target=target,
                           version=stable_id("payload", outcome.model_dump_json()))
    counts = {f"action.{k}": int(v) for k, v in sorted(getattr(outcome, "actions", {}).items())}
    counts["evidence"] = int(getattr(outcome, "evidence", 0))
    counts["relations"] = int(getattr(outcome, "relations", 0))
    return run_receipt(db, run, "committed", stage=stage, target=target,
                       version=stable_id("map", json.dumps(counts, sort_keys=True)),
                       counts=counts)


def unit_receipts(
    db: sqlite_utils.Database, run_id: str, stage: str, units: list[tuple[str, str]],
    status: str = "committed",
) -> int:
    """Receipts of ``(target, version)`` units written by the stored run ``run_id``."""
    from staging.staging_store import Run

    row = db.execute("SELECT stage, user_scope, assistant_scope FROM runs WHERE id = ?",
                     [run_id]).fetchone()
    if row is None:
        raise StagingError(f"run {run_id} is not in the staging db",
                           "receipts name the run that wrote the unit")
    run = Run(run_id, row[0], row[1], row[2])
    with transaction(db):
        for target, version in units:
            run_receipt(db, run, status, stage=stage, target=target, version=version)
    return len(units)


def _stage_of(run_stage: str) -> str:
    return run_stage if run_stage in RECEIPT_STAGES else "run"


def read_receipts(
    db: sqlite_utils.Database, *, stage: str | None = None, run_id: str | None = None,
    scope: tuple[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Receipts in write order, filtered by stage, run and (user, assistant) scope."""
    where, params = ["1 = 1"], []
    for column, value in (("stage", stage), ("run_id", run_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if scope is not None:
        where.append("user_scope = ? AND assistant_scope = ?")
        params.extend(scope)
    sql = f"SELECT * FROM receipts WHERE {' AND '.join(where)} ORDER BY at_utc, rowid"
    return list(db.query(sql, params))


# -- graph sync receipts -----------------------------------------------------------------------
@dataclass(frozen=True)
class SyncReceipt:
    id: str
    run_id: str
    backend: str
    status: str
    counts: dict[str, Any]
    started_at: str
    finished_at: str | None


def _graph_target(backend: str, target: str) -> str:
    return f"{backend}:{stable_id('graph', target)}"


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
        run_receipt(db, run, "started", stage="sync", target=_graph_target(backend, target),
                    version=receipt_id)
    return receipt_id


def finish_receipt(
    db: sqlite_utils.Database, receipt_id: str, status: str, counts: dict[str, Any]
) -> None:
    with transaction(db):
        db.table("sync_receipts").update(receipt_id, {
            "status": status, "finished_at": utc_now(),
            "counts": json.dumps(counts, sort_keys=True),
        })
        _lineage_of_sync(db, receipt_id, status, counts)


def _lineage_of_sync(
    db: sqlite_utils.Database, receipt_id: str, status: str, counts: dict[str, Any]
) -> None:
    from staging.staging_store import Run

    row = db.execute("SELECT run_id, user_scope, assistant_scope, backend, counts FROM"
                     " sync_receipts WHERE id = ?", [receipt_id]).fetchone()
    if row is None:
        return
    run = Run(row[0], "sync", row[1], row[2])
    written = counts.get("written", {})
    tally = {str(k): int(v) for k, v in written.items()} if isinstance(written, dict) else {}
    target = _graph_target(row[3], str(counts.get("target", "")))
    run_receipt(db, run, "committed" if status == "completed" else "failed", stage="sync",
                target=target, version=stable_id("graph", json.dumps(counts.get("graph", {}),
                                                                      sort_keys=True)),
                counts=tally)


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
