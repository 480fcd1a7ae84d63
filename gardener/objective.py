"""The explicit objective the topic study maximises (BERTopic #595: no tuning without one).

    score = validity
            - noise_weight     * noise_fraction
            - count_weight     * count_penalty(k, n)
            - share_weight     * share_penalty(labels)
            - stability_weight * (1 - stability)

* ``validity``: HDBSCAN's ``relative_validity_`` (a fast DBCV approximation; 0 when fewer than
  two topics were found, because DBCV is undefined there).
* ``noise_fraction``: share of concepts left as outliers (label -1).
* ``count_penalty``: 0 while the topic count ``k`` lies in ``topic_range``, else the relative
  distance to the nearest bound (too few topics over-compress the memory, too many explode it,
  seed 002). The range is ``[sqrt(N)/4, sqrt(N)]`` for the ``population`` N of concepts being
  clustered, capped by what a tuning sample of m rows can show (at most ``m/25`` and ``m/5``
  topics: about 25 and 5 sample rows per topic); for N = m the cap never binds above m = 39.
* ``share_penalty``: 0 while the largest topic holds at most ``max_share`` of the *assigned*
  concepts, then rising linearly to 1 when it holds all of them. One topic that swallows the
  memory ("data, django, code" with 95%) loses to a spread of topics, however valid its density.
* ``stability``: adjusted Rand index between the labels and the labels of a second fit with
  another seed (1 = identical partitions); ``None`` skips the term.

Every term is bounded, so no single one can dominate by scale. The weights are data, stored
with each study.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "OBJECTIVE_DOC",
    "ObjectiveWeights",
    "count_penalty",
    "largest_share",
    "noise_fraction",
    "score_labels",
    "share_penalty",
    "stability",
    "topic_count",
    "topic_range",
]

OBJECTIVE_DOC = (
    "validity - noise_weight*noise_fraction - count_weight*count_penalty"
    " - share_weight*max(0, largest_share - max_share)/(1 - max_share)"
    " - stability_weight*(1 - ARI across seeds)"
)


@dataclass(frozen=True)
class ObjectiveWeights:
    noise_weight: float = 0.5
    count_weight: float = 1.0
    stability_weight: float = 0.5
    share_weight: float = 1.0
    max_share: float = 0.25

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def topic_count(labels: Sequence[int] | np.ndarray) -> int:
    return len(set(np.asarray(labels).tolist()) - {-1})


def noise_fraction(labels: Sequence[int] | np.ndarray) -> float:
    array = np.asarray(labels)
    return float((array == -1).mean()) if len(array) else 1.0


def largest_share(labels: Sequence[int] | np.ndarray) -> float:
    """The largest topic's share of the assigned (non-outlier) items; 0 when none is assigned."""
    array = np.asarray(labels)
    assigned = array[array >= 0]
    return float(np.bincount(assigned).max() / len(assigned)) if len(assigned) else 0.0


def share_penalty(labels: Sequence[int] | np.ndarray, max_share: float = 0.25) -> float:
    """0 up to ``max_share``, then linear to 1 at a single topic holding everything assigned."""
    if topic_count(labels) == 0:
        return 1.0
    excess = largest_share(labels) - max_share
    return max(0.0, excess / (1.0 - max_share)) if max_share < 1.0 else 0.0


def topic_range(n: int, population: int | None = None) -> tuple[float, float]:
    """The topic counts that cost nothing, for ``n`` clustered rows out of ``population``."""
    root = math.sqrt(max(population or n, 1))
    return max(2.0, min(root / 4.0, n / 25.0)), max(2.0, min(root, n / 5.0))


def count_penalty(k: int, n: int, population: int | None = None) -> float:
    """0 inside ``topic_range``, growing to 1 as k falls to 0, linear above the top."""
    low, high = topic_range(n, population)
    if k < low:
        return (low - k) / low
    if k > high:
        return (k - high) / high
    return 0.0


def stability(labels_a: Sequence[int], labels_b: Sequence[int]) -> float:
    """Adjusted Rand index of two labelings of the same items (outliers count as one class)."""
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(np.asarray(labels_a), np.asarray(labels_b)))


def score_labels(
    labels: Sequence[int] | np.ndarray,
    validity: float | None,
    *,
    stability_ari: float | None = None,
    weights: ObjectiveWeights | None = None,
    population: int | None = None,
) -> float:
    """The objective for one clustering (higher is better)."""
    w = weights or ObjectiveWeights()
    array = np.asarray(labels)
    k = topic_count(array)
    value = (validity if validity is not None and k >= 2 else 0.0)
    value -= w.noise_weight * noise_fraction(array)
    value -= w.count_weight * count_penalty(k, len(array), population)
    value -= w.share_weight * share_penalty(array, w.max_share)
    if stability_ari is not None:
        value -= w.stability_weight * (1.0 - stability_ari)
    return float(value)
