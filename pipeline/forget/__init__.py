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

from dataclasses import dataclass, field

from ontology import stable_id
from pipeline import __version__
from pipeline.forget._purge import compact, prune_embeddings, purge_source, purge_staging
from pipeline.forget._rederive import (
    load_texts,
    rebuild_graphs,
    rederive,
    synced_backends,
)
from pipeline.forget._select import NothingSelected, Selector, select_messages
from pipeline.settings import Settings
from staging import SourceStore, StagingStore, transaction
from staging.errors import StoreNotFound
from staging.receipts import run_receipt

__all__ = ["ForgetReport", "NothingSelected", "Selector", "forget"]


@dataclass
class ForgetReport:
    selector: str
    dry_run: bool
    messages: int = 0
    conversations: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    rederived: dict[str, int] = field(default_factory=dict)
    graphs: dict[str, str] = field(default_factory=dict)
    receipt_id: str | None = None

    def summary(self) -> str:
        if self.dry_run:
            return (f"dry run: forget --{self.selector} would delete {self.messages} message(s)"
                    f" in {self.conversations} conversation(s) and everything derived")
        removed = ", ".join(f"{k} {v}" for k, v in sorted(self.removed.items()) if v)
        graphs = ", ".join(f"{k} {v}" for k, v in sorted(self.graphs.items())) or "none synced"
        return (f"forgot {self.messages} message(s) (--{self.selector}); removed: "
                f"{removed or 'nothing else'}; re-derived {self.rederived.get('concepts', 0)}"
                f" concepts; graphs: {graphs}; receipt {self.receipt_id}")


def _conversations(source: SourceStore, ids: list[str]) -> list[str]:
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(r[0] for r in source.db.execute(
            f"SELECT conversation_id FROM messages WHERE id IN ({','.join('?' * len(chunk))})",
            chunk))
    return sorted(found)


def _remember(staging: StagingStore, run_id: str, kind_ids: dict[str, list[str]],
              receipt_id: str) -> None:
    with transaction(staging.db):
        staging.db.conn.executemany(
            "INSERT OR IGNORE INTO forgotten (id, kind, receipt_id) VALUES (?, ?, ?)",
            [(i, kind, receipt_id) for kind, ids in kind_ids.items() for i in ids])


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
    concepts_before = {r[0] for r in staging.db.execute("SELECT id FROM concepts")}
    gardened = bool(staging.db.execute("SELECT COUNT(*) FROM runs WHERE stage = 'garden'"
                                       " AND status = 'completed'").fetchone()[0])
    run = staging.start_run("forget", {"selector": selector.describe()}, __version__,
                            settings.user_scope, settings.assistant_scope)
    target = stable_id("forget", *ids)
    receipt = run_receipt(staging.db, run, "started", stage="forget", target=target,
                          version=target, counts={"messages": len(ids)})
    _remember(staging, run.id, {"message": ids, "conversation": _conversations(source, ids)},
              receipt)
    report.removed.update(purge_source(source.db, ids))
    live = {r[0] for r in source.db.execute("SELECT id FROM messages")}
    report.removed.update(purge_staging(staging.db, live, texts))
    del texts
    report.rederived = rederive(settings, staging, gardened)
    gone = sorted(concepts_before - {r[0] for r in staging.db.execute("SELECT id FROM concepts")})
    _remember(staging, run.id, {"concept": gone}, receipt)
    report.removed["concepts_gone"] = len(gone)
    report.removed["embeddings"] = prune_embeddings(staging.db)
    report.graphs = rebuild_graphs(settings, synced_backends(staging))
    compact(source.db, fts=True)
    report.receipt_id = run_receipt(
        staging.db, run, "committed", stage="forget", target=target, version=target,
        counts={k: v for k, v in report.removed.items() if isinstance(v, int)})
    staging.finish_run(run, "completed", {"removed": report.removed, "graphs": report.graphs})
    compact(staging.db)
