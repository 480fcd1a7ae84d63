"""The gardener's SQL: load what it plans over, apply and revert plans, record plans and studies.

Plans arrive as plain dicts (``Plan.to_dict()``): a list of row changes, each ``{table, key,
before, after, revert}``. Applying a plan writes its changes, its ``gardener_plans`` row and one
``concept_revisions`` snapshot per touched concept in one transaction; reverting writes every
``before`` back (inserted links and split parts are deactivated, not deleted) in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlite_utils

from staging.db import transaction, utc_now
from staging.errors import StagingError
from staging.staging_store import Provenance

__all__ = ["GARDEN_TABLES", "GardenerRepo", "PlanNotRevertible"]

GARDEN_TABLES = (
    "concepts", "evidence", "relations", "concept_links", "topics", "topic_memberships",
    "parent_topics", "topic_outliers",
)
_REVERT_ACTION = {"merge": "unmerge", "split": "unsplit"}


class PlanNotRevertible(StagingError):
    """The plan is not applied, or rows it wrote changed since."""


class GardenerRepo:
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    # -- reads ------------------------------------------------------------------------------
    def load_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of the tables the gardener plans over, of every scope: the caller
        partitions them (``gardener.scopes.partition_rows``) before planning."""
        return {table: self._rows(f"SELECT * FROM [{table}]") for table in GARDEN_TABLES}

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.db.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def message_conversations(self) -> dict[str, str]:
        """Conversation id of every segmented message (evidence overlap is judged on these)."""
        cursor = self.db.execute(
            "SELECT sm.message_id, s.conversation_id FROM segment_messages sm"
            " JOIN segments s ON s.id = sm.segment_id")
        return {str(message): str(conversation) for message, conversation in cursor.fetchall()}

    def latest_seen(self) -> str | None:
        """The latest ``last_seen`` of any concept (the memory's "present"), if any."""
        row = self.db.execute("SELECT MAX(last_seen) FROM concepts").fetchone()
        return None if row is None else row[0]

    def latest_study_params(self, scope: tuple[str, str] | None = None) -> dict[str, Any] | None:
        """The best parameters of the most recent topic study (of ``scope``, else of any)."""
        order = " ORDER BY written_at DESC, rowid DESC LIMIT 1"
        row = None if scope is None else self.db.execute(
            "SELECT best_params FROM gardener_studies WHERE user_scope = ? AND"
            " assistant_scope = ?" + order, list(scope)).fetchone()
        if row is None:
            row = self.db.execute("SELECT best_params FROM gardener_studies" + order).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def plan_row(self, plan_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM gardener_plans WHERE id = ?", [plan_id])
        return rows[0] if rows else None

    def cached_vectors(
        self, model: str, hashes: Iterable[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        wanted = sorted(set(hashes))
        found: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for text_hash, blob in self.db.execute(
                "SELECT text_hash, vector FROM embeddings"
                f" WHERE model = ? AND text_hash IN ({marks})",
                [model, *chunk],
            ).fetchall():
                found[text_hash] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    # -- writes -----------------------------------------------------------------------------
    def store_vectors(self, model: str, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        now = utc_now()
        with transaction(self.db):
            self.db.conn.executemany(
                "INSERT OR IGNORE INTO embeddings (text_hash, model, dim, vector, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [(h, model, int(v.shape[0]), np.asarray(v, np.float32).tobytes(), now)
                 for h, v in vectors.items()],
            )

    def record_plan(
        self, plan: Mapping[str, Any], status: str, checks: list[str], prov: Provenance
    ) -> None:
        """A plan row without applying it (``rejected`` plans, with the failures as checks)."""
        with transaction(self.db):
            self._insert_plan(plan, status, checks, prov)

    def apply_plan(self, plan: Mapping[str, Any], checks: list[str], prov: Provenance) -> None:
        """Write the plan's changes, its record and concept revisions in one transaction."""
        with transaction(self.db):
            self._insert_plan(plan, "applied", checks, prov)
            for change in plan["changes"]:
                self._write(change, prov)
            self._revisions(plan, plan["step"], prov)

    def revert_plan(self, plan_id: str, prov: Provenance) -> dict[str, Any]:
        """Write back every ``before``; raises ``PlanNotRevertible`` when that is unsafe."""
        row = self.plan_row(plan_id)
        if row is None or row["status"] != "applied":
            status = "missing" if row is None else row["status"]
            raise PlanNotRevertible(f"plan {plan_id} is {status}", "only applied plans revert")
        plan = json.loads(row["plan"])
        with transaction(self.db):
            for change in reversed(plan["changes"]):
                self._unwrite(change)
            self.db.execute("UPDATE gardener_plans SET status = 'reverted' WHERE id = ?",
                            [plan_id])
            self._revisions(plan, _REVERT_ACTION.get(plan["step"], "revert"), prov)
        return dict(plan)

    def save_study(self, study: Mapping[str, Any], prov: Provenance) -> None:
        with transaction(self.db):
            self.db.table("gardener_studies").insert(
                {
                    "id": study["id"],
                    "objective": study["objective"],
                    "trials": json.dumps(study["trials"], sort_keys=True, default=str),
                    "best_params": json.dumps(study["best_params"], sort_keys=True),
                    "best_value": study["best_value"],
                    "pinned": int(bool(study["pinned"])),
                    **prov.columns(),
                },
                replace=True,
            )

    # -- helpers ----------------------------------------------------------------------------
    def _insert_plan(
        self, plan: Mapping[str, Any], status: str, checks: list[str], prov: Provenance
    ) -> None:
        self.db.table("gardener_plans").insert(
            {
                "id": plan["id"],
                "step": plan["step"],
                "plan": json.dumps(plan, sort_keys=True, default=str),
                "status": status,
                "checks": json.dumps(checks),
                "applied_at": prov.written_at if status == "applied" else None,
                **prov.columns(),
            }
        )

    def _update(self, table: str, key: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        sets = ", ".join(f"[{col}] = ?" for col in values)
        where = " AND ".join(f"[{col}] = ?" for col in key)
        cursor = self.db.execute(
            f"UPDATE [{table}] SET {sets} WHERE {where}", [*values.values(), *key.values()]
        )
        return int(cursor.rowcount)

    def _current(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        where = " AND ".join(f"[{col}] = ?" for col in key)
        rows = self._rows(f"SELECT * FROM [{table}] WHERE {where}", key.values())
        return rows[0] if rows else None

    def _write(self, change: Mapping[str, Any], prov: Provenance) -> None:
        table, key = change["table"], change["key"]
        if change["before"] is None:
            self.db.table(table).insert({**key, **change["after"], **prov.columns()})
            return
        current = self._current(table, key)
        if current is None or any(current[c] != v for c, v in change["before"].items()):
            raise PlanNotRevertible(f"{table} {key} changed since the plan was computed",
                                    "re-run the gardener to compute a fresh plan")
        self._update(table, key, change["after"])

    def _unwrite(self, change: Mapping[str, Any]) -> None:
        table, key = change["table"], change["key"]
        current = self._current(table, key)
        if current is None or any(current[c] != v for c, v in change["after"].items()):
            raise PlanNotRevertible(f"{table} {key} changed after the plan was applied",
                                    "revert later plans first")
        if change["before"] is not None:
            self._update(table, key, change["before"])
        elif change.get("revert"):
            self._update(table, key, change["revert"])
        else:
            where = " AND ".join(f"[{col}] = ?" for col in key)
            self.db.execute(f"DELETE FROM [{table}] WHERE {where}", list(key.values()))

    def _revisions(self, plan: Mapping[str, Any], action: str, prov: Provenance) -> None:
        touched = sorted({c["key"]["id"] for c in plan["changes"] if c["table"] == "concepts"})
        for concept_id in touched:
            row = self.db.execute(
                "SELECT COALESCE(MAX(revision), -1) + 1 FROM concept_revisions"
                " WHERE concept_id = ?", [concept_id],
            ).fetchone()
            self.db.table("concept_revisions").insert({
                "concept_id": concept_id,
                "revision": int(row[0]),
                "action": action,
                "snapshot": json.dumps(self.snapshot(concept_id), sort_keys=True, default=str),
                "reason": f"gardener plan {plan['id']}",
                **prov.columns(),
            })

    def snapshot(self, concept_id: str) -> dict[str, Any]:
        """The concept as ``ConceptHypothesis`` fields (evidence and live relations included)."""
        concept = self._current("concepts", {"id": concept_id}) or {}
        spans = self._rows(
            'SELECT source_id, message_id, quote AS text, confidence, start, "end"'
            " FROM evidence WHERE concept_id = ? ORDER BY id", [concept_id])
        relations = self._rows(
            "SELECT target_concept_id AS target_id, relation, confidence FROM relations"
            " WHERE source_concept_id = ? AND expired_at IS NULL ORDER BY id", [concept_id])
        return {
            "concept_id": concept_id,
            **{k: concept.get(k) for k in ("title", "type", "description", "state",
                                            "confidence", "revision_count", "first_seen",
                                            "last_seen")},
            "aliases": json.loads(concept.get("aliases") or "[]"),
            "evidence_spans": spans,
            "relations": relations,
        }
