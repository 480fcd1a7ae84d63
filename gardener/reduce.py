"""Dimensionality reducers with the sklearn contract: ``fit_transform(X) -> array``.

Any object with ``fit_transform`` works (BERTopic's rule); ``IdentityReducer`` skips the step.
umap-learn is imported lazily, after pointing numba's cache at a persistent directory so the
~30 s of compilation happens once per machine, not once per process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "UMAP_DEFAULTS",
    "IdentityReducer",
    "SampledUMAP",
    "ensure_numba_cache",
    "exact_knn",
    "make_umap",
    "unit_rows",
]

Array = npt.NDArray[np.float32]

UMAP_DEFAULTS: dict[str, Any] = {"n_neighbors": 15, "n_components": 5, "min_dist": 0.0}


def ensure_numba_cache() -> None:
    """Point NUMBA_CACHE_DIR at ``~/.cache/conceptmem/numba`` unless the user set it."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        path = Path.home() / ".cache" / "conceptmem" / "numba"
        path.mkdir(parents=True, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = str(path)


class IdentityReducer:
    """The no-op reducer: returns its input (as float32)."""

    def fit(self, X: Array) -> IdentityReducer:
        return self

    def transform(self, X: Array) -> Array:
        return np.asarray(X, dtype=np.float32)

    def fit_transform(self, X: Array) -> Array:
        return self.transform(X)


def unit_rows(X: Array) -> Array:
    """Rows scaled to unit length (float32)."""
    array = np.asarray(X, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


def exact_knn(
    X: Array, k: int, *, against: Array | None = None, chunk: int = 2048
) -> tuple[npt.NDArray[np.int32], Array]:
    """Exact cosine kNN by chunked matrix products: (indices, distances), nearest first.

    Without ``against`` the rows are searched among themselves (each row is its own first
    neighbour at distance 0, as UMAP expects).
    """
    rows = unit_rows(X)
    pool = rows if against is None else unit_rows(against)
    k = min(k, len(pool))
    indices = np.empty((len(rows), k), dtype=np.int32)
    distances = np.empty((len(rows), k), dtype=np.float32)
    for start in range(0, len(rows), chunk):
        sims = rows[start : start + chunk] @ pool.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top_sims = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-top_sims, axis=1, kind="stable")
        indices[start : start + chunk] = np.take_along_axis(top, order, axis=1)
        distances[start : start + chunk] = np.clip(
            1.0 - np.take_along_axis(top_sims, order, axis=1), 0.0, 2.0)
    return indices, distances


def make_umap(
    params: dict[str, Any],
    seed: int,
    knn: tuple[npt.NDArray[np.int32], Array] | None = None,
    **extra: Any,
) -> Any:
    """A seeded umap.UMAP on cosine distance from ``n_neighbors``/``n_components``/``min_dist``.

    ``knn`` (from ``exact_knn``, at least ``n_neighbors`` wide) skips UMAP's own neighbour
    search, whose numba compilation alone costs about a minute per process here.
    """
    ensure_numba_cache()
    import warnings

    import umap

    warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
    warnings.filterwarnings("ignore", message="precomputed_knn", category=UserWarning)
    merged = {**UMAP_DEFAULTS, **{k: v for k, v in params.items() if k in UMAP_DEFAULTS}}
    n_neighbors = int(merged["n_neighbors"])
    if knn is not None:
        extra["precomputed_knn"] = (knn[0][:, :n_neighbors], knn[1][:, :n_neighbors], None)
    return umap.UMAP(
        n_neighbors=n_neighbors,
        n_components=int(merged["n_components"]),
        min_dist=float(merged["min_dist"]),
        metric="cosine",
        random_state=seed,
        **extra,
    )


class SampledUMAP:
    """UMAP on exact neighbours, fitted on a seeded sample of at most ``fit_size`` rows.

    Rows outside the sample are placed at the similarity-weighted mean of the embeddings of
    their ``n_neighbors`` nearest sample rows, searched in a ``pca_dims`` PCA space fitted on
    the sample (cheap enough for 632,868 rows). ``n_epochs`` None keeps UMAP's default.
    """

    def __init__(self, params: dict[str, Any], seed: int, fit_size: int = 10_000,
                 n_epochs: int | None = 200, pca_dims: int = 64) -> None:
        self.params = {**UMAP_DEFAULTS, **params}
        self.seed = seed
        self.fit_size = fit_size
        self.n_epochs = n_epochs
        self.pca_dims = pca_dims

    def _fit(self, X: Array) -> Array:
        k = min(int(self.params["n_neighbors"]), len(X) - 1)
        params = {**self.params, "n_neighbors": k}
        model = make_umap(params, self.seed, exact_knn(X, k), n_epochs=self.n_epochs)
        return np.asarray(model.fit_transform(X), dtype=np.float32)

    def fit_transform(self, X: Array) -> Array:
        n = len(X)
        if n <= self.fit_size:
            return self._fit(X)
        rng = np.random.default_rng(self.seed)
        sample = np.sort(rng.choice(n, size=self.fit_size, replace=False))
        embedded = self._fit(X[sample])
        out = np.empty((n, embedded.shape[1]), dtype=np.float32)
        out[sample] = embedded
        rest = np.setdiff1d(np.arange(n), sample)
        out[rest] = self._place(X, sample, rest, embedded)
        return out

    def _place(self, X: Array, sample: npt.NDArray[np.int64],
               rest: npt.NDArray[np.int64], embedded: Array) -> Array:
        from sklearn.decomposition import PCA

        dims = min(self.pca_dims, X.shape[1], len(sample))
        pca = PCA(n_components=dims, svd_solver="randomized", random_state=self.seed)
        pool = pca.fit_transform(X[sample]).astype(np.float32)
        k = min(int(self.params["n_neighbors"]), len(sample))
        placed = np.empty((len(rest), embedded.shape[1]), dtype=np.float32)
        for start in range(0, len(rest), 50_000):
            block = rest[start : start + 50_000]
            points = pca.transform(X[block]).astype(np.float32)
            idx, dist = exact_knn(points, k, against=pool)
            spread = dist.mean(axis=1, keepdims=True) - dist[:, :1] + 1e-6
            weights = np.exp(-(dist - dist[:, :1]) / spread)
            weights /= weights.sum(axis=1, keepdims=True)
            placed[start : start + len(block)] = np.einsum("nk,nkd->nd", weights, embedded[idx])
        return placed
