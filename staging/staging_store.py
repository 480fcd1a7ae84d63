"""The staging database: runs and the audit trail of every stage.

Each responsibility keeps its own module of queries over this connection (segments, LLM log,
concepts, topics, receipts); this module only opens the file and records runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from ontology import stable_id
from staging.db import apply_migrations, open_database, transaction, utc_now
from staging.errors import StagingError
from staging.staging_schema import STAGING_MIGRATIONS

__all__ = ["InvalidProvenance", "Provenance", "Run", "StagingStore"]


@dataclass(frozen=True)
class Run:
    id: str
    stage: str
    user_scope: str
    assistant_scope: str

    def provenance(self, writer: str) -> Provenance:
        return Provenance(self.id, self.user_scope, self.assistant_scope, writer, utc_now())


@dataclass(frozen=True)
class Provenance:
    """The columns every staging row carries."""

    run_id: str
    user_scope: str
    assistant_scope: str
    writer: str
    written_at: str

    def __post_init__(self) -> None:
        """Checked at the write boundary: a derived row never lands without its provenance."""
        missing = [name for name in ("run_id", "user_scope", "assistant_scope", "writer",
                                     "written_at") if not getattr(self, name)]
        if missing:
            raise InvalidProvenance(f"provenance without {', '.join(missing)}")
        try:
            aware = datetime.fromisoformat(self.written_at).tzinfo is not None
        except ValueError:
            aware = False
        if not aware:
            raise InvalidProvenance(f"written_at {self.written_at!r} is not a tz-aware time")

    def columns(self) -> dict[str, str]:
        return {
            "run_id": self.run_id,
            "user_scope": self.user_scope,
            "assistant_scope": self.assistant_scope,
            "writer": self.writer,
            "written_at": self.written_at,
        }


def _receipt(db: sqlite_utils.Database, run: Run, status: str) -> None:
    from staging.receipts import run_receipt  # receipts imports this module

    run_receipt(db, run, status)


class InvalidProvenance(StagingError):
    """A write without complete provenance, rejected before anything is stored."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "build provenance with Run.provenance(writer)")


class StagingStore:
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    @classmethod
    def open(cls, path: Path | str) -> StagingStore:
        db = open_database(path)
        apply_migrations(db, STAGING_MIGRATIONS)
        return cls(db)

    def close(self) -> None:
        self.db.conn.close()

    def start_run(
        self,
        stage: str,
        config: dict[str, Any],
        code_version: str,
        user_scope: str,
        assistant_scope: str,
    ) -> Run:
        started = utc_now()
        config_json = json.dumps(config, sort_keys=True, default=str)
        run_id = stable_id("run", stage, config_json, started)
        with transaction(self.db):
            self.db.table("runs").insert(
                {
                    "id": run_id,
                    "stage": stage,
                    "config_hash": stable_id("cfg", config_json),
                    "code_version": code_version,
                    "started_at": started,
                    "finished_at": None,
                    "status": "started",
                    "user_scope": user_scope,
                    "assistant_scope": assistant_scope,
                    "stats": "{}",
                    "error": None,
                }
            )
            run = Run(run_id, stage, user_scope, assistant_scope)
            _receipt(self.db, run, "started")
        return run

    def finish_run(
        self, run: Run, status: str, stats: dict[str, Any] | None = None, error: str | None = None
    ) -> None:
        with transaction(self.db):
            self.db.table("runs").update(
                run.id,
                {
                    "finished_at": utc_now(),
                    "status": status,
                    "stats": json.dumps(stats or {}, sort_keys=True, default=str),
                    "error": error,
                },
            )
            _receipt(self.db, run, "committed" if status == "completed" else "failed")

    def count(self, table: str, where: str | None = None, params: list[Any] | None = None) -> int:
        sql = f"SELECT COUNT(*) FROM [{table}]" + (f" WHERE {where}" if where else "")
        row = self.db.execute(sql, params or []).fetchone()
        return int(row[0])
