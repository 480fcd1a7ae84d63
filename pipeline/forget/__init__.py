"""`conceptmem forget`: delete messages and everything derived from them, with a receipt.

Steps (each resumable; a re-run converges): select the messages; record a content-free
``forget`` receipt (``started``) and the deleted ids in ``forgotten`` (so `doctor` tells a
deletion from a loss); delete the source rows (FTS entries go with them); delete the staging
rows derived from any message source.db no longer has (segments, LLM calls, extractions,
mentions, and LLM calls holding a deleted text); re-derive concepts, evidence, relations,
merges, splits, invalidations and topics from what is left (``_rederive``); prune the
embedding cache to texts the store can still produce; rebuild every graph backend that had
been synced; VACUUM both databases and truncate their WALs; then the ``committed`` receipt
with the counts of what was removed (never what it said).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from ontology import stable_id
from pipeline import __version__
from pipeline.errors import ConceptmemError
from pipeline.forget._converge import ForgetReport, converge, remember
from pipeline.forget._purge import compact, purge_source
from pipeline.forget._redact import RedactReport, redact
from pipeline.forget._rederive import load_texts
from pipeline.forget._select import NothingSelected, Selector, select_messages
from pipeline.settings import Settings
from staging import SourceStore, StagingStore
from staging.errors import StoreNotFound
from staging.lock import writes_store
from staging.receipts import run_receipt

__all__ = [
    "CompactReport",
    "ForgetReport",
    "NothingSelected",
    "RedactReport",
    "Selector",
    "compact_expired",
    "converge",
    "forget",
    "redact",
]


def _conversations(source: SourceStore, ids: list[str]) -> list[str]:
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(r[0] for r in source.db.execute(
            f"SELECT conversation_id FROM messages WHERE id IN ({','.join('?' * len(chunk))})",
            chunk))
    return sorted(found)


class GraphNotForgotten(ConceptmemError):
    """SQLite forgot, but a graph backend could not be rebuilt (it may still show the rows)."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        names = ", ".join(backends)
        super().__init__(f"forget: source and staging are clean, but the {names} graph could"
                         " not be rebuilt and may still show the deleted rows",
                         f"make it reachable, then `conceptmem sync --rebuild --backend "
                         f"{backends[0]}`; `conceptmem doctor` reports it until then")


@dataclass
class CompactReport:
    expired: int
    forget: ForgetReport | None

    def summary(self) -> str:
        return ("no expired message" if self.forget is None
                else f"compacted {self.expired} expired message(s): {self.forget.summary()}")


def compact_expired(settings: Settings, now: datetime | None = None) -> CompactReport:
    """Forget every message past its retention (reads already hide them): the `run` stage."""
    if not settings.source_db.exists():
        return CompactReport(0, None)
    at = (now or datetime.now(UTC)).isoformat()
    try:
        report = forget(settings, Selector(expired_at=at))
    except NothingSelected:
        return CompactReport(0, None)
    return CompactReport(report.messages, report)


@writes_store("forget")
def forget(settings: Settings, selector: Selector, dry_run: bool = False) -> ForgetReport:
    """Delete what ``selector`` names and everything derived from it (see the module doc)."""
    if not settings.source_db.exists():
        raise StoreNotFound(f"no source database in {settings.store}", "check --store")
    source = SourceStore.open(settings.source_db)
    staging = StagingStore.open(settings.staging_db)
    try:
        ids = select_messages(source.db, staging.db, selector)
        report = ForgetReport(selector.describe(), dry_run, len(ids),
                              len(_conversations(source, ids)))
        if not ids:
            raise NothingSelected(f"forget --{selector.describe()}: no message matches",
                                  "check the id (store id or the export's own id) and --store")
        if not dry_run:
            _forget(settings, source, staging, ids, selector, report)
        return report
    finally:
        source.close()
        staging.close()


def _forget(settings: Settings, source: SourceStore, staging: StagingStore, ids: list[str],
            selector: Selector, report: ForgetReport) -> None:
    texts = load_texts(source.db, ids)
    run = staging.start_run("forget", {"selector": selector.describe()}, __version__,
                            settings.user_scope, settings.assistant_scope)
    target = stable_id("forget", *ids)
    receipt = run_receipt(staging.db, run, "started", stage="forget", target=target,
                          version=target, counts={"messages": len(ids)})
    conversations = _conversations(source, ids)
    remember(staging, {"message": ids}, receipt)
    report.removed.update(purge_source(source.db, ids))
    kept = {r[0] for r in source.db.execute("SELECT id FROM conversations")}
    remember(staging, {"conversation": [c for c in conversations if c not in kept]}, receipt)
    converge(settings, source, staging, texts, receipt, report)
    report.receipt_id = run_receipt(
        staging.db, run, "committed", stage="forget", target=target, version=target,
        counts={k: v for k, v in report.removed.items() if isinstance(v, int)})
    if report.rederived.get("regarden_pending"):  # doctor: waiting until the next garden
        run_receipt(staging.db, run, "waiting", stage="garden", target=target, version=target)
    failed = sorted(b for b, status in report.graphs.items() if status == "failed")
    for backend in failed:  # SQLite is clean; this projection still shows the deleted rows
        run_receipt(staging.db, run, "failed", stage="forget", target=f"graph.{backend}",
                    version=target)
    staging.finish_run(run, "completed", {"removed": report.removed, "graphs": report.graphs})
    compact(staging.db)
    if failed:
        raise GraphNotForgotten(failed)
