"""UMAP + HDBSCAN on generated blobs with fixed seeds (numba: few, small, marked slow)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import homogeneity_score

from gardener.cluster import SmallDataClusterer, cluster_vectors, default_parts, make_hdbscan
from gardener.objective import stability, topic_count
from gardener.reduce import IdentityReducer, SampledUMAP, exact_knn
from gardener.service import garden
from gardener.tuning import scale_params, tune


def blobs(n: int = 300, centers: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_blobs(n_samples=n, n_features=64, centers=centers, cluster_std=3.0,
                      center_box=(-20, 20), random_state=seed)
    return X.astype(np.float32), y


@pytest.mark.slow
def test_tuned_umap_hdbscan_finds_the_blobs_deterministically():
    X, truth = blobs()
    study = tune(X, seed=11, trials=4, sample_size=2000)
    assert len(study.trials) == 4 and study.best_value is not None
    assert all(t["stability"] is not None for t in study.trials)
    assert set(study.best_params) >= {"n_neighbors", "min_cluster_size", "min_samples"}

    first = cluster_vectors(X, *default_parts(len(X), study.best_params, seed=11))
    again = cluster_vectors(X, *default_parts(len(X), study.best_params, seed=11))
    assert np.array_equal(first.labels, again.labels)  # same seed + data -> same topics
    assert topic_count(first.labels) == 5
    assert stability(first.labels, truth) > 0.9
    assert first.relative_validity is not None and first.relative_validity > 0.3

    sampled = SampledUMAP(study.best_params, seed=11, fit_size=150).fit_transform(X)
    labels = cluster_vectors(sampled, IdentityReducer(), make_hdbscan(study.best_params)).labels
    kept = labels >= 0
    assert kept.mean() > 0.8
    assert homogeneity_score(truth[kept], labels[kept]) > 0.95  # placed rows land in their blob


@pytest.mark.slow
def test_garden_tunes_and_stores_the_study(staging, build, embedder):
    words = {"garden": "soil compost plants vegetables seeds",
             "music": "guitar piano songs chords notes",
             "code": "python tests release packaging bugs"}
    for topic, description in words.items():
        for index in range(20):
            build.concept(f"c_{topic}_{index:02d}", f"{topic} item{index}",
                          description=description, quotes=[f"{topic} {index}"],
                          last_seen="2026-05-01T00:00:00+00:00")
    report = garden(staging, embedder, seed=5, trials=3, dry_run=False,
                    now=datetime(2026, 6, 1, tzinfo=UTC))
    assert report.study is not None and len(report.study.trials) == 3
    row = next(staging.db["gardener_studies"].rows)
    assert json.loads(row["best_params"]) == report.study.best_params
    assert len(json.loads(row["trials"])) == 3 and "validity" in row["objective"]
    assert staging.count("topics", "active = 1") >= 2


def test_exact_knn_and_small_fallback_are_deterministic():
    X, truth = blobs(n=60, centers=3, seed=4)
    idx, dist = exact_knn(X, 5)
    assert (idx[:, 0] == np.arange(60)).all() and np.allclose(dist[:, 0], 0, atol=1e-5)
    assert (np.diff(dist, axis=1) >= -1e-6).all()
    a = SmallDataClusterer(0.5).fit(X)
    b = SmallDataClusterer(0.5).fit(X)
    assert np.array_equal(a.labels_, b.labels_) and topic_count(a.labels_) == 3
    assert stability(a.labels_, truth) == pytest.approx(1.0)
    assert scale_params({"min_cluster_size": 10, "min_samples": 3}, 2000, 20_000) == {
        "min_cluster_size": 100, "min_samples": 3}
