"""Counts over the store, for ``conceptmem stats``."""

from __future__ import annotations

from typing import Any

from pipeline.settings import Settings
from staging import SourceStore, StagingStore
from staging.errors import StoreNotFound

__all__ = ["collect_stats"]


def collect_stats(settings: Settings) -> dict[str, Any]:
    """One flat-ish dict: source counts, then staging counts (zero before extraction)."""
    if not settings.source_db.exists():
        raise StoreNotFound(
            f"no store at {settings.store}", "run `conceptmem --store DIR ingest PATH...` first"
        )
    source = SourceStore.open(settings.source_db)
    try:
        counts = source.counts()
    finally:
        source.close()
    stats: dict[str, Any] = {
        "store": str(settings.store),
        "sources": counts["sources"],
        "conversations": counts["conversations"],
        "messages": counts["messages"],
        "quarantined": counts["quarantine"],
    }
    staging = StagingStore.open(settings.staging_db)
    try:
        stats.update(_staging_counts(staging))
    finally:
        staging.close()
    return stats


def _staging_counts(staging: StagingStore) -> dict[str, Any]:
    failures = staging.db.execute(
        "SELECT COALESCE(error_class, 'unknown'), COUNT(*) FROM llm_calls"
        " WHERE status != 'ok' GROUP BY 1 ORDER BY 1"
    ).fetchall()
    return {
        "segments": staging.count("segments"),
        "concepts": staging.count("concepts", "state IN ('active', 'weak')"),
        "concepts_total": staging.count("concepts"),
        "evidence": staging.count("evidence"),
        "relations": staging.count("relations", "expired_at IS NULL"),
        "topics": staging.count("topics", "active = 1"),
        "llm_calls": staging.count("llm_calls"),
        "llm_failures": {name: count for name, count in failures},
        "rejected_mentions": staging.count("mentions", "verified = 0"),
        "runs": staging.count("runs"),
    }
