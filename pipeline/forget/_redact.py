"""Redaction as a state transition: rewrite a message's stored text, then let every derived
thing follow (descriptions, quotes, embeddings, labels, LLM logs, graph), with a receipt that
records what was redacted (message id, fields, number of spans), never the content."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ontology import stable_id
from pipeline import __version__
from pipeline.errors import ConceptmemError
from pipeline.forget._converge import ForgetReport, converge
from pipeline.forget._purge import compact
from pipeline.forget._rederive import load_texts
from pipeline.settings import Settings
from staging import SourceStore, StagingStore, transaction
from staging.db import utc_now
from staging.lock import writes_store
from staging.receipts import run_receipt

__all__ = ["MASK", "RedactReport", "redact"]

MASK = "[redacted]"


@dataclass
class RedactReport:
    message_id: str
    spans: int
    fields: list[str]
    forget: ForgetReport

    def summary(self) -> str:
        fields = ", ".join(self.fields)
        return (f"redacted {self.spans} span(s) of message {self.message_id} ({fields});"
                f" re-derived {self.forget.rederived.get('concepts', 0)} concepts;"
                f" receipt {self.forget.receipt_id}")


def _rewrite(text: str, pattern: re.Pattern[str] | None) -> tuple[str, int]:
    if pattern is None:
        return (MASK, 1) if text else (text, 0)
    return pattern.subn(MASK, text)


def _apply(source: SourceStore, message_id: str, pattern: re.Pattern[str] | None
           ) -> tuple[int, list[str]]:
    row = source.db.execute("SELECT text, parts FROM messages WHERE id = ?",
                            [message_id]).fetchone()
    text, spans = _rewrite(row[0], pattern)
    parts = json.loads(row[1] or "[]")
    for part in parts:
        if part.get("text"):
            part["text"], n = _rewrite(part["text"], pattern)
            spans += n
    fields = ["text"] + (["parts"] if parts else [])
    with transaction(source.db):
        source.db.execute("UPDATE messages SET text = ?, parts = ? WHERE id = ?",
                          [text, json.dumps(parts, ensure_ascii=False, sort_keys=True),
                           message_id])
        source.db.execute(
            "UPDATE message_policy SET redaction_state = 'applied', redacted_fields = ?,"
            " written_at = ? WHERE message_id = ?", [json.dumps(fields), utc_now(), message_id])
    return spans, fields


@writes_store("redact")
def redact(settings: Settings, message_id: str, pattern: str | None = None) -> RedactReport:
    """Replace ``pattern`` (a regex; default: the whole text) in one message with ``MASK``."""
    compiled = re.compile(pattern) if pattern else None
    source = SourceStore.open(settings.source_db)
    staging = StagingStore.open(settings.staging_db)
    try:
        found = source.db.execute("SELECT id FROM messages WHERE id = ? OR external_id = ?",
                                  [message_id, message_id]).fetchone()
        if found is None:
            raise ConceptmemError(f"redact: no message {message_id!r}",
                                  "pass the store's message id or the export's own id")
        mid = found[0]
        before = load_texts(source.db, [mid])
        run = staging.start_run("redact", {"fields": "text"}, __version__,
                                settings.user_scope, settings.assistant_scope)
        target = stable_id("redact", mid)
        receipt = run_receipt(staging.db, run, "started", stage="redact", target=mid,
                              version=target)
        spans, fields = _apply(source, mid, compiled)
        after = set(load_texts(source.db, [mid]))
        report = ForgetReport("redact", False, 1, 0)
        converge(settings, source, staging, [t for t in before if t not in after], receipt,
                 report, changed={mid})
        report.receipt_id = run_receipt(staging.db, run, "committed", stage="redact",
                                        target=mid, version=target,
                                        counts={"spans": spans, "fields": len(fields)})
        staging.finish_run(run, "completed", {"spans": spans})
        compact(staging.db)
        return RedactReport(mid, spans, fields, report)
    finally:
        source.close()
        staging.close()
