"""Clusterers with the sklearn contract (``fit(X)`` then ``labels_``, optional ``probabilities_``).

Label ``-1`` means outlier. ``make_hdbscan`` builds the default clusterer; ``SmallDataClusterer``
is the deterministic fallback for inputs too small for UMAP + HDBSCAN (average-linkage
agglomerative clustering on cosine distance with a distance threshold; singletons are outliers).
``cluster_vectors`` runs any reducer + clusterer pair and returns plain arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gardener.reduce import IdentityReducer, SampledUMAP, ensure_numba_cache

__all__ = [
    "HDBSCAN_DEFAULTS",
    "SMALL_INPUT",
    "ClusterResult",
    "SmallDataClusterer",
    "cluster_vectors",
    "default_parts",
    "make_hdbscan",
]

HDBSCAN_DEFAULTS: dict[str, Any] = {
    "min_cluster_size": 10,
    "min_samples": None,
    "cluster_selection_method": "eom",
}

#: Below this many concepts the gardener uses the identity reducer + ``SmallDataClusterer``.
SMALL_INPUT = 40


def make_hdbscan(params: dict[str, Any], *, validity: bool = False) -> Any:
    """An hdbscan.HDBSCAN; ``validity=True`` builds the tree that ``relative_validity_`` needs."""
    ensure_numba_cache()
    import hdbscan

    merged = {**HDBSCAN_DEFAULTS, **{k: v for k, v in params.items() if k in HDBSCAN_DEFAULTS}}
    min_samples = merged["min_samples"]
    return hdbscan.HDBSCAN(
        min_cluster_size=int(merged["min_cluster_size"]),
        min_samples=None if min_samples is None else int(min_samples),
        cluster_selection_method=str(merged["cluster_selection_method"]),
        gen_min_span_tree=validity,
        core_dist_n_jobs=1,
    )


class SmallDataClusterer:
    """Agglomerative clustering on cosine distance; clusters smaller than ``min_size`` -> -1."""

    def __init__(self, distance_threshold: float = 0.5, min_size: int = 2) -> None:
        self.distance_threshold = distance_threshold
        self.min_size = min_size
        self.labels_: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self.probabilities_: npt.NDArray[np.float64] = np.empty(0)

    def fit(self, X: npt.NDArray[np.float32]) -> SmallDataClusterer:
        from sklearn.cluster import AgglomerativeClustering

        n = len(X)
        if n < 2:
            self.labels_ = np.full(n, -1, dtype=np.int64)
            self.probabilities_ = np.zeros(n)
            return self
        raw = AgglomerativeClustering(
            n_clusters=None,
            metric="cosine",
            linkage="average",
            distance_threshold=self.distance_threshold,
        ).fit(X).labels_
        self.labels_ = _renumber(raw, self.min_size)
        self.probabilities_ = _centroid_probabilities(X, self.labels_)
        return self


def _renumber(raw: npt.NDArray[np.int64], min_size: int) -> npt.NDArray[np.int64]:
    """Small clusters -> -1; the rest numbered 0.. by first occurrence (deterministic)."""
    sizes = np.bincount(raw)
    labels = np.full(len(raw), -1, dtype=np.int64)
    mapping: dict[int, int] = {}
    for index, label in enumerate(raw.tolist()):
        if sizes[label] >= min_size:
            labels[index] = mapping.setdefault(label, len(mapping))
    return labels


def _centroid_probabilities(
    X: npt.NDArray[np.float32], labels: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    unit = X / (np.linalg.norm(X, axis=1, keepdims=True) + 1e-12)
    probs = np.zeros(len(X))
    for label in set(labels.tolist()) - {-1}:
        members = labels == label
        centroid = unit[members].mean(axis=0)
        centroid /= np.linalg.norm(centroid) + 1e-12
        probs[members] = np.clip(unit[members] @ centroid, 0.0, 1.0)
    return probs


@dataclass(frozen=True)
class ClusterResult:
    labels: npt.NDArray[np.int64]
    probabilities: npt.NDArray[np.float64]
    reduced: npt.NDArray[np.float32]
    relative_validity: float | None = None


def default_parts(n: int, params: dict[str, Any], seed: int) -> tuple[Any, Any]:
    """(reducer, clusterer) for n inputs: the small fallback, else sampled UMAP + HDBSCAN."""
    if n < SMALL_INPUT:
        return IdentityReducer(), SmallDataClusterer()
    params = {**params, "n_neighbors": min(int(params.get("n_neighbors", 15)), n - 1)}
    return SampledUMAP(params, seed), make_hdbscan(params, validity=True)


def cluster_vectors(
    vectors: npt.NDArray[np.float32], reducer: Any, clusterer: Any
) -> ClusterResult:
    """Reduce, cluster, and return labels, probabilities (1.0 when absent) and the reduced space."""
    reduced = np.asarray(reducer.fit_transform(vectors), dtype=np.float32)
    fitted = clusterer.fit(reduced)
    labels = np.asarray(fitted.labels_, dtype=np.int64)
    probs = getattr(fitted, "probabilities_", None)
    probabilities = np.ones(len(labels)) if probs is None else np.asarray(probs, dtype=np.float64)
    probabilities = np.where(labels < 0, 0.0, probabilities)
    validity = None
    if getattr(fitted, "gen_min_span_tree", False) and len(set(labels.tolist()) - {-1}) > 1:
        validity = float(fitted.relative_validity_)
    return ClusterResult(labels, probabilities, reduced, validity)
