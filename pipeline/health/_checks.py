"""The doctor's checks over SQLite (read-only): each returns findings, never text."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable
from datetime import datetime

from pipeline.health._classify import Finding

__all__ = ["SQL_CHECKS", "pid_alive"]

Check = Callable[[sqlite3.Connection, datetime, str], list[Finding]]


def _count(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


def _grouped(conn: sqlite3.Connection, state: str, kind: str, reason: str,
             sql: str) -> list[Finding]:
    """One finding per unit id from ``sql`` (rows: unit id, count)."""
    return [Finding(state, kind, str(unit), reason, int(n))
            for unit, n in conn.execute(sql).fetchall()]


def scope_conflicts(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """A unit whose rows mix (user, assistant) scopes, or differ from their messages'."""
    found = _grouped(conn, "scope_conflict", "evidence", "scope_differs_from_message",
                     "SELECT e.concept_id, COUNT(*) FROM evidence e JOIN src.messages m ON"
                     " m.id = e.message_id WHERE e.user_scope != m.user_scope OR"
                     " e.assistant_scope != m.assistant_scope GROUP BY e.concept_id")
    found += _grouped(conn, "scope_conflict", "concept", "evidence_from_another_scope",
                      "SELECT c.id, COUNT(*) FROM concepts c JOIN evidence e ON e.concept_id ="
                      " c.id WHERE c.user_scope != e.user_scope OR c.assistant_scope !="
                      " e.assistant_scope GROUP BY c.id")
    found += _grouped(conn, "scope_conflict", "concept_link", "links_two_scopes",
                      "SELECT l.from_concept_id, COUNT(*) FROM concept_links l JOIN concepts a"
                      " ON a.id = l.from_concept_id JOIN concepts b ON b.id = l.to_concept_id"
                      " WHERE l.active = 1 AND (a.user_scope != b.user_scope OR"
                      " a.assistant_scope != b.assistant_scope) GROUP BY l.from_concept_id")
    found += _grouped(conn, "scope_conflict", "relation", "relates_two_scopes",
                      "SELECT r.id, 1 FROM relations r JOIN concepts a ON a.id ="
                      " r.source_concept_id JOIN concepts b ON b.id = r.target_concept_id"
                      " WHERE a.user_scope != b.user_scope OR a.assistant_scope !="
                      " b.assistant_scope")
    found += _grouped(conn, "scope_conflict", "topic", "members_from_several_scopes",
                      "SELECT t.topic_id, COUNT(DISTINCT c.user_scope || '|' ||"
                      " c.assistant_scope) FROM topic_memberships t JOIN concepts c ON c.id ="
                      " t.concept_id WHERE t.active = 1 GROUP BY t.topic_id HAVING"
                      " COUNT(DISTINCT c.user_scope || '|' || c.assistant_scope) > 1")
    found += _grouped(conn, "scope_conflict", "segment", "messages_from_several_scopes",
                      "SELECT sm.segment_id, COUNT(DISTINCT m.user_scope || '|' ||"
                      " m.assistant_scope) FROM segment_messages sm JOIN src.messages m ON"
                      " m.id = sm.message_id GROUP BY sm.segment_id HAVING COUNT(DISTINCT"
                      " m.user_scope || '|' || m.assistant_scope) > 1")
    return found


