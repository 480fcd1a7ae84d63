"""The topics step: incremental assignment, or a full (tuned) re-cluster on request or drift.

``drift`` is the share of the current layout's placed concepts (members and outliers) that
changed: live concepts it never placed plus placed concepts no longer live, over the placed
count. Below ``drift_threshold`` new concepts are assigned to their nearest topics and nothing
is re-clustered, so re-running on unchanged data plans nothing and a small ingest costs one
matrix product; above it, or with no topics yet, or when asked (``recluster``), the concepts
are re-clustered (an Optuna study on a sample, then one fit on all) and the new topics keep the
ids of the old ones they continue. A re-cluster on drift reuses the parameters of the last
study (``previous_params``) so the granularity people know stays; a requested one (or the
first) runs a new study.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from gardener.cluster import SMALL_INPUT, ClusterResult, cluster_vectors, default_parts
from gardener.objective import ObjectiveWeights
from gardener.plans import Plan
from gardener.reduce import IdentityReducer
from gardener.state import GardenState
from gardener.topics import (
    TopicLabeler,
    current_topics,
    full_layout,
    incremental_layout,
    placed_concepts,
    plan_topics,
)
from gardener.tuning import StudyResult, tune

__all__ = ["DRIFT_THRESHOLD", "TopicSettings", "cluster_concepts", "drift", "plan_topic_step"]

#: Above this share of changed concepts the topics are re-clustered from scratch.
DRIFT_THRESHOLD = 0.25


@dataclass(frozen=True)
class TopicSettings:
    seed: int = 42
    trials: int = 12
    pinned: Mapping[str, Any] = field(default_factory=dict)
    sample_size: int = 2000
    with_stability: bool = True
    weights: ObjectiveWeights = field(default_factory=ObjectiveWeights)
    recluster: bool = False
    drift_threshold: float = DRIFT_THRESHOLD
    reassign_outliers: bool = False
    #: best params of the last study: a drift re-cluster reuses them instead of re-tuning
    previous_params: Mapping[str, Any] | None = None
    labeler: TopicLabeler | None = None
    reducer: Any = None
    clusterer: Any = None


def drift(state: GardenState, concept_ids: list[str]) -> float:
    """Changed share of the placed concepts (1.0 when nothing is placed yet)."""
    placed, live = placed_concepts(state), set(concept_ids)
    if not placed:
        return 1.0
    return len(live ^ placed) / len(placed)


def cluster_concepts(
    vectors: npt.NDArray[np.float32], opts: TopicSettings
) -> tuple[ClusterResult, StudyResult | None, dict[str, Any]]:
    """Tune on a sample (unless pinned or small), then reduce + cluster every vector."""
    n = len(vectors)
    if n < 2:
        empty = np.full(n, -1, dtype=np.int64)
        return ClusterResult(empty, np.zeros(n), vectors), None, {}
    study = None
    params: dict[str, Any] = dict(opts.pinned)
    if n >= SMALL_INPUT and opts.clusterer is None:
        study = tune(vectors, seed=opts.seed, trials=opts.trials, sample_size=opts.sample_size,
                     pinned=opts.pinned, weights=opts.weights,
                     with_stability=opts.with_stability)
        params = study.best_params
    reducer, clusterer = default_parts(n, params, opts.seed)
    if study is not None and study.reduced is not None and opts.reducer is None:
        reducer, vectors = IdentityReducer(), study.reduced  # the study reduced these rows
    result = cluster_vectors(vectors, opts.reducer or reducer, opts.clusterer or clusterer)
    return result, study, params


def plan_topic_step(
    state: GardenState, concept_ids: list[str], vectors: npt.NDArray[np.float32],
    opts: TopicSettings, *, now: datetime, salt: str,
) -> tuple[Plan, StudyResult | None]:
    """The topics plan (full or incremental, see the module doc) and the study, if any."""
    changed = drift(state, concept_ids)
    if current_topics(state) and not opts.recluster and changed <= opts.drift_threshold:
        layout = incremental_layout(state, concept_ids, vectors)
        layout.stats["drift"] = round(changed, 4)
        return plan_topics(state, layout, now=now, salt=salt), None
    reason = ("requested" if opts.recluster else
              "first clustering" if not current_topics(state) else "drift")
    if reason == "drift" and opts.previous_params:
        opts = replace(opts, pinned={**opts.previous_params, **opts.pinned})
    result, study, params = cluster_concepts(vectors, opts)
    layout = full_layout(state, concept_ids, result, vectors,
                         reassign_outliers=opts.reassign_outliers, labeler=opts.labeler)
    layout.stats["drift"] = round(changed, 4)
    layout.stats["reason"] = reason
    return plan_topics(state, layout, now=now, params=params, salt=salt), study
