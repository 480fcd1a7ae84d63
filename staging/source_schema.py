"""Schema of the source database: the single source of truth for raw messages."""

from __future__ import annotations

import sqlite_utils

from staging.db import Migration, execute_script

__all__ = ["SOURCE_MIGRATIONS"]


def _initial(db: sqlite_utils.Database) -> None:
    execute_script(
        db,
        """
        CREATE TABLE sources (
            id TEXT PRIMARY KEY,
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            format TEXT NOT NULL,
            imported_at TEXT NOT NULL,
            user_scope TEXT NOT NULL,
            assistant_scope TEXT NOT NULL
        );
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            source_id TEXT NOT NULL REFERENCES sources(id),
            external_id TEXT NOT NULL,
            title TEXT,
            created_at TEXT,
            updated_at TEXT,
            user_scope TEXT NOT NULL,
            assistant_scope TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            parent_id TEXT,
            external_id TEXT NOT NULL,
            role TEXT NOT NULL,
            author TEXT,
            text TEXT NOT NULL,
            parts TEXT NOT NULL DEFAULT '[]',
            created_at TEXT,
            position INTEGER NOT NULL,
            on_current_branch INTEGER NOT NULL,
            user_scope TEXT NOT NULL,
            assistant_scope TEXT NOT NULL,
            source_id TEXT NOT NULL REFERENCES sources(id),
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX idx_messages_conversation ON messages(conversation_id, position);
        CREATE INDEX idx_messages_parent ON messages(parent_id);
        CREATE INDEX idx_conversations_source ON conversations(source_id);
        CREATE TABLE quarantine (
            id TEXT PRIMARY KEY,
            source_path TEXT NOT NULL,
            source_sha256 TEXT NOT NULL,
            record TEXT NOT NULL,
            reason TEXT NOT NULL,
            excerpt TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        -- Full-text index over message text, browsable with any SQLite tool.
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            text, content='messages', content_rowid='rowid', tokenize='unicode61'
        );
        CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
        END;
        CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text)
                VALUES('delete', old.rowid, old.text);
        END;
        CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text)
                VALUES('delete', old.rowid, old.text);
            INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
        END;
        """,
    )


def _repairs(db: sqlite_utils.Database) -> None:
    """Values the importer changed in records it kept (lone surrogates, unreadable times)."""
    execute_script(
        db,
        """
        CREATE TABLE repairs (
            id TEXT PRIMARY KEY,
            source_path TEXT NOT NULL,
            source_sha256 TEXT NOT NULL,
            record TEXT NOT NULL,
            path TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    )


def _trust_policy(db: sqlite_utils.Database) -> None:
    execute_script(
        db,
        """
        -- Write policy per message (seed 003): sensitivity class assigned at ingest by rules
        -- and settings, retention evaluated at read time, redaction as a state transition.
        CREATE TABLE message_policy (
            message_id TEXT PRIMARY KEY,
            sensitivity TEXT NOT NULL,       -- public | internal | personal | restricted
            reasons TEXT NOT NULL DEFAULT '[]',  -- JSON list of rule names (never the text)
            expires_at TEXT,                 -- NULL: kept until forgotten
            basis TEXT NOT NULL DEFAULT 'indefinite',  -- session|consent|contract|indefinite
            consent_ref TEXT,
            redaction_state TEXT NOT NULL DEFAULT 'none',  -- none | applied | required
            redacted_fields TEXT NOT NULL DEFAULT '[]',
            writer TEXT NOT NULL,
            written_at TEXT NOT NULL
        );
        CREATE INDEX idx_message_policy_expires ON message_policy(expires_at);

        -- Content-free ingest receipts (same shape as the staging ``receipts``): ingest writes
        -- only this file, so its boundary is recorded here, beside the source of truth.
        CREATE TABLE receipts (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            user_scope TEXT NOT NULL,
            assistant_scope TEXT NOT NULL,
            stage TEXT NOT NULL,
            target TEXT NOT NULL,
            version TEXT NOT NULL,
            source_version TEXT NOT NULL,
            status TEXT NOT NULL,
            at_utc TEXT NOT NULL,
            depends_on_version TEXT,
            worker TEXT,
            counts TEXT NOT NULL DEFAULT '{}'
        );
        """,
    )


SOURCE_MIGRATIONS: list[Migration] = [
    Migration("0001_initial", _initial),
    Migration("0002_hostile_repairs", _repairs),
]
SOURCE_MIGRATIONS.append(Migration("0003_trust_policy", _trust_policy))
