"""``garden``: merge -> split -> decay -> invalidate -> topics, each planned, checked, applied.

Each step plans against the state the previous step left (simulated in memory, so a dry run
plans exactly what a real run would apply). A real run stores every plan in ``gardener_plans``
and applies it in one transaction with concept revisions as the receipt; a plan that fails a
check is recorded as ``rejected``, nothing of it is applied, and ``PlanCheckFailed`` says why.
A dry run writes nothing at all, not even embeddings.

The gardener works per (user_scope, assistant_scope) pair (``gardener.scopes``): each scope's
rows are planned over on their own, so no merge, split, invalidation, repoint or topic ever
links two scopes; every plan names its scope and is stored with that scope's provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from gardener.bitemporal import plan_invalidations
from gardener.errors import PlanCheckFailed
from gardener.lifecycle import plan_decay, plan_merges
from gardener.merging import MAX_GROUP
from gardener.objective import OBJECTIVE_DOC, ObjectiveWeights
from gardener.plans import CHECKS, Plan, check_plan, validate_plan
from gardener.scopes import Scope, partition_rows
from gardener.splits import plan_splits, split_candidates
from gardener.state import GardenState, concept_text
from gardener.topic_step import DRIFT_THRESHOLD, TopicSettings, plan_topic_step
from gardener.topics import TopicLabeler
from gardener.tuning import StudyResult
from ontology import Embedder, stable_id, text_hash
from staging import Provenance, StagingStore
from staging.db import utc_now
from staging.gardener_repo import GardenerRepo

__all__ = [
    "CODE_VERSION",
    "GardenOptions",
    "GardenReport",
    "apply_checked",
    "garden",
    "revert_plan",
]

CODE_VERSION = "gardener-0.1"


@dataclass(frozen=True)
class GardenOptions:
    """Knobs beyond the seed/trials/now of ``garden``; defaults match ``Settings``."""

    merge_max_group: int = MAX_GROUP
    decay_after_days: int = 180
    split_min_part: int = 2
    split_min_silhouette: float = 0.5
    sample_size: int = 2000
    with_stability: bool = True
    #: topics: re-cluster even below the drift threshold; the threshold; outliers -> nearest
    recluster: bool = False
    drift_threshold: float = DRIFT_THRESHOLD
    reassign_outliers: bool = False
    #: names topics on a full re-cluster (e.g. an LLM when an endpoint is configured)
    labeler: TopicLabeler | None = None
    weights: ObjectiveWeights = field(default_factory=ObjectiveWeights)
    #: the "present" decay measures age against (None: ``now``); e.g. the latest evidence time,
    #: so gardening an old export does not decay everything by wall-clock age.
    decay_reference: datetime | None = None
    #: each scope's "present" is its own latest ``last_seen`` (``decay_reference`` the fallback),
    #: so one user's newer export never ages another user's concepts
    decay_reference_per_scope: bool = False
    user_scope: str = "default-user"
    assistant_scope: str = "default-assistant"
    reducer: Any = None
    clusterer: Any = None


@dataclass
class GardenReport:
    dry_run: bool
    plans: list[Plan] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    study: StudyResult | None = None
    run_id: str | None = None

    def plan(self, step: str) -> Plan | None:
        return next((plan for plan in self.plans if plan.step == step), None)

    def summary(self) -> str:
        """One line: what each step planned (and whether it was applied)."""
        parts = [f"{plan.step}: {_short(plan.stats)}" for plan in self.plans]
        mode = "dry run, nothing applied" if self.dry_run else f"{len(self.applied)} plans applied"
        return f"{'; '.join(parts)} ({mode})"

    def figures(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "run_id": self.run_id,
            "applied_plans": len(self.applied),
            **_step_figures(self.plans),
            "scopes": sorted({f"{p.user_scope}|{p.assistant_scope}" for p in self.plans}),
            "topic_labels": [a["label"] for plan in self.plans if plan.step == "topics"
                             for a in plan.actions if a["action"] == "topic"],
            "study": None if self.study is None else {
                "best_params": self.study.best_params, "best_value": self.study.best_value,
                "trials": len(self.study.trials), "sample_size": self.study.sample_size,
                "pinned": self.study.pinned},
        }


def _step_figures(plans: Sequence[Plan]) -> dict[str, dict[str, Any]]:
    """Each step's stats; over several scopes, numbers are summed (other values: the last)."""
    out: dict[str, dict[str, Any]] = {}
    for plan in plans:
        step = out.setdefault(plan.step, {})
        for key, value in plan.stats.items():
            if key == "outlier_ids":
                continue
            summable = isinstance(value, int | float) and not isinstance(value, bool)
            step[key] = step[key] + value if summable and key in step else value
    return out


