"""The LLM call log: every attempt of every call, successful or not, in ``llm_calls``.

Rows are written through a connection of their own (for file databases), committed one by one,
so a call stays on record even when the stage that made it rolls back its own transaction.
A lock makes the recorder safe to share between the worker threads of an extraction stage.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any, Literal

import sqlite_utils

from ontology import stable_id
from staging.db import open_database, transaction, utc_now
from staging.staging_store import Run, StagingStore

__all__ = [
    "CallStatus",
    "Capability",
    "LLMCallLog",
    "LLMCallRecord",
    "llm_call_counts",
    "llm_capabilities",
]

CallStatus = Literal["ok", "invalid", "error"]

WRITER = "llm-client"
# Each try waits up to the connection's busy_timeout (10 s) for a stage's write transaction.
_LOCKED_RETRIES = 5


@dataclass(frozen=True)
class LLMCallRecord:
    """One HTTP attempt (or one line of a Batch output file) and what became of it."""

    segment_id: str | None
    schema_name: str
    schema_hash: str
    model: str
    base_url_host: str
    prompt_hash: str
    attempt: int
    request: dict[str, Any]
    reply: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    tokens_estimated: bool
    latency_ms: float | None
    status: CallStatus
    error_class: str | None = None
    error_detail: str | None = None
    structured_output: str | None = None  # the ladder step the request used


@dataclass(frozen=True)
class Capability:
    """The structured-output ladder step an endpoint and model accept (``llm_capabilities``)."""

    base_url_host: str
    model: str
    step: str
    confirmed: bool
    detail: str | None


class LLMCallLog:
    """Thread-safe recorder of ``LLMCallRecord`` rows for one run."""

    def __init__(self, staging: StagingStore, run: Run) -> None:
        self.run = run
        self._lock = threading.Lock()
        path = _database_file(staging.db)
        self._own = path is not None
        self.db = open_database(path) if path is not None else staging.db
        # Closed by close(), or when the log is garbage-collected if a caller forgets.
        conn = self.db.conn if self._own else None
        self._finalizer = weakref.finalize(self, _close, conn)

    def record(self, call: LLMCallRecord) -> str:
        """Insert one row and commit it; returns the row id."""
        call_id = stable_id("llm", self.run.id, call.segment_id or "", uuid.uuid4().hex)
        row: dict[str, Any] = {
            "id": call_id,
            "segment_id": call.segment_id,
            "schema_name": call.schema_name,
            "schema_hash": call.schema_hash,
            "model": call.model,
            "base_url_host": call.base_url_host,
            "prompt_hash": call.prompt_hash,
            "attempt": call.attempt,
            "request": json.dumps(call.request, ensure_ascii=False, sort_keys=True),
            "reply": call.reply,
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "tokens_estimated": int(call.tokens_estimated),
            "latency_ms": call.latency_ms,
            "status": call.status,
            "error_class": call.error_class,
            "error_detail": call.error_detail,
            "structured_output": call.structured_output,
            **self.run.provenance(WRITER).columns(),
        }
        with self._lock:
            self._insert("llm_calls", row)
        return call_id

    def capability(self, base_url_host: str, model: str) -> Capability | None:
        """The remembered ladder step of this endpoint and model, or None if never detected."""
        with self._lock:
            row = self.db.execute(
                "SELECT step, confirmed, detail FROM llm_capabilities"
                " WHERE base_url_host = ? AND model = ?",
                [base_url_host, model],
            ).fetchone()
        if row is None:
            return None
        return Capability(base_url_host, model, str(row[0]), bool(row[1]), row[2])

    def remember_capability(self, capability: Capability) -> None:
        """Store (replace) the step of ``capability``'s endpoint and model, committed at once."""
        row: dict[str, Any] = {
            "base_url_host": capability.base_url_host,
            "model": capability.model,
            "step": capability.step,
            "confirmed": int(capability.confirmed),
            "detail": capability.detail,
            "updated_at": utc_now(),
            **self.run.provenance(WRITER).columns(),
        }
        with self._lock:
            self._insert("llm_capabilities", row, replace=True)

    def _insert(self, table: str, row: dict[str, Any], replace: bool = False) -> None:
        """Insert, waiting out a stage that holds the write lock longer than busy_timeout."""
        for attempt in range(_LOCKED_RETRIES + 1):
            try:
                with transaction(self.db):
                    self.db.table(table).insert(row, replace=replace)
                return
            except sqlite3.OperationalError as exc:
                locked = "locked" in str(exc) or "busy" in str(exc)
                if not locked or attempt == _LOCKED_RETRIES:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        """Close the log's own connection (a no-op when it shares the store's)."""
        self._finalizer()

    def __enter__(self) -> LLMCallLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close(conn: sqlite3.Connection | None) -> None:
    if conn is not None:
        conn.close()


def _database_file(db: sqlite_utils.Database) -> str | None:
    """The file behind ``db``'s main schema, or None for an in-memory database."""
    try:
        rows = db.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:
        return None
    for _, name, file in rows:
        if name == "main" and file:
            return str(file)
    return None


def llm_call_counts(staging: StagingStore, run_id: str | None = None) -> dict[str, int]:
    """Counts of LLM calls by outcome: ``ok``, ``invalid``, ``error`` and each error class.

    Keys are ``calls``, ``status:<status>``, ``class:<error_class>`` and the token totals
    ``prompt_tokens`` / ``completion_tokens``; the numbers ``conceptmem stats`` shows.
    """
    where, params = ("WHERE run_id = ?", [run_id]) if run_id else ("", [])
    counts: dict[str, int] = {}
    for status, error_class, n, prompt, completion in staging.db.execute(
        "SELECT status, error_class, COUNT(*), COALESCE(SUM(prompt_tokens), 0), "
        f"COALESCE(SUM(completion_tokens), 0) FROM llm_calls {where} "
        "GROUP BY status, error_class",
        params,
    ).fetchall():
        counts["calls"] = counts.get("calls", 0) + int(n)
        counts[f"status:{status}"] = counts.get(f"status:{status}", 0) + int(n)
        if error_class:
            counts[f"class:{error_class}"] = counts.get(f"class:{error_class}", 0) + int(n)
        counts["prompt_tokens"] = counts.get("prompt_tokens", 0) + int(prompt)
        counts["completion_tokens"] = counts.get("completion_tokens", 0) + int(completion)
    return counts


def llm_capabilities(staging: StagingStore) -> list[Capability]:
    """Every remembered ladder step, by endpoint host and model (for ``conceptmem stats``)."""
    rows = staging.db.execute(
        "SELECT base_url_host, model, step, confirmed, detail FROM llm_capabilities"
        " ORDER BY base_url_host, model"
    ).fetchall()
    return [Capability(str(h), str(m), str(s), bool(c), d) for h, m, s, c, d in rows]
