"""An Optuna study over UMAP + HDBSCAN hyperparameters against ``gardener.objective``.

* ``TPESampler`` with a fixed seed: the same data give the same trials and the same best params.
  The hyperparameter search does not follow ``seed`` (which seeds UMAP and the row sample), so
  the topics of two seeds differ by the embedding's randomness only, not by a different search.
* Tuned on a seeded sample of at most ``sample_size`` vectors; the chosen ``min_cluster_size``
  is then scaled by ``n / sample`` for the full fit so the topic granularity found on the
  sample carries over.
* UMAP is fixed at BERTopic's recipe by default (n_neighbors 15, 5 components, min_dist 0):
  a study then fits UMAP twice on the sample (the seed, and seed + 1 for the stability term)
  and every trial only refits HDBSCAN, which costs milliseconds, so many trials are cheap.
  ``umap_space`` widens the search (each extra UMAP choice costs two more reductions).
* When the sample is all the data, the study's reduction with the chosen UMAP parameters is
  returned (``StudyResult.reduced``) and the final fit reuses it instead of reducing again.
* Pinned parameters are used as given; when every parameter is pinned there is no study at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gardener.cluster import make_hdbscan
from gardener.objective import (
    OBJECTIVE_DOC,
    ObjectiveWeights,
    noise_fraction,
    score_labels,
    stability,
    topic_count,
)
from gardener.reduce import exact_knn, make_umap

__all__ = ["SAMPLER_SEED", "SEARCH_SPACE", "TUNING_EPOCHS", "StudyResult", "scale_params", "tune"]

#: The search space; UMAP parameters are categorical so reductions can be cached.
SEARCH_SPACE: dict[str, Any] = {
    "n_neighbors": [15],
    "n_components": [5],
    "min_dist": [0.0],
    "min_cluster_size": "int, log scale, [max(10, m/200), max(20, m/10)] for a sample of m",
    "min_samples": "int, [1, min(min_cluster_size, 50)]",
    "cluster_selection_method": ["eom", "leaf"],
}
_UMAP_KEYS = ("n_neighbors", "n_components", "min_dist")
#: The study's sampler seed (fixed, see the module doc).
SAMPLER_SEED = 0
#: UMAP epochs per trial (UMAP's default is 500 below 10k rows; 200 ranks parameters the same).
TUNING_EPOCHS = 200


@dataclass
class StudyResult:
    best_params: dict[str, Any]
    best_value: float | None
    trials: list[dict[str, Any]] = field(default_factory=list)
    sample_size: int = 0
    pinned: bool = False
    objective: str = OBJECTIVE_DOC
    #: the sample's reduction with the best UMAP params when the sample is all the data
    reduced: npt.NDArray[np.float32] | None = field(default=None, repr=False)


class _Objective:
    def __init__(
        self, sample: npt.NDArray[np.float32], seed: int, pinned: Mapping[str, Any],
        weights: ObjectiveWeights, with_stability: bool, population: int,
        space: Mapping[str, Any],
    ) -> None:
        self.sample, self.seed, self.pinned = sample, seed, dict(pinned)
        self.space = dict(space)
        self.population = population
        self.weights, self.with_stability = weights, with_stability
        self.cache: dict[tuple[Any, ...], npt.NDArray[np.float32]] = {}
        widest = max([*self.space["n_neighbors"], int(self.pinned.get("n_neighbors", 0))])
        self.knn = exact_knn(sample, min(widest, len(sample) - 1))

    def reduced(self, params: Mapping[str, Any], seed: int) -> npt.NDArray[np.float32]:
        key = (*(params[k] for k in _UMAP_KEYS), seed)
        if key not in self.cache:
            model = make_umap(dict(params), seed, self.knn, n_epochs=TUNING_EPOCHS)
            fitted = model.fit_transform(self.sample)
            self.cache[key] = np.asarray(fitted, dtype=np.float32)
        return self.cache[key]

    def suggest(self, trial: Any) -> dict[str, Any]:
        m = len(self.sample)
        params: dict[str, Any] = {}

        def pick(key: str, suggest: Any) -> None:
            params[key] = self.pinned[key] if key in self.pinned else suggest()

        for key in (*_UMAP_KEYS, "cluster_selection_method"):
            choices = [c for c in self.space[key] if key != "n_neighbors" or c < m]
            choices = choices or [m - 1]
            pick(key, lambda k=key, c=choices: trial.suggest_categorical(k, c))
        low, high = min(max(10, m // 200), m // 2), max(20, m // 10)
        pick("min_cluster_size", lambda: trial.suggest_int("min_cluster_size", low, high, log=True))
        top = min(int(params["min_cluster_size"]), 50)
        pick("min_samples", lambda: trial.suggest_int("min_samples", 1, top))
        return params

    def __call__(self, trial: Any) -> float:
        params = self.suggest(trial)
        fitted = make_hdbscan(params, validity=True).fit(self.reduced(params, self.seed))
        labels = fitted.labels_
        validity = float(fitted.relative_validity_) if topic_count(labels) >= 2 else None
        ari = None
        if self.with_stability:
            other = make_hdbscan(params).fit(self.reduced(params, self.seed + 1))
            ari = stability(labels, other.labels_)
        trial.set_user_attr("params", params)
        trial.set_user_attr("topics", topic_count(labels))
        trial.set_user_attr("noise", round(noise_fraction(labels), 4))
        trial.set_user_attr("validity", validity)
        trial.set_user_attr("stability", ari)
        return score_labels(labels, validity, stability_ari=ari, weights=self.weights,
                            population=self.population)


def scale_params(params: Mapping[str, Any], sample: int, n: int) -> dict[str, Any]:
    """Params tuned on ``sample`` rows, for a fit on ``n`` rows: ``min_cluster_size`` scales.

    ``min_samples`` (the neighbourhood that defines density) stays as tuned: scaling it would
    make HDBSCAN's core-distance search grow with n for no gain in topic granularity.
    """
    out = dict(params)
    if n > sample > 0:
        out["min_cluster_size"] = max(2, math.ceil(int(params["min_cluster_size"]) * n / sample))
    return out


def tune(
    vectors: npt.NDArray[np.float32],
    *,
    seed: int,
    trials: int,
    sample_size: int = 2000,
    pinned: Mapping[str, Any] | None = None,
    weights: ObjectiveWeights | None = None,
    with_stability: bool = True,
    umap_space: Mapping[str, Any] | None = None,
) -> StudyResult:
    """Best params for ``vectors`` (already scaled to ``len(vectors)``) and every trial."""
    pinned = dict(pinned or {})
    keys = (*_UMAP_KEYS, "min_cluster_size", "min_samples", "cluster_selection_method")
    if all(key in pinned for key in keys) or trials <= 0:
        return StudyResult(pinned, None, [], 0, pinned=bool(pinned))
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    n = len(vectors)
    rng = np.random.default_rng(seed)
    index = np.sort(rng.choice(n, size=sample_size, replace=False)) if n > sample_size else None
    sample = vectors if index is None else vectors[index]
    space = {**SEARCH_SPACE, **(umap_space or {})}
    objective = _Objective(sample, seed, pinned, weights or ObjectiveWeights(), with_stability, n,
                           space)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=SAMPLER_SEED))
    study.optimize(objective, n_trials=trials)
    records = [
        {"number": t.number, "value": t.value, **t.user_attrs} for t in study.trials
    ]
    best = study.best_trial.user_attrs["params"]
    reduced = objective.reduced(best, seed) if index is None else None
    return StudyResult(
        scale_params(best, len(sample), n), float(study.best_value), records, len(sample),
        pinned=bool(pinned), reduced=reduced,
    )
