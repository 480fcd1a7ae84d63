"""Topic plans: clusters of live concepts -> topics with c-TF-IDF labels and memberships.

* Outliers (label -1) get no membership; they are counted in the plan's stats, visibly.
* A topic's id is ``stable_id("topic", label)`` (its top keywords), so re-clustering the same
  concepts into the same groups reuses the same ids; two topics with the same label are told
  apart by their smallest member id.
* The plan upserts topics and memberships that differ from the current state and deactivates
  (``active = 0``) the ones no longer produced; nothing is deleted, and an unchanged clustering
  yields an empty plan.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from gardener.cluster import ClusterResult
from gardener.labels import ctfidf_keywords, label_from_keywords
from gardener.lifecycle import plan_id_for
from gardener.plans import Plan, RowChange
from gardener.state import GardenState, Row, concept_names
from ontology import stable_id

__all__ = ["TopicDraft", "draft_topics", "plan_topics"]


class TopicDraft(dict[str, Any]):
    """``{id, label, keywords, members: {concept_id: probability}}``."""


def draft_topics(
    state: GardenState, concept_ids: Sequence[str], result: ClusterResult, top_n: int = 5
) -> list[TopicDraft]:
    """Topics (sorted by id) from cluster labels over ``concept_ids``."""
    groups: dict[int, list[int]] = {}
    for index, label in enumerate(result.labels.tolist()):
        if label >= 0:
            groups.setdefault(label, []).append(index)
    ordered = sorted(groups.values(), key=lambda idx: min(concept_ids[i] for i in idx))
    docs = [[concept_names(state.concept(concept_ids[i]) or {}) for i in idx] for idx in ordered]
    keywords = ctfidf_keywords(docs, top_n=top_n)
    drafts, used = [], set()
    for indexes, words in zip(ordered, keywords, strict=True):
        label = label_from_keywords(words)
        members = {concept_ids[i]: round(float(result.probabilities[i]), 6) for i in indexes}
        topic_id = stable_id("topic", label)
        if topic_id in used:
            topic_id = stable_id("topic", label, min(members))
        used.add(topic_id)
        drafts.append(TopicDraft(id=topic_id, label=label, keywords=words, members=members))
    return sorted(drafts, key=lambda d: d["id"])


def _upsert(table: str, key: dict[str, Any], want: dict[str, Any], current: Row | None,
            plan_id: str) -> RowChange | None:
    if current is None:
        return RowChange(table, key, None, {**want, "plan_id": plan_id}, {"active": 0})
    if all(current.get(col) == value for col, value in want.items()):
        return None
    columns = [*want, "plan_id"]
    return RowChange(table, key, {c: current.get(c) for c in columns}, {**want, "plan_id": plan_id})


def _topic_changes(state: GardenState, drafts: list[TopicDraft], plan_id: str) -> list[RowChange]:
    topics, members = state.table("topics"), state.table("topic_memberships")
    changes: list[RowChange] = []
    wanted_topics, wanted_members = set(), set()
    for draft in drafts:
        wanted_topics.add(draft["id"])
        want = {"label": draft["label"], "keywords": json.dumps(draft["keywords"]),
                "size": len(draft["members"]), "active": 1}
        change = _upsert("topics", {"id": draft["id"]}, want, topics.get((draft["id"],)), plan_id)
        changes += [change] if change else []
        for concept_id, prob in sorted(draft["members"].items()):
            key = {"concept_id": concept_id, "topic_id": draft["id"]}
            wanted_members.add((concept_id, draft["id"]))
            current = members.get((concept_id, draft["id"]))
            change = _upsert("topic_memberships", key, {"probability": prob, "active": 1},
                             current, plan_id)
            changes += [change] if change else []
    for (topic_id,), row in sorted(topics.items()):
        if row["active"] and topic_id not in wanted_topics:
            changes.append(RowChange("topics", {"id": topic_id},
                                     {"active": 1, "plan_id": row["plan_id"]},
                                     {"active": 0, "plan_id": plan_id}))
    for key, row in sorted(members.items()):
        if row["active"] and key not in wanted_members:
            changes.append(RowChange("topic_memberships",
                                     {"concept_id": key[0], "topic_id": key[1]},
                                     {"active": 1, "plan_id": row["plan_id"]},
                                     {"active": 0, "plan_id": plan_id}))
    return changes


def plan_topics(
    state: GardenState,
    concept_ids: Sequence[str],
    result: ClusterResult,
    *,
    now: datetime,
    params: dict[str, Any] | None = None,
    salt: str = "",
) -> Plan:
    """The topic plan for one clustering of ``concept_ids``."""
    drafts = draft_topics(state, concept_ids, result)
    actions: list[dict[str, Any]] = [
        {"action": "topic", "topic": d["id"], "label": d["label"], "keywords": d["keywords"],
         "size": len(d["members"])}
        for d in drafts
    ]
    outliers = [cid for cid, lab in zip(concept_ids, result.labels.tolist(), strict=True)
                if lab < 0]
    plan_id = plan_id_for("topics", salt or now.isoformat(), actions)
    stats = {
        "topics": len(drafts),
        "assigned": int(np.sum(result.labels >= 0)),
        "outliers": len(outliers),
        "outlier_ids": outliers[:50],
        "params": params or {},
        "relative_validity": result.relative_validity,
    }
    return Plan(plan_id, "topics", actions, _topic_changes(state, drafts, plan_id), stats)
