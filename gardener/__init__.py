"""The gardener: topics, merges, splits, decay and bitemporal invalidation.

Algorithms over ontology types and plain staging rows; every step returns a ``Plan`` (plain data)
that is checked, then applied in one transaction. umap-learn, hdbscan and optuna are imported
lazily, when topics are clustered.
"""

from gardener.bitemporal import (
    CONTRADICTORY_RELATIONS,
    FUNCTIONAL_RELATIONS,
    believed_at,
    invalidate,
    plan_invalidations,
    true_at,
)
from gardener.cluster import ClusterResult, SmallDataClusterer, cluster_vectors, make_hdbscan
from gardener.errors import GardenerError, PlanCheckFailed
from gardener.labels import ctfidf_keywords
from gardener.lifecycle import plan_decay, plan_merges
from gardener.objective import OBJECTIVE_DOC, ObjectiveWeights, score_labels
from gardener.plans import CHECKS, Plan, RowChange, check_plan, validate_plan
from gardener.reduce import IdentityReducer, SampledUMAP, make_umap
from gardener.service import GardenOptions, GardenReport, apply_checked, garden, revert_plan
from gardener.splits import plan_splits
from gardener.state import GardenState
from gardener.topic_match import match_topics, topic_events
from gardener.topic_step import TopicSettings, plan_topic_step
from gardener.topics import TopicLabeler, TopicLayout, full_layout, incremental_layout, plan_topics
from gardener.tuning import StudyResult, tune

__all__ = [
    "CHECKS",
    "CONTRADICTORY_RELATIONS",
    "FUNCTIONAL_RELATIONS",
    "OBJECTIVE_DOC",
    "ClusterResult",
    "GardenOptions",
    "GardenReport",
    "GardenState",
    "GardenerError",
    "IdentityReducer",
    "ObjectiveWeights",
    "Plan",
    "PlanCheckFailed",
    "RowChange",
    "SampledUMAP",
    "SmallDataClusterer",
    "StudyResult",
    "TopicLabeler",
    "TopicLayout",
    "TopicSettings",
    "apply_checked",
    "believed_at",
    "check_plan",
    "cluster_vectors",
    "ctfidf_keywords",
    "full_layout",
    "garden",
    "incremental_layout",
    "invalidate",
    "make_hdbscan",
    "make_umap",
    "match_topics",
    "plan_decay",
    "plan_invalidations",
    "plan_merges",
    "plan_splits",
    "plan_topic_step",
    "plan_topics",
    "revert_plan",
    "score_labels",
    "topic_events",
    "true_at",
    "tune",
    "validate_plan",
]
