"""The objective is a pure function: each penalty moves the score the right way."""

from __future__ import annotations

import numpy as np
import pytest

from gardener.objective import (
    ObjectiveWeights,
    count_penalty,
    largest_share,
    noise_fraction,
    score_labels,
    share_penalty,
    stability,
    topic_range,
)


def _labels(k: int, n: int = 400, noise: int = 0) -> np.ndarray:
    labels = np.arange(n) % k
    labels[:noise] = -1
    return labels


def test_more_noise_scores_lower():
    clean, noisy = _labels(10), _labels(10, noise=120)
    assert noise_fraction(noisy) == pytest.approx(0.3)
    assert score_labels(noisy, 0.8) == pytest.approx(score_labels(clean, 0.8) - 0.5 * 0.3)


def test_too_few_and_too_many_topics_are_penalised():
    low, high = topic_range(400)
    assert (low, high) == (5.0, 20.0)
    assert count_penalty(10, 400) == 0.0
    assert count_penalty(2, 400) == pytest.approx(0.6)
    assert count_penalty(40, 400) == pytest.approx(1.0)
    assert score_labels(_labels(2), 0.8) < score_labels(_labels(10), 0.8)
    assert score_labels(_labels(200), 0.8) < score_labels(_labels(10), 0.8)


def test_validity_counts_only_with_two_topics_and_higher_is_better():
    assert score_labels(np.zeros(50, dtype=int), 0.9) == score_labels(np.zeros(50, dtype=int), None)
    assert score_labels(_labels(10), 0.9) > score_labels(_labels(10), 0.3)


def test_instability_is_penalised_by_ari():
    a = _labels(10)
    shuffled = np.random.default_rng(0).permutation(a)
    assert stability(a, a) == pytest.approx(1.0)
    assert stability(a, shuffled) < 0.1
    stable = score_labels(a, 0.8, stability_ari=1.0)
    assert stable == score_labels(a, 0.8)
    assert score_labels(a, 0.8, stability_ari=0.2) == pytest.approx(stable - 0.5 * 0.8)


def test_weights_are_data():
    heavy = ObjectiveWeights(noise_weight=2.0)
    noisy = _labels(10, noise=100)
    assert score_labels(noisy, 0.8, weights=heavy) < score_labels(noisy, 0.8)
    assert heavy.to_dict()["noise_weight"] == 2.0


def test_topic_range_follows_the_population_within_what_the_sample_can_show():
    assert topic_range(2000) == pytest.approx((11.18, 44.72), abs=0.01)
    assert topic_range(2000, population=632_868) == (80.0, 400.0)
    assert count_penalty(198, 2000, population=632_868) == 0.0
    assert count_penalty(198, 2000) > 1.0
    assert topic_range(300, population=300) == topic_range(300)


def test_one_topic_holding_most_concepts_loses_however_valid():
    hub = np.zeros(400, dtype=int)
    hub[:20] = np.arange(20) % 9 + 1  # 10 topics, one of them holding 95%
    spread = _labels(10)
    assert largest_share(hub) == pytest.approx(0.95) and largest_share(spread) == 0.1
    assert share_penalty(spread) == 0.0 and share_penalty(hub) == pytest.approx(0.7 / 0.75)
    assert score_labels(hub, 0.9) < score_labels(spread, 0.3)
    assert largest_share(np.full(5, -1)) == 0.0 and share_penalty(np.full(5, -1)) == 1.0
