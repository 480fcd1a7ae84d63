"""The write policy (seed 003): sensitivity at ingest, retention at read time, scope checks.

- **Sensitivity**: every message gets a class (public / internal / personal / restricted) at
  ingest from rules (``_rules``) and settings (extra patterns, per-source overrides); a derived
  row (evidence, concept, topic) is as sensitive as its most sensitive message.
- **Retention**: ``expires_at`` = ingest time + ``retention_days[class]``; evaluated at read
  time by :func:`visible` / :data:`VISIBLE_SQL`, so an expired row is never returned, and
  compacted (forgotten) on the next ``conceptmem forget --expired``.
- **Scopes**: :func:`visible` also requires the row's (user, assistant) scope to equal the
  reader's: "right user, wrong assistant" is not visible.

Readers (search, lineage, cypher helpers, exports) call :func:`visible` or embed
:data:`VISIBLE_SQL`; both are pure (no I/O).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ontology import stable_id
from pipeline.policy._read import VISIBLE_SQL, ReadFilter, dependency_versions
from pipeline.policy._rules import CLASSES, builtin_rules, classify, extra_rules, most_sensitive
from pipeline.settings import Settings
from staging import SourceStore, transaction
from staging.db import utc_now
from staging.receipts import Receipt, record_receipt, source_version, worker_id

__all__ = [
    "CLASSES",
    "VISIBLE_SQL",
    "PolicyRow",
    "ReadFilter",
    "admit_ingest",
    "apply_ingest_policy",
    "classify",
    "dependency_versions",
    "expired_message_ids",
    "message_policies",
    "most_sensitive",
    "record_read",
    "sensitivity_of",
    "visible",
]

WRITER = "policy:v1"

@dataclass(frozen=True)
class PolicyRow:
    message_id: str
    sensitivity: str
    expires_at: str | None
    redaction_state: str = "none"


def visible(
    row_scope: tuple[str, str], reader_scope: tuple[str, str], policy: PolicyRow | None,
    now: datetime,
) -> bool:
    """May a reader in ``reader_scope`` see a row of ``row_scope`` with ``policy`` at ``now``?"""
    if row_scope != reader_scope:
        return False
    if policy is None or policy.expires_at is None:
        return True
    return datetime.fromisoformat(policy.expires_at) > now


def _override(settings: Settings, path: str) -> str | None:
    for pattern, sensitivity in settings.sensitivity_source_overrides.items():
        if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern):
            return sensitivity
    return None


def _expiry(settings: Settings, sensitivity: str, now: datetime) -> str | None:
    days = settings.retention_days.get(sensitivity)
    return None if days is None else (now + timedelta(days=days)).isoformat()


def apply_ingest_policy(settings: Settings, now: datetime | None = None) -> int:
    """Classify every message that has no policy row yet; returns how many were classified."""
    now = now or datetime.now(UTC)
    rules = [*builtin_rules(), *extra_rules(settings.sensitivity_patterns)]
    store = SourceStore.open(settings.source_db)
    try:
        rows = store.db.execute(
            "SELECT m.id, m.text, s.path FROM messages m JOIN sources s ON s.id = m.source_id"
            " LEFT JOIN message_policy p ON p.message_id = m.id WHERE p.message_id IS NULL"
        ).fetchall()
        written = []
        for message_id, text, path in rows:
            sensitivity, reasons = classify(text, rules, settings.sensitivity_default,
                                            _override(settings, path))
            written.append((message_id, sensitivity, json.dumps(reasons),
                            _expiry(settings, sensitivity, now),
                            "consent" if settings.consent_ref else "indefinite",
                            settings.consent_ref, WRITER, now.isoformat()))
        with transaction(store.db):
            store.db.conn.executemany(
                "INSERT OR IGNORE INTO message_policy (message_id, sensitivity, reasons,"
                " expires_at, basis, consent_ref, writer, written_at)"
                " VALUES (?,?,?,?,?,?,?,?)", written)
        return len(written)
    finally:
        store.close()


def admit_ingest(settings: Settings, files: Iterable[Any]) -> int:
    """The write boundary after ingest: classify the new messages, then one content-free
    receipt per imported file (``files``: ``pipeline.ingest.FileReport``s), in source.db."""
    from pipeline import __version__

    classified = apply_ingest_policy(settings)
    now = utc_now()
    config = stable_id("cfg", json.dumps(settings.sensitivity_patterns, sort_keys=True),
                       json.dumps(settings.retention_days, sort_keys=True))
    run_id = stable_id("run", "ingest", now, worker_id())
    store = SourceStore.open(settings.source_db)
    try:
        with transaction(store.db):
            for item in files:
                c = item.counts
                record_receipt(store.db, Receipt(
                    run_id, settings.user_scope, settings.assistant_scope, "ingest",
                    item.source_id, f"sha256:{item.sha256}",
                    source_version(__version__, config), "committed", now,
                    worker=worker_id(),
                    counts={"conversations": c.conversations, "messages": c.messages,
                            "quarantined": len(c.rejected)}))
    finally:
        store.close()
    return classified


def record_read(settings: Settings, stage: str, target: str, concept_ids: Iterable[str],
                message_ids: Iterable[str]) -> str:
    """A retrieval receipt (seed 000): which revision of each concept and message a read path
    (lineage, search) returned, so a later check can tell a stale answer from a current one."""
    from pipeline import __version__
    from staging import StagingStore

    depends = dependency_versions(settings.source_db, settings.staging_db, concept_ids,
                                  message_ids)
    staging = StagingStore.open(settings.staging_db)
    try:
        return record_receipt(staging.db, Receipt(
            stable_id("read", target, utc_now()), settings.user_scope,
            settings.assistant_scope, stage, target, stable_id("deps", *sorted(depends.items())),
            source_version(__version__, "read"), "committed", utc_now(),
            depends_on_version=depends, worker=worker_id(), counts={"results": len(depends)}))
    finally:
        staging.close()


def message_policies(db: Any, ids: Iterable[str]) -> dict[str, PolicyRow]:
    """Policy rows of the given message ids (a source db connection or sqlite-utils db)."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, PolicyRow] = {}
    conn = getattr(db, "conn", db)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        for row in conn.execute(
            "SELECT message_id, sensitivity, expires_at, redaction_state FROM message_policy"
            f" WHERE message_id IN ({','.join('?' * len(chunk))})", chunk,
        ):
            found[row[0]] = PolicyRow(row[0], row[1], row[2], row[3])
    return found


def expired_message_ids(db: Any, now: datetime) -> list[str]:
    conn = getattr(db, "conn", db)
    rows = conn.execute(
        "SELECT message_id FROM message_policy WHERE expires_at IS NOT NULL AND expires_at <= ?"
        " ORDER BY message_id", [now.isoformat()])
    return [row[0] for row in rows]


def sensitivity_of(policies: Mapping[str, PolicyRow], message_ids: Iterable[str]) -> str:
    """A derived row's class: the most sensitive of its messages' (unknown: restricted)."""
    return most_sensitive(
        (policies[m].sensitivity if m in policies else "restricted" for m in message_ids),
        "public",
    )
