"""Gardener fixtures: a real staging db in tmp_path, a row builder, a deterministic embedder."""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

os.environ.setdefault(
    "NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "conceptmem" / "numba")
)

from ontology import stable_id
from staging import StagingStore
from staging.db import transaction

PROV = {"run_id": "run_test", "user_scope": "u", "assistant_scope": "a",
        "writer": "test", "written_at": "2026-01-01T00:00:00+00:00"}
GARDEN_TABLES = ("concepts", "evidence", "relations", "concept_links", "topics",
                 "topic_memberships", "parent_topics", "topic_outliers")


class WordEmbedder:
    """Bag of words hashed into 256 dims, L2-normalised: shared words -> high cosine."""

    name = "test-words"
    dim = 256

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.casefold().replace(".", " ").replace(";", " ").split():
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


class Builder:
    """Inserts concepts, evidence and relations straight into the staging tables."""

    def __init__(self, staging: StagingStore) -> None:
        self.staging = staging

    def concept(self, concept_id: str, title: str, *, type: str = "project",
                description: str = "", aliases: Sequence[str] = (), state: str = "active",
                quotes: Sequence[str] = ("evidence",), last_seen: str = "2026-01-01T00:00:00+00:00",
                confidence: float = 0.8) -> str:
        with transaction(self.staging.db):
            self.staging.db["concepts"].insert({
                "id": concept_id, "title": title, "type": type,
                "description": description or title, "state": state,
                "confidence": confidence, "aliases": json.dumps(list(aliases)),
                "revision_count": 1, "first_seen": "2025-06-01T00:00:00+00:00",
                "last_seen": last_seen, "merged_into": None,
                "created_at": "2025-06-01T00:00:00+00:00",
                "updated_at": "2025-06-01T00:00:00+00:00", **PROV,
            })
            for index, quote in enumerate(quotes):
                self.staging.db["evidence"].insert({
                    "id": stable_id("ev", concept_id, index), "concept_id": concept_id,
                    "message_id": f"msg_{concept_id}_{index}", "source_id": "src",
                    "quote": quote, "start": 0, "end": len(quote), "confidence": 0.9,
                    "mention_id": None, **PROV,
                })
        return concept_id

    def relation(self, relation_id: str, source: str, target: str, relation: str,
                 valid_at: str, created_at: str = "2026-02-01T00:00:00+00:00") -> str:
        with transaction(self.staging.db):
            self.staging.db["relations"].insert({
                "id": relation_id, "source_concept_id": source, "target_concept_id": target,
                "relation": relation, "confidence": 0.9, "valid_at": valid_at,
                "invalid_at": None, "created_at": created_at, "expired_at": None,
                "evidence_message_id": None, "invalidated_by": None, **PROV,
            })
        return relation_id


def dump(staging: StagingStore, tables: Sequence[str] = GARDEN_TABLES) -> dict[str, Any]:
    """Every row of the given tables, sorted, for exact before/after comparisons."""
    out = {}
    for table in tables:
        rows = [dict(row) for row in staging.db[table].rows]
        out[table] = sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))
    return out


@pytest.fixture
def staging(tmp_path: Path) -> StagingStore:
    store = StagingStore.open(tmp_path / "staging.db")
    yield store
    store.close()


@pytest.fixture
def build(staging: StagingStore) -> Builder:
    return Builder(staging)


@pytest.fixture
def embedder() -> WordEmbedder:
    return WordEmbedder()


@pytest.fixture
def snapshot() -> Any:
    """``snapshot(staging)``: every row of the gardener's tables, for exact comparisons."""
    return dump


@pytest.fixture
def prov() -> Any:
    from staging import Provenance

    return Provenance(**PROV)


@pytest.fixture
def builder_for() -> Any:
    """``builder_for(staging)``: a ``Builder`` over any staging store (e.g. a CLI store)."""
    return Builder