def _short(stats: Mapping[str, Any]) -> str:
    keys = ("merges", "splits", "weak", "archived", "invalidations", "topics", "outliers")
    return ", ".join(f"{k} {stats[k]}" for k in keys if k in stats)


class _Vectors:
    """Embeds texts through the staging embedding cache (read-only in a dry run)."""

    def __init__(self, repo: GardenerRepo, embedder: Embedder, write: bool) -> None:
        self.repo, self.embedder, self.write = repo, embedder, write

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, int(self.embedder.dim)), dtype=np.float32)
        hashes = [text_hash(text) for text in texts]
        found = self.repo.cached_vectors(self.embedder.name, hashes)
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}
                         .items())
        if missing:
            fresh = self.embedder.embed([text for _, text in missing])
            new = {h: np.asarray(v, np.float32) for (h, _), v in zip(missing, fresh, strict=True)}
            found.update(new)
            if self.write:
                self.repo.store_vectors(self.embedder.name, new)
        return np.stack([found[h] for h in hashes]).astype(np.float32)


class _Gardener:
    """One scope's gardening: its rows, its provenance; plans are stamped with its scope."""

    def __init__(self, repo: GardenerRepo, rows: Mapping[str, Any], scope: Scope,
                 embed: _Vectors, report: GardenReport, prov: Provenance | None) -> None:
        self.repo, self.scope = repo, scope
        self.state = GardenState.from_rows(rows)
        self.embed, self.report, self.prov = embed, report, prov

    def commit(self, plan: Plan) -> None:
        plan = replace(plan, user_scope=self.scope[0], assistant_scope=self.scope[1])
        self.report.plans.append(plan)
        if plan.empty:
            return
        failures = check_plan(plan, self.state)
        if failures:
            if self.prov is not None:
                self.repo.record_plan(plan.to_dict(), "rejected", failures, self.prov)
            raise PlanCheckFailed(plan.step, failures)
        checks = list(CHECKS)
        if self.prov is not None:
            self.repo.apply_plan(plan.to_dict(), checks, self.prov)
            self.report.applied.append(plan.id)
        self.state = self.state.with_changes(plan.change_dicts())

    def concept_vectors(self) -> tuple[list[str], npt.NDArray[np.float32]]:
        rows = self.state.live_concepts()
        return [row["id"] for row in rows], self.embed([concept_text(row) for row in rows])

    def quote_vectors(self, min_part: int) -> dict[str, npt.NDArray[np.float32]]:
        spans = [span for _, group in split_candidates(self.state, min_part) for span in group]
        vectors = self.embed([span["quote"] for span in spans])
        return {span["id"]: vectors[i] for i, span in enumerate(spans)}


def garden(
    staging: StagingStore,
    embedder: Embedder,
    *,
    seed: int,
    trials: int,
    dry_run: bool,
    now: datetime,
    pinned_params: Mapping[str, Any] | None = None,
    options: GardenOptions | None = None,
) -> GardenReport:
    """Run every gardener step once; see the module docstring."""
    opts = options or GardenOptions()
    report = GardenReport(dry_run=dry_run)
    config = {"seed": seed, "trials": trials, "pinned": dict(pinned_params or {}),
              "merge_max_group": opts.merge_max_group, "decay_days": opts.decay_after_days}
    run = None if dry_run else staging.start_run(
        "garden", config, CODE_VERSION, opts.user_scope, opts.assistant_scope)
    prov = None if run is None else run.provenance("gardener")
    report.run_id = None if run is None else run.id
    repo = GardenerRepo(staging.db)
    vectors = _Vectors(repo, embedder, not dry_run)
    parts = partition_rows(repo.load_rows()) or {(opts.user_scope, opts.assistant_scope): {}}
    try:
        for scope, rows in parts.items():
            scoped = None if prov is None else replace(
                prov, user_scope=scope[0], assistant_scope=scope[1], written_at=utc_now())
            salt = _salt(now, report.run_id, scope, len(parts))
            _steps(_Gardener(repo, rows, scope, vectors, report, scoped),
                   seed, trials, now, pinned_params, opts, salt)
    except BaseException as exc:
        if run is not None:
            staging.finish_run(run, "failed", error=str(exc))
        raise
    if run is not None:
        staging.finish_run(run, "completed", report.figures())
    return report


