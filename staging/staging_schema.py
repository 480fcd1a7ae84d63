"""Schema of the staging database: every intermediate state of the pipeline, for audit.

Every row carries its ``run_id``, ``user_scope``, ``assistant_scope`` and provenance
(``writer`` component and ``written_at``); rows that derive from messages name them.
Migrations are append-only: add a new ``Migration`` at the end, never edit a released one.
"""

from __future__ import annotations

import sqlite_utils

from staging.db import Migration, execute_script

__all__ = ["STAGING_MIGRATIONS"]

_PROV = """
            run_id TEXT NOT NULL,
            user_scope TEXT NOT NULL,
            assistant_scope TEXT NOT NULL,
            writer TEXT NOT NULL,
            written_at TEXT NOT NULL"""


def _initial(db: sqlite_utils.Database) -> None:
    execute_script(
        db,
        f"""
        -- One row per execution of a stage (ingest, segment, extract, map, sync, garden).
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            stage TEXT NOT NULL,
            config_hash TEXT NOT NULL,
            code_version TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,            -- started | completed | failed
            user_scope TEXT NOT NULL,
            assistant_scope TEXT NOT NULL,
            stats TEXT NOT NULL DEFAULT '{{}}',
            error TEXT
        );

        -- Token-bounded windows over one branch of a conversation.
        CREATE TABLE segments (
            id TEXT PRIMARY KEY,             -- stable: hash of the ordered message ids
            conversation_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            branch TEXT NOT NULL,            -- 'current' or the leaf message id of a side branch
            token_estimate INTEGER NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',  -- pending | extracted | failed
            source_message_ids TEXT NOT NULL,        -- JSON list, provenance{_PROV}
        );
        CREATE TABLE segment_messages (
            segment_id TEXT NOT NULL REFERENCES segments(id),
            message_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (segment_id, message_id)
        );
        CREATE INDEX idx_segment_messages_message ON segment_messages(message_id);

        -- Every LLM call, successful or not, with request and raw reply.
        CREATE TABLE llm_calls (
            id TEXT PRIMARY KEY,
            segment_id TEXT,
            schema_name TEXT NOT NULL,
            schema_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            base_url_host TEXT NOT NULL,
            prompt_hash TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            request TEXT NOT NULL,
            reply TEXT,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            tokens_estimated INTEGER NOT NULL DEFAULT 0,
            latency_ms REAL,
            status TEXT NOT NULL,            -- ok | invalid | error
            error_class TEXT,                -- extra_keys, missing_fields, bad_enum,
                                             -- truncated_json, rate_limited, server_error, ...)
            error_detail TEXT,{_PROV}
        );
        CREATE INDEX idx_llm_calls_segment ON llm_calls(segment_id);

        -- Validated extraction payloads (never unvalidated ones).
        CREATE TABLE extractions (
            id TEXT PRIMARY KEY,
            segment_id TEXT NOT NULL,
            extractor TEXT NOT NULL,         -- 'llm:<model>' or 'offline:<version>'
            llm_call_id TEXT,
            schema_hash TEXT NOT NULL,
            payload TEXT NOT NULL,
            source_message_ids TEXT NOT NULL,{_PROV}
        );
        CREATE UNIQUE INDEX idx_extractions_segment ON extractions(segment_id, extractor);

        -- Raw mentions from extractions, after evidence verification.
        CREATE TABLE mentions (
            id TEXT PRIMARY KEY,
            extraction_id TEXT NOT NULL REFERENCES extractions(id),
            ordinal INTEGER NOT NULL,
            title TEXT NOT NULL,
            type TEXT NOT NULL,
            description TEXT NOT NULL,
            quote TEXT NOT NULL,
            message_id TEXT NOT NULL,
            start INTEGER,
            "end" INTEGER,
            verified INTEGER NOT NULL,
            reject_reason TEXT,
            relations TEXT NOT NULL DEFAULT '[]',{_PROV}
        );

        -- Mapper decisions: create | attach | refine | reject, with scores and reasons.
        CREATE TABLE mapper_decisions (
            id TEXT PRIMARY KEY,
            mention_id TEXT NOT NULL,
            action TEXT NOT NULL,
            concept_id TEXT,
            scores TEXT NOT NULL,
            reason TEXT NOT NULL,
            source_message_ids TEXT NOT NULL,{_PROV}
        );
        CREATE UNIQUE INDEX idx_mapper_decisions_mention ON mapper_decisions(mention_id);

        -- Current state of each concept (ConceptHypothesis fields minus lists).
        CREATE TABLE concepts (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            type TEXT NOT NULL,
            description TEXT NOT NULL,
            state TEXT NOT NULL,
            confidence REAL NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            revision_count INTEGER NOT NULL DEFAULT 0,
            first_seen TEXT,
            last_seen TEXT,
            merged_into TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,{_PROV}
        );
        CREATE INDEX idx_concepts_state ON concepts(state);

        -- Append-only snapshots of a concept after each change.
        CREATE TABLE concept_revisions (
            concept_id TEXT NOT NULL,
            revision INTEGER NOT NULL,
            action TEXT NOT NULL,            -- create|refine|merge|unmerge|split|decay
            snapshot TEXT NOT NULL,          -- ConceptHypothesis JSON
            reason TEXT NOT NULL DEFAULT '',{_PROV},
            PRIMARY KEY (concept_id, revision)
        );

        -- Verified evidence spans: the lineage from concept to message.
        CREATE TABLE evidence (
            id TEXT PRIMARY KEY,             -- stable: hash(concept, message, start, end)
            concept_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            source_id TEXT NOT NULL,
            quote TEXT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            confidence REAL NOT NULL,
            mention_id TEXT,{_PROV}
        );
        CREATE INDEX idx_evidence_concept ON evidence(concept_id);
        CREATE INDEX idx_evidence_message ON evidence(message_id);

        -- Typed, bitemporal relations between concepts. Invalidated, never deleted.
        CREATE TABLE relations (
            id TEXT PRIMARY KEY,
            source_concept_id TEXT NOT NULL,
            target_concept_id TEXT NOT NULL,
            relation TEXT NOT NULL,
            confidence REAL NOT NULL,
            valid_at TEXT,
            invalid_at TEXT,
            created_at TEXT NOT NULL,
            expired_at TEXT,
            evidence_message_id TEXT,
            invalidated_by TEXT,{_PROV}
        );
        CREATE INDEX idx_relations_source ON relations(source_concept_id);

        -- Concept-to-concept lineage from the gardener: merged_into, split_into.
        CREATE TABLE concept_links (
            from_concept_id TEXT NOT NULL,
            to_concept_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            plan_id TEXT,
            active INTEGER NOT NULL DEFAULT 1,{_PROV},
            PRIMARY KEY (from_concept_id, to_concept_id, kind)
        );

        -- Embedding cache by text hash and model.
        CREATE TABLE embeddings (
            text_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (text_hash, model)
        );

        -- Topics and memberships (outliers have no membership row).
        CREATE TABLE topics (
            id TEXT PRIMARY KEY,
            label TEXT NOT NULL,
            keywords TEXT NOT NULL,
            size INTEGER NOT NULL,
            active INTEGER NOT NULL DEFAULT 1,
            plan_id TEXT,{_PROV}
        );
        CREATE TABLE topic_memberships (
            concept_id TEXT NOT NULL,
            topic_id TEXT NOT NULL,
            probability REAL NOT NULL,
            active INTEGER NOT NULL DEFAULT 1,
            plan_id TEXT,{_PROV},
            PRIMARY KEY (concept_id, topic_id)
        );

        -- Gardener plans: computed, checked, then applied in one transaction.
        CREATE TABLE gardener_plans (
            id TEXT PRIMARY KEY,
            step TEXT NOT NULL,              -- topics | merge | split | decay | invalidate
            plan TEXT NOT NULL,
            status TEXT NOT NULL,            -- planned | rejected | applied | reverted
            checks TEXT NOT NULL DEFAULT '[]',
            applied_at TEXT,{_PROV}
        );
        CREATE TABLE gardener_studies (
            id TEXT PRIMARY KEY,
            objective TEXT NOT NULL,
            trials TEXT NOT NULL,
            best_params TEXT NOT NULL,
            best_value REAL,
            pinned INTEGER NOT NULL DEFAULT 0,{_PROV}
        );

        -- Graph sync receipts (content-free: ids, counts, status, times).
        CREATE TABLE sync_receipts (
            id TEXT PRIMARY KEY,
            backend TEXT NOT NULL,
            status TEXT NOT NULL,
            counts TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,{_PROV}
        );
        """,
    )


