"""Counts over the store, for ``conceptmem stats``."""

from __future__ import annotations

from typing import Any

from pipeline.settings import Settings
from staging import SourceStore, StagingStore
from staging.errors import StoreNotFound
from staging.llm_log import llm_capabilities
from staging.lock import require_store

__all__ = ["collect_stats"]


def collect_stats(settings: Settings) -> dict[str, Any]:
    """One flat-ish dict: source counts, then staging counts (zero before extraction)."""
    require_store(settings.store)
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
        "repaired": counts["repairs"],
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
        "structured_output": _structured_output(staging),
        "rejected_mentions": staging.count("mentions", "verified = 0"),
        "mentions": staging.count("mentions"),
        "rejected_by_reason": _rejections(staging),
        "decisions": _grouped(staging, "SELECT action, COUNT(*) FROM mapper_decisions GROUP BY 1"),
        "segments_by_status": _grouped(staging, "SELECT status, COUNT(*) FROM segments GROUP BY 1"),
        "runs": staging.count("runs"),
    }


def _structured_output(staging: StagingStore) -> dict[str, str]:
    """The structured-output ladder step per ``endpoint model`` (see pipeline/llm/ladder.py)."""
    return {
        f"{cap.base_url_host} {cap.model}": cap.step + ("" if cap.confirmed else
                                                        " (no valid reply yet)")
        for cap in llm_capabilities(staging)
    }


def _grouped(staging: StagingStore, sql: str) -> dict[str, int]:
    return {str(key): int(count) for key, count in staging.db.execute(sql).fetchall()}


def _rejections(staging: StagingStore) -> dict[str, int]:
    """Rejected mentions by reason: failed verification, then mapper rejections."""
    found = _grouped(
        staging,
        "SELECT COALESCE(reject_reason, 'unknown'), COUNT(*) FROM mentions WHERE verified = 0"
        " GROUP BY 1",
    )
    mapper = _grouped(
        staging,
        "SELECT reason, COUNT(*) FROM mapper_decisions WHERE action = 'reject'"
        " AND reason NOT LIKE 'unverified_evidence:%' GROUP BY 1",
    )
    for reason, count in mapper.items():
        key = reason.split(":")[0]
        found[key] = found.get(key, 0) + count
    return dict(sorted(found.items()))
