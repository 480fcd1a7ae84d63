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
    "make_umap",
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


def make_umap(params: dict[str, Any], seed: int, **extra: Any) -> Any:
    """A seeded umap.UMAP on cosine distance from ``n_neighbors``/``n_components``/``min_dist``."""
    ensure_numba_cache()
    import warnings

    import umap

    warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)
    merged = {**UMAP_DEFAULTS, **{k: v for k, v in params.items() if k in UMAP_DEFAULTS}}
    return umap.UMAP(
        n_neighbors=int(merged["n_neighbors"]),
        n_components=int(merged["n_components"]),
        min_dist=float(merged["min_dist"]),
        metric="cosine",
        random_state=seed,
        **extra,
    )


class SampledUMAP:
    """UMAP fitted on a seeded sample of at most ``fit_size`` rows; the rest are ``transform``-ed.

    For large inputs this trades a little fidelity for a fit whose cost does not grow with n.
    """

    def __init__(self, params: dict[str, Any], seed: int, fit_size: int = 50_000) -> None:
        self.params = params
        self.seed = seed
        self.fit_size = fit_size
        self.model: Any = None

    def fit_transform(self, X: Array) -> Array:
        n = len(X)
        self.model = make_umap(self.params, self.seed, low_memory=True)
        if n <= self.fit_size:
            return np.asarray(self.model.fit_transform(X), dtype=np.float32)
        rng = np.random.default_rng(self.seed)
        sample = np.sort(rng.choice(n, size=self.fit_size, replace=False))
        out = np.empty((n, int(self.model.n_components)), dtype=np.float32)
        out[sample] = self.model.fit_transform(X[sample])
        rest = np.setdiff1d(np.arange(n), sample)
        for start in range(0, len(rest), 100_000):
            block = rest[start : start + 100_000]
            out[block] = self.model.transform(X[block])
        return out