def _salt(now: datetime, run_id: str | None, scope: Scope, scopes: int) -> str:
    """Plan/topic ids' salt: the scope is part of it whenever several scopes share a run."""
    base = f"{now.isoformat()}|{run_id}"
    return base if scopes == 1 else f"{base}|{scope[0]}|{scope[1]}"


def _decay_reference(state: GardenState, opts: GardenOptions) -> datetime | None:
    seen = [str(row["last_seen"]) for row in state.table("concepts").values()
            if row.get("last_seen")]
    if not opts.decay_reference_per_scope or not seen:
        return opts.decay_reference
    return datetime.fromisoformat(max(seen))


def _steps(g: _Gardener, seed: int, trials: int, now: datetime,
           pinned: Mapping[str, Any] | None, opts: GardenOptions, salt: str) -> None:
    g.commit(plan_merges(g.state, now=now, conversations=g.repo.message_conversations(),
                         max_group=opts.merge_max_group, salt=salt))
    g.commit(plan_splits(g.state, g.quote_vectors(opts.split_min_part), now=now,
                         min_part=opts.split_min_part, min_silhouette=opts.split_min_silhouette,
                         salt=salt))
    g.commit(plan_decay(g.state, now=now, after_days=opts.decay_after_days,
                        reference=_decay_reference(g.state, opts), salt=salt))
    g.commit(plan_invalidations(g.state, now=now, salt=salt))
    ids, vectors = g.concept_vectors()
    settings = replace(_topic_settings(seed, trials, pinned, opts),
                       previous_params=g.repo.latest_study_params(g.scope))
    plan, study = plan_topic_step(g.state, ids, vectors, settings, now=now, salt=salt)
    g.report.study = study
    if study is not None and g.prov is not None:
        g.repo.save_study({
            "id": stable_id("study", salt), "objective": f"{OBJECTIVE_DOC} {opts.weights}",
            "trials": study.trials, "best_params": study.best_params,
            "best_value": study.best_value, "pinned": study.pinned}, g.prov)
    g.commit(plan)


def _topic_settings(seed: int, trials: int, pinned: Mapping[str, Any] | None,
                    opts: GardenOptions) -> TopicSettings:
    return TopicSettings(
        seed=seed, trials=trials, pinned=dict(pinned or {}), sample_size=opts.sample_size,
        with_stability=opts.with_stability, weights=opts.weights, recluster=opts.recluster,
        drift_threshold=opts.drift_threshold, reassign_outliers=opts.reassign_outliers,
        labeler=opts.labeler, reducer=opts.reducer, clusterer=opts.clusterer)


def apply_checked(staging: StagingStore, plan: Plan, prov: Provenance) -> list[str]:
    """Check ``plan`` against the current staging state, then apply it (or record a rejection).

    Returns the names of the checks that passed; raises ``PlanCheckFailed`` (nothing applied).
    """
    repo = GardenerRepo(staging.db)
    state = GardenState.from_rows(repo.load_rows())
    failures = check_plan(plan, state)
    if failures:
        repo.record_plan(plan.to_dict(), "rejected", failures, prov)
        raise PlanCheckFailed(plan.step, failures)
    checks = validate_plan(plan, state)
    repo.apply_plan(plan.to_dict(), checks, prov)
    return checks


def revert_plan(staging: StagingStore, plan_id: str, *, user_scope: str = "default-user",
                assistant_scope: str = "default-assistant") -> Plan:
    """Undo an applied plan (unmerge, unsplit, ...) from its recorded prior values.

    The revert is recorded under the plan's own scope (the given scope is the fallback)."""
    row = GardenerRepo(staging.db).plan_row(plan_id)
    if row is not None:
        user_scope, assistant_scope = row["user_scope"], row["assistant_scope"]
    run = staging.start_run("garden-revert", {"plan_id": plan_id}, CODE_VERSION,
                            user_scope, assistant_scope)
    try:
        plan = GardenerRepo(staging.db).revert_plan(plan_id, run.provenance("gardener"))
    except BaseException as exc:
        staging.finish_run(run, "failed", error=str(exc))
        raise
    staging.finish_run(run, "completed", {"reverted": plan_id})
    return Plan.from_dict(plan)
