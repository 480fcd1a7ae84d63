"""The convergence step shared by forget and redact: every derived thing follows the source."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.forget._purge import compact, prune_embeddings, purge_staging
from pipeline.forget._rederive import rebuild_graphs, rederive, synced_backends
from pipeline.settings import Settings
from staging import SourceStore, StagingStore, transaction

__all__ = ["ForgetReport", "converge", "remember"]


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
        removed = ", ".join(f"{k} {v}" for k, v in sorted(self.removed.items())
                            if v and not k.startswith("reset."))
        graphs = ", ".join(f"{k} {v}" for k, v in sorted(self.graphs.items())) or "none synced"
        return (f"forgot {self.messages} message(s) (--{self.selector}); removed: "
                f"{removed or 'nothing else'}; re-derived {self.rederived.get('concepts', 0)}"
                f" concepts; graphs: {graphs}; receipt {self.receipt_id}")


def remember(staging: StagingStore, kind_ids: dict[str, list[str]],
             receipt_id: str) -> None:
    with transaction(staging.db):
        staging.db.conn.executemany(
            "INSERT OR IGNORE INTO forgotten (id, kind, receipt_id) VALUES (?, ?, ?)",
            [(i, kind, receipt_id) for kind, ids in kind_ids.items() for i in ids])


def converge(settings: Settings, source: SourceStore, staging: StagingStore,
             texts: list[str], receipt: str, report: ForgetReport,
             changed: set[str] | None = None) -> None:
    """After source rows were deleted (or rewritten: ``changed``), bring every derived thing
    in line: purge, re-derive, prune the cache, rebuild graphs, compact source.db."""
    concepts_before = {r[0] for r in staging.db.execute("SELECT id FROM concepts")}
    gardened = bool(staging.db.execute("SELECT COUNT(*) FROM runs WHERE stage = 'garden'"
                                       " AND status = 'completed'").fetchone()[0])
    live = {r[0] for r in source.db.execute("SELECT id FROM messages")}
    report.removed.update(purge_staging(staging.db, live, texts, changed))
    texts.clear()
    report.rederived = rederive(settings, staging, gardened)
    gone = sorted(concepts_before - {r[0] for r in staging.db.execute("SELECT id FROM concepts")})
    remember(staging, {"concept": gone}, receipt)
    report.removed["concepts_gone"] = len(gone)
    report.removed["embeddings"] = prune_embeddings(staging.db)
    report.graphs = rebuild_graphs(settings, synced_backends(staging))
    compact(source.db, fts=True)


