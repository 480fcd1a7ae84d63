"""Re-deriving concepts after a deletion: replay the kept extractions, garden, re-project.

The mapper and the gardener are order-dependent (a merge or an invalidation depends on what
else is there), so undoing what deleted evidence caused is done by recomputing, not patching:
the kept segments are mapped again in their original order from their stored, validated
extractions (no LLM call is repeated), the gardener runs again with the configured seed when
the store had been gardened, and every graph backend that had been synced is rebuilt.
"""

from __future__ import annotations

import json
from pathlib import Path

from ontology import ExtractionRequest, ExtractionResult, Extractor
from pipeline.errors import MissingExtraError
from pipeline.settings import Settings
from staging import StagingStore

__all__ = ["ReplayExtractor", "rebuild_graphs", "rederive"]


class ReplayExtractor:
    """Returns each segment's stored extraction; segments without one go to ``fallback``."""

    def __init__(self, stored: dict[str, tuple[str, str, str | None]],
                 fallback: Extractor | None, label: str) -> None:
        self.stored, self.fallback, self.label = stored, fallback, label
        self.last_call_id: str | None = None
        self.replayed = 0

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        found = self.stored.get(request.segment_id)
        if found is not None:
            self.last_call_id = found[2]
            self.replayed += 1
            return ExtractionResult.model_validate_json(found[1])
        self.last_call_id = None
        if self.fallback is None:  # an LLM store: left for the next `conceptmem extract`
            from pipeline.llm import ExtractionFailed

            raise ExtractionFailed("not_replayed", "segment changed by forget; re-extract it",
                                   request.segment_id)
        result = self.fallback.extract(request)
        self.last_call_id = getattr(self.fallback, "last_call_id", None)
        return result


def _stored_extractions(staging: StagingStore) -> dict[str, tuple[str, str, str | None]]:
    rows = staging.db.execute(
        "SELECT segment_id, extractor, payload, llm_call_id FROM extractions ORDER BY rowid")
    return {segment: (label, payload, call) for segment, label, payload, call in rows}


def _was_gardened(staging: StagingStore) -> bool:
    row = staging.db.execute(
        "SELECT COUNT(*) FROM runs WHERE stage = 'garden' AND status = 'completed'").fetchone()
    return bool(row[0])


def rederive(settings: Settings, staging: StagingStore, gardened: bool) -> dict[str, int]:
    """Map the kept segments again from their extractions, then garden (if it had been)."""
    from pipeline.extract import extract_store
    from pipeline.garden import garden_store

    stored = _stored_extractions(staging)
    labels = {label for label, _, _ in stored.values()}
    label = labels.pop() if len(labels) == 1 else "offline:v1"
    fallback: Extractor | None = None
    if label.startswith("offline:"):
        from pipeline.offline_extractor import OfflineExtractor

        fallback = OfflineExtractor()
    replay = ReplayExtractor(stored, fallback, label)
    report = extract_store(settings, extractor=replay)
    counts = {"segments_replayed": replay.replayed, "concepts": report.concepts,
              "evidence": report.evidence_total}
    if gardened:
        try:
            garden_store(settings)
            counts["regardened"] = 1
        except MissingExtraError:  # topics were reset: flagged for the next `garden`
            counts["regarden_pending"] = 1
    return counts


def graph_files(settings: Settings) -> list[Path]:
    """The embedded graph's files (the database and anything beside it sharing its name)."""
    path = settings.graph_path
    return sorted(p for p in path.parent.glob(path.name + "*"))


def synced_backends(staging: StagingStore) -> list[str]:
    rows = staging.db.execute("SELECT DISTINCT backend FROM sync_receipts ORDER BY backend")
    return [str(r[0]) for r in rows]


def rebuild_graphs(settings: Settings, backends: list[str]) -> dict[str, str]:
    """Drop and re-project every backend; the embedded graph's files are deleted first, so no
    page of the old graph survives. Returns each backend's outcome (committed / failed)."""
    from pipeline.sync import sync_store

    outcome: dict[str, str] = {}
    for backend in backends:
        if backend == "embedded":
            for path in graph_files(settings):
                if path.is_dir():
                    import shutil

                    shutil.rmtree(path)
                else:
                    path.unlink()
        try:
            sync_store(settings, backend=backend, rebuild=True)
            outcome[backend] = "committed"
        except Exception as exc:  # the SQLite side is done; doctor reports the graph
            outcome[backend] = "failed"
            outcome[f"{backend}.error"] = type(exc).__name__
    return outcome


def load_texts(source_db: object, message_ids: list[str]) -> list[str]:
    """The texts (and text parts) of the messages about to be deleted, in memory only."""
    conn = getattr(source_db, "conn", source_db)
    texts: list[str] = []
    for start in range(0, len(message_ids), 500):
        chunk = message_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for text, parts in conn.execute(  # type: ignore[attr-defined]
                f"SELECT text, parts FROM messages WHERE id IN ({marks})", chunk):
            texts.append(text)
            texts.extend(p.get("text") or "" for p in json.loads(parts or "[]"))
    return [t for t in texts if t]
