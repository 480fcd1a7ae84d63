"""SQLite stores: the source db (raw messages, the source of truth) and the staging db."""

from staging.db import Migration, apply_migrations, execute_script, open_database, transaction
from staging.source_store import ImportCounts, QuarantinedRecord, RepairedValue, SourceStore
from staging.staging_store import Provenance, Run, StagingStore

__all__ = [
    "ImportCounts",
    "Migration",
    "Provenance",
    "QuarantinedRecord",
    "RepairedValue",
    "Run",
    "SourceStore",
    "StagingStore",
    "apply_migrations",
    "execute_script",
    "open_database",
    "transaction",
]