def _topics_hierarchy(db: sqlite_utils.Database) -> None:
    execute_script(
        db,
        f"""
        -- A topic's parent in the topic hierarchy (NULL: a top-level topic).
        ALTER TABLE topics ADD COLUMN parent_id TEXT;
        -- How a concept joined its topic: cluster (the clustering put it there), nearest (an
        -- outlier reassigned to its nearest topic, on request) or incremental (a new concept
        -- assigned to an existing topic without a re-cluster).
        ALTER TABLE topic_memberships ADD COLUMN assignment TEXT NOT NULL DEFAULT 'cluster';

        -- Parent topics: groups of topics (agglomerative clustering of topic centroids).
        CREATE TABLE parent_topics (
            id TEXT PRIMARY KEY,
            label TEXT NOT NULL,
            keywords TEXT NOT NULL,
            size INTEGER NOT NULL,           -- concepts under it (sum of its topics' sizes)
            children INTEGER NOT NULL,       -- topics under it
            active INTEGER NOT NULL DEFAULT 1,
            plan_id TEXT,{_PROV}
        );

        -- Concepts the last clustering or assignment left in no topic, visibly, with the
        -- nearest topic and its cosine similarity (what a reassignment would have chosen).
        CREATE TABLE topic_outliers (
            concept_id TEXT PRIMARY KEY,
            nearest_topic_id TEXT,
            similarity REAL,
            active INTEGER NOT NULL DEFAULT 1,
            plan_id TEXT,{_PROV}
        );
        """,
    )


STAGING_MIGRATIONS: list[Migration] = [Migration("0001_initial", _initial)]
STAGING_MIGRATIONS.append(Migration("0002_topics_hierarchy", _topics_hierarchy))
