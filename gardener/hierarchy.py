"""Parent topics: topics grouped by Ward clustering of their unit centroids.

BERTopic's ``hierarchical_topics`` builds a Ward dendrogram over topic representations; a
person drilling down needs one level above the topics, so the dendrogram is cut into about
``sqrt(k)`` groups for ``k`` topics (a branching factor that grows with the topic count, never
fitted to a dataset). A group of one topic gets no parent (the topic stays top-level); fewer
than ``MIN_TOPICS`` topics get no hierarchy at all. A parent's id hashes its sorted child ids,
so an unchanged grouping of unchanged topics keeps its parent ids.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gardener.reduce import unit_rows
from ontology import stable_id

__all__ = ["MIN_TOPICS", "parent_groups", "parent_id"]

#: Below this many topics there is nothing to group.
MIN_TOPICS = 4


def parent_groups(
    centroids: npt.NDArray[np.float32], n_parents: int | None = None
) -> list[int]:
    """Parent index per topic (``-1``: no parent), numbered by first occurrence."""
    k = len(centroids)
    if k < MIN_TOPICS:
        return [-1] * k
    from sklearn.cluster import AgglomerativeClustering

    groups = n_parents or max(2, round(math.sqrt(k)))
    raw = AgglomerativeClustering(n_clusters=min(groups, k - 1), linkage="ward").fit(
        unit_rows(centroids)).labels_.tolist()
    sizes = np.bincount(raw)
    mapping: dict[int, int] = {}
    return [mapping.setdefault(g, len(mapping)) if sizes[g] >= 2 else -1 for g in raw]


def parent_id(child_ids: Sequence[str]) -> str:
    return stable_id("parent_topic", *sorted(child_ids))
