"""The garden stage: settings + staging store + embedder -> ``gardener.garden``, and its summary."""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from gardener.plans import Plan
from gardener.service import GardenOptions, GardenReport, garden, revert_plan
from ontology import stable_id
from pipeline.embeddings import build_embedder
from pipeline.errors import ConfigurationError, MissingExtraError
from pipeline.settings import Settings
from pipeline.topic_labels import llm_labeler
from staging import StagingStore
from staging.errors import StoreNotFound
from staging.gardener_repo import GardenerRepo
from staging.lock import writes_store
from staging.receipts import unit_receipts

__all__ = ["check_trials", "garden_store", "parse_params", "revert_store", "summary_lines"]

# name -> (type, lowest, highest) for numbers, or the allowed choices (the tuner's space)
_PARAMS: dict[str, tuple[type, float, float | None] | tuple[str, ...]] = {
    "n_neighbors": (int, 2, None),
    "n_components": (int, 1, None),
    "min_dist": (float, 0.0, 1.0),
    "min_cluster_size": (int, 2, None),
    "min_samples": (int, 1, None),
    "cluster_selection_method": ("eom", "leaf"),
}


def check_trials(trials: int | None) -> None:
    """``--trials`` is a count: 0 (no study) or more."""
    if trials is not None and trials < 0:
        raise ConfigurationError(f"--trials must be >= 0, got {trials}",
                                 "pass --trials 12 (0 clusters with the pinned or default values)")


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``["min_cluster_size=20", "min_dist=0.1"]`` -> typed pinned parameters.

    Unknown names, non-numbers, NaN/infinity and values out of range raise
    ``ConfigurationError`` naming the parameter and what it takes.
    """
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = (part.strip() for part in pair.partition("="))
        if not sep or key not in _PARAMS:
            raise ConfigurationError(
                f"--param {pair!r}: unknown clustering parameter {key!r}" if sep
                else f"--param {pair!r}: expected NAME=VALUE",
                f"use one of: {', '.join(_PARAMS)} (e.g. --param min_cluster_size=20)",
            )
        params[key] = _typed(key, value, _PARAMS[key])
    return params


def _typed(key: str, value: str, spec: tuple[Any, ...]) -> Any:
    if isinstance(spec[0], str):
        if value not in spec:
            raise ConfigurationError(f"--param {key}={value!r}: not one of {', '.join(spec)}",
                                     f"e.g. --param {key}={spec[0]}")
        return value
    kind, low, high = spec
    example = f"e.g. --param {key}={max(low, 5) if kind is int else low:g}"
    what = "an integer" if kind is int else "a number"
    try:
        number = kind(value)
    except ValueError:
        raise ConfigurationError(f"--param {key}={value!r}: not {what}", example) from None
    if not math.isfinite(number) or number < low or (high is not None and number > high):
        bounds = f">= {low:g}" + ("" if high is None else f" and <= {high:g}")
        raise ConfigurationError(f"--param {key}={value!r}: must be {what} {bounds}", example)
    return number


@writes_store("garden")
def garden_store(
    settings: Settings,
    *,
    dry_run: bool = False,
    trials: int | None = None,
    seed: int | None = None,
    pinned: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    recluster: bool = False,
    reassign_outliers: bool = False,
) -> GardenReport:
    """Garden the store's staging db once (see ``gardener.service``).

    Decay measures age against the latest evidence time of each scope, not the wall clock, so
    gardening an old export does not turn every concept weak at once. Topics are re-clustered
    only on ``recluster``, on drift or when there are none yet; otherwise new concepts join
    their nearest topics (see ``gardener.topic_step``). With an LLM endpoint configured, a
    re-cluster names its topics through it (``pipeline.topic_labels``).
    """
    check_trials(trials)
    if not settings.staging_db.exists():
        raise StoreNotFound(f"no staging database in {settings.store}",
                            "run `conceptmem run PATH...` (or ingest + extract) first")
    for module, package in (("umap", "umap-learn"), ("hdbscan", "hdbscan"), ("optuna", "optuna"),
                            ("stopwordsiso", "stopwordsiso"), ("py3langid", "py3langid")):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(package)
    staging = StagingStore.open(settings.staging_db)
    try:
        with llm_labeler(settings, staging, dry_run) as labeler:
            latest = GardenerRepo(staging.db).latest_seen()
            options = GardenOptions(
                decay_reference=datetime.fromisoformat(latest) if latest else None,
                decay_reference_per_scope=True,
                decay_after_days=settings.garden_decay_after_days,
                user_scope=settings.user_scope,
                assistant_scope=settings.assistant_scope,
                recluster=recluster,
                reassign_outliers=reassign_outliers,
                labeler=labeler,
            )
            report = garden(
                staging,
                build_embedder(settings),
                seed=settings.garden_seed if seed is None else seed,
                trials=settings.garden_trials if trials is None else trials,
                dry_run=dry_run,
                now=now or datetime.now(UTC),
                pinned_params=pinned,
                options=options,
            )
        if report.run_id is not None:
            units = [(p.id, stable_id("plan", json.dumps(p.to_dict(), sort_keys=True,
                                                           default=str)))
                     for p in report.plans if p.id in report.applied]
            unit_receipts(staging.db, report.run_id, "garden", units)
        return report
    finally:
        staging.close()


@writes_store("garden-revert")
def revert_store(settings: Settings, plan_id: str) -> Plan:
    """Undo one applied gardener plan (unmerge, unsplit, ...) from its recorded prior values."""
    if not settings.staging_db.exists():
        raise StoreNotFound(f"no staging database in {settings.store}",
                            "run `conceptmem run PATH...` first")
    staging = StagingStore.open(settings.staging_db)
    try:
        return revert_plan(staging, plan_id, user_scope=settings.user_scope,
                           assistant_scope=settings.assistant_scope)
    finally:
        staging.close()


def summary_lines(report: GardenReport, limit: int = 20) -> list[str]:
    """Readable lines: topics, merges, splits, decays, invalidations (first ``limit`` each)."""
    lines = [("DRY RUN: nothing applied" if report.dry_run
              else f"applied {len(report.applied)} plans (run {report.run_id})")]
    for plan in report.plans:
        lines.append(f"{plan.step}: {len(plan.actions)} action(s)"
                     + ("" if plan.empty or report.dry_run else f" [plan {plan.id}]"))
        for action in plan.actions[:limit]:
            lines.append("  " + _describe(action))
        if plan.step == "topics":
            stats = plan.stats
            lines.append(f"  {stats.get('mode', 'full')} ({stats.get('reason', 'drift')}"
                         f" {stats.get('drift', 0):.0%}): {stats.get('topics', 0)} topics"
                         f" under {stats.get('parents', 0)} parents, largest"
                         f" {stats.get('largest_share', 0):.0%} of assigned")
            lines.append(f"  outliers (no topic): {stats.get('outliers', 0)}")
    if report.study is not None:
        lines.append(f"study: {len(report.study.trials)} trials, best {report.study.best_value}"
                     f" with {report.study.best_params}")
    return lines


def _describe(action: Mapping[str, Any]) -> str:
    kind = action["action"]
    if kind == "merge":
        return f"merge {action['merged_titles']} -> {action['survivor_title']!r}"
    if kind == "split":
        return f"split {action['title']!r} -> {action.get('part_titles')}"
    if kind == "decay":
        return f"decay {action['title']!r}: {action['from']} -> {action['to']}"
    if kind == "topic":
        return f"topic {action['label']!r} ({action['size']} concepts)"
    if kind == "parent_topic":
        return f"parent topic {action['label']!r} ({len(action['children'])} topics)"
    if kind == "topic_assign":
        return f"assign {action['concept']} -> topic {action['topic']}"
    if kind.startswith("topic_"):
        return f"{kind.removeprefix('topic_')} {action['topic']} ({action['size']} concepts)"
    return (f"{kind} {action['type']} {action['source']} -> {action['target']}"
            f" (invalid_at {action['invalid_at']})")
