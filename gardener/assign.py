"""Nearest-topic assignment: new concepts into existing topics, outliers on request.

A topic is summarised by the unit centroid of its *clustered* members' embeddings and an
acceptance radius: the cosine similarity that all but ``quantile`` of those members reach to
the centroid of the *other* members (leave-one-out, so a member's own pull on the centroid does
not make the radius stricter than what a newcomer can meet). Members joined later by
assignment move neither, so assignment is idempotent.
A concept joins the most similar topic when its similarity reaches that topic's radius;
otherwise it stays an outlier, and the nearest topic and similarity are still reported.
This is BERTopic's ``reduce_outliers(strategy="embeddings")`` with a per-topic threshold
instead of one global one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gardener.reduce import unit_rows

__all__ = ["ACCEPT_QUANTILE", "Assignment", "TopicCentroids", "assign", "centroids_for"]

#: The share of a topic's own clustered members a newcomer must be at least as close as.
ACCEPT_QUANTILE = 0.1


@dataclass(frozen=True)
class TopicCentroids:
    topic_ids: list[str]
    centroids: npt.NDArray[np.float32]  # (topics, dim), unit rows
    radius: npt.NDArray[np.float64]  # (topics,) minimum cosine similarity to join


@dataclass(frozen=True)
class Assignment:
    topic_id: str | None  # None: stays an outlier
    nearest_topic_id: str | None
    similarity: float


def centroids_for(
    members: Mapping[str, Sequence[int]],
    vectors: npt.NDArray[np.float32],
    quantile: float = ACCEPT_QUANTILE,
) -> TopicCentroids:
    """Centroids and radii from ``{topic_id: row indexes of its clustered members}``."""
    unit = unit_rows(vectors)
    ids = sorted(topic for topic, rows in members.items() if len(rows))
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    cents = np.zeros((len(ids), dim), dtype=np.float32)
    radius = np.zeros(len(ids))
    for row, topic in enumerate(ids):
        block = unit[np.asarray(members[topic], dtype=np.int64)]
        total = block.sum(axis=0)
        cents[row] = total / (np.linalg.norm(total) + 1e-12)
        radius[row] = _loo_radius(block, total, quantile)
    return TopicCentroids(ids, cents, radius)


def _loo_radius(block: npt.NDArray[np.float32], total: npt.NDArray[np.float32],
                quantile: float) -> float:
    """The ``quantile`` of member-to-centroid-of-the-others similarity (1.0 for one member)."""
    if len(block) < 2:
        return 1.0
    others = total[None, :] - block
    norms = np.linalg.norm(others, axis=1) + 1e-12
    return float(np.quantile(np.sum(block * others, axis=1) / norms, quantile))


def assign(vectors: npt.NDArray[np.float32], topics: TopicCentroids) -> list[Assignment]:
    """One ``Assignment`` per row of ``vectors`` (ties go to the smaller topic id)."""
    if not topics.topic_ids or len(vectors) == 0:
        return [Assignment(None, None, 0.0) for _ in range(len(vectors))]
    sims = unit_rows(vectors) @ topics.centroids.T
    best = np.argmax(sims, axis=1)
    out = []
    for row, col in enumerate(best.tolist()):
        similarity = round(float(sims[row, col]), 6)
        topic = topics.topic_ids[col]
        joins = similarity >= topics.radius[col]
        out.append(Assignment(topic if joins else None, topic, similarity))
    return out
