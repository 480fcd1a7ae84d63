"""The embedding cache: float32 vectors keyed by (text hash, model) in the staging db."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from staging.db import transaction, utc_now
from staging.staging_store import StagingStore

__all__ = ["EmbeddingCache"]

_CHUNK = 500


class EmbeddingCache:
    def __init__(self, staging: StagingStore) -> None:
        self.staging = staging
        self.conn = staging.db.conn

    def get_many(
        self, hashes: Iterable[str], model: str, dim: int | None = None
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Cached vectors for the given text hashes (missing ones are simply absent)."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            rows = self.conn.execute(
                "SELECT text_hash, dim, vector FROM embeddings WHERE model = ? AND text_hash IN"
                f" ({','.join('?' * len(chunk))})",
                [model, *chunk],
            )
            for key, stored_dim, blob in rows:
                if dim is not None and stored_dim != dim:
                    continue
                found[str(key)] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put_many(self, vectors: Mapping[str, npt.NDArray[np.float32]], model: str) -> int:
        """Store vectors by text hash; existing rows are kept. Returns the number inserted."""
        now = utc_now()
        rows = [
            (key, model, int(vec.shape[0]), np.ascontiguousarray(vec, np.float32).tobytes(), now)
            for key, vec in vectors.items()
        ]
        with transaction(self.staging.db):
            before = self.conn.total_changes
            self.conn.executemany(
                "INSERT OR IGNORE INTO embeddings (text_hash, model, dim, vector, created_at)"
                " VALUES (?,?,?,?,?)",
                rows,
            )
            return self.conn.total_changes - before

    def count(self, model: str | None = None) -> int:
        if model is None:
            return self.staging.count("embeddings")
        return self.staging.count("embeddings", "model = ?", [model])
