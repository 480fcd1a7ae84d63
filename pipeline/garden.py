"""The garden stage: settings + staging store + embedder -> ``gardener.garden``, and its summary."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from gardener.plans import Plan
from gardener.service import GardenOptions, GardenReport, garden, revert_plan
from ontology import stable_id
from pipeline.embeddings import build_embedder
from pipeline.errors import MissingExtraError
from pipeline.settings import Settings
from staging import StagingStore
from staging.errors import StoreNotFound
from staging.gardener_repo import GardenerRepo
from staging.receipts import unit_receipts

__all__ = ["garden_store", "parse_params", "revert_store", "summary_lines"]

_INTS = {"n_neighbors", "n_components", "min_cluster_size", "min_samples"}


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``["min_cluster_size=20", "min_dist=0.1"]`` -> typed pinned parameters."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        key = key.strip()
        if key in _INTS:
            params[key] = int(value)
        elif key == "min_dist":
            params[key] = float(value)
        else:
            params[key] = value.strip()
    return params


def garden_store(
    settings: Settings,
    *,
    dry_run: bool = False,
    trials: int | None = None,
    seed: int | None = None,
    pinned: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> GardenReport:
    """Garden the store's staging db once (see ``gardener.service``).

    Decay measures age against the latest evidence time in the store, not the wall clock, so
    gardening an old export does not turn every concept weak at once.
    """
    if not settings.staging_db.exists():
        raise StoreNotFound(f"no staging database in {settings.store}",
                            "run `conceptmem run PATH...` (or ingest + extract) first")
    for module, package in (("umap", "umap-learn"), ("hdbscan", "hdbscan"), ("optuna", "optuna")):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(package, "gardener")
    staging = StagingStore.open(settings.staging_db)
    try:
        latest = GardenerRepo(staging.db).latest_seen()
        options = GardenOptions(
            decay_reference=datetime.fromisoformat(latest) if latest else None,
            merge_threshold=settings.garden_merge_threshold,
            decay_after_days=settings.garden_decay_after_days,
            user_scope=settings.user_scope,
            assistant_scope=settings.assistant_scope,
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
            lines.append(f"  outliers (no topic): {plan.stats.get('outliers', 0)}")
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
    return (f"{kind} {action['type']} {action['source']} -> {action['target']}"
            f" (invalid_at {action['invalid_at']})")