def sources_at_risk(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """Derived rows whose message is gone from source.db without a deletion receipt."""
    gone = ("NOT EXISTS (SELECT 1 FROM src.messages m WHERE m.id = {col}) AND NOT EXISTS"
            " (SELECT 1 FROM forgotten f WHERE f.id = {col} AND f.kind = 'message')")
    found = _grouped(conn, "source_at_risk", "concept", "evidence_message_missing",
                     "SELECT e.concept_id, COUNT(*) FROM evidence e WHERE "
                     + gone.format(col="e.message_id") + " GROUP BY e.concept_id")
    found += _grouped(conn, "source_at_risk", "segment", "segment_message_missing",
                      "SELECT sm.segment_id, COUNT(*) FROM segment_messages sm WHERE "
                      + gone.format(col="sm.message_id") + " GROUP BY sm.segment_id")
    return found


def pid_alive(worker: str | None) -> bool | None:
    """Is ``host:pid`` running? None when it ran on another host (cannot tell)."""
    if not worker or ":" not in worker:
        return None
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname()[:64] and not host.startswith(socket.gethostname()[:8]):
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


def unfinished_runs(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """A run still 'started' (or closed as 'interrupted' by the next writer) that no later
    run of its stage completed: alive -> waiting; its process gone -> promotion missing."""
    found = []
    rows = conn.execute(
        "SELECT r.id, r.stage, r.status, (SELECT worker FROM receipts x WHERE x.run_id = r.id"
        " AND x.status = 'started' ORDER BY x.rowid LIMIT 1) FROM runs r WHERE r.status IN"
        " ('started', 'interrupted') AND NOT EXISTS (SELECT 1 FROM runs later WHERE"
        " later.stage = r.stage AND later.status = 'completed' AND later.started_at >"
        " r.started_at)").fetchall()
    for run_id, stage, status, worker in rows:
        alive = False if status == "interrupted" else pid_alive(worker)  # closed by a writer
        if alive:
            found.append(Finding("waiting", "run", run_id, f"{stage}_running", run_id=run_id))
        elif alive is None:
            found.append(Finding("uncertain", "run", run_id, f"{stage}_unknown_worker",
                                 run_id=run_id))
        else:
            found.append(Finding("promotion_missing", "run", run_id, f"{stage}_interrupted",
                                 run_id=run_id))
    return found


def pending_work(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """Messages never segmented and segments not extracted: queued, or a missed promotion."""
    found = []
    last_ingest = conn.execute("SELECT MAX(at_utc) FROM src.receipts WHERE stage = 'ingest'"
                               ).fetchone()[0]
    last_extract = conn.execute("SELECT MAX(started_at) FROM runs WHERE stage = 'extract' AND"
                                " status = 'completed'").fetchone()[0]
    unsegmented = _count(conn, "SELECT COUNT(*) FROM src.messages m WHERE NOT EXISTS"
                         " (SELECT 1 FROM segment_messages sm WHERE sm.message_id = m.id)")
    pending = _count(conn, "SELECT COUNT(*) FROM segments WHERE status = 'pending'")
    failed = _count(conn, "SELECT COUNT(*) FROM segments WHERE status = 'failed'")
    promoted_since = last_extract is not None and (last_ingest or "") < last_extract
    if unsegmented or pending:
        state = "promotion_missing" if promoted_since and unsegmented else "waiting"
        found.append(Finding(state, "store", "messages", "not_extracted_yet"
                             if state == "waiting" else "extract_left_messages",
                             unsegmented + pending))
    if failed:
        found.append(Finding("promotion_missing", "store", "segments", "segments_failed",
                             failed))
    flagged = _count(conn, "SELECT COUNT(*) FROM receipts x WHERE x.stage = 'garden' AND"
                     " x.status = 'waiting' AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.stage ="
                     " 'garden' AND r.status = 'completed' AND r.started_at > x.at_utc)")
    if flagged:
        found.append(Finding("waiting", "store", "topics", "regarden_flagged", flagged))
    return found


def unverified_lineage(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """Committed rows without checked provenance: no evidence, or evidence that no longer
    matches its message's text, or a writer/run that is not recorded."""
    found = _grouped(conn, "unverified", "concept", "no_evidence",
                     "SELECT c.id, 1 FROM concepts c WHERE c.state IN ('active', 'weak') AND"
                     " c.merged_into IS NULL AND NOT EXISTS (SELECT 1 FROM evidence e WHERE"
                     " e.concept_id = c.id)")
    found += _grouped(conn, "unverified", "concept", "quote_not_at_offsets",
                      "SELECT e.concept_id, COUNT(*) FROM evidence e JOIN src.messages m ON"
                      " m.id = e.message_id WHERE substr(m.text, e.start + 1, e.\"end\" -"
                      " e.start) != e.quote GROUP BY e.concept_id")
    found += _grouped(conn, "unverified", "read", "result_without_dependency_versions",
                      "SELECT stage, COUNT(*) FROM receipts WHERE stage IN ('search', 'lineage')"
                      " AND status = 'committed' AND depends_on_version IS NULL GROUP BY stage")
    for table in ("concepts", "evidence", "relations", "segments", "mentions"):
        found += _grouped(conn, "unverified", table, "provenance_incomplete",
                          f"SELECT '{table}', COUNT(*) FROM {table} t WHERE t.writer = '' OR"
                          " NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = t.run_id) HAVING"
                          " COUNT(*) > 0")
    return found


def versions(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """Rows derived by another code version (stale); runs with no version or receipt."""
    found = []
    row = conn.execute("SELECT id, code_version FROM runs WHERE stage = 'extract' AND status"
                       " = 'completed' ORDER BY started_at DESC LIMIT 1").fetchone()
    if row is not None and row[1] not in (version, "", "0+unknown"):
        found.append(Finding("stale", "run", row[0], "derived_by_other_code_version",
                             run_id=row[0]))
    found += [Finding("uncertain", "run", r, "no_code_version", run_id=r) for (r,) in
              conn.execute("SELECT id FROM runs WHERE code_version IN ('', '0+unknown')")]
    found += [Finding("uncertain", "run", r, "no_receipt", run_id=r) for (r,) in
              conn.execute("SELECT id FROM runs r WHERE NOT EXISTS (SELECT 1 FROM receipts x"
                           " WHERE x.run_id = r.id)")]
    return found


def fts_and_retention(conn: sqlite3.Connection, now: datetime, version: str) -> list[Finding]:
    """FTS misses a stored message (degraded: the exact list still has it); expired rows
    awaiting compaction (waiting: reads already hide them)."""
    found = []
    missing = _count(conn, "SELECT COUNT(*) FROM src.messages m WHERE NOT EXISTS (SELECT 1"
                     " FROM src.messages_fts_docsize d WHERE d.id = m.rowid)")
    if missing:
        found.append(Finding("degraded", "store", "messages_fts", "fts_misses_messages",
                             missing))
    expired = _count(conn, "SELECT COUNT(*) FROM src.message_policy WHERE expires_at IS NOT"
                     " NULL AND expires_at <= ?", (now.isoformat(),))
    if expired:
        found.append(Finding("waiting", "store", "retention", "expired_awaiting_compaction",
                             expired))
    return found


SQL_CHECKS: tuple[Check, ...] = (scope_conflicts, sources_at_risk, unfinished_runs,
                                 pending_work, unverified_lineage, versions, fts_and_retention)
