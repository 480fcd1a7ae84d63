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


SOURCE_MIGRATIONS: list[Migration] = [
    Migration("0001_initial", _initial),
    Migration("0002_hostile_repairs", _repairs),
]
