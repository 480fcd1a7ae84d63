"""Topic plans: a ``TopicLayout`` (topics, parents, outliers) -> row changes against the state.

Two ways to a layout, both pure:

* ``full_layout``: one clustering of the live concepts. Topics keep the id of the old topic
  they continue (``gardener.topic_match``); labels are c-TF-IDF keywords over each topic's
  member concepts' names *and evidence quotes*; parents group the topics
  (``gardener.hierarchy``); outliers stay unassigned and are recorded with their nearest topic,
  unless ``reassign_outliers`` moves the ones within a topic's radius into it (recorded as
  ``assignment = 'nearest'``). Topic splits and merges against the old layout are plan actions.
* ``incremental_layout``: the current layout plus the concepts it has never placed, each
  assigned to its nearest topic (``assignment = 'incremental'``) or recorded as an outlier;
  members no longer live leave. Labels and parents stay; sizes follow.

``plan_topics`` upserts the rows that differ from the state and deactivates (``active = 0``)
the ones no longer wanted; nothing is deleted, and an unchanged layout yields an empty plan.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from gardener.assign import Assignment, assign, centroids_for
from gardener.cluster import ClusterResult
from gardener.hierarchy import parent_groups, parent_id
from gardener.labels import ctfidf_keywords, label_from_keywords, stop_words_for
from gardener.lifecycle import plan_id_for
from gardener.plans import Plan, RowChange
from gardener.state import GardenState, Row, concept_names
from gardener.topic_match import match_topics, topic_events

__all__ = [
    "TopicLabeler",
    "TopicLayout",
    "current_topics",
    "full_layout",
    "incremental_layout",
    "placed_concepts",
    "plan_topics",
]

class TopicLabeler(Protocol):
    """Names a topic from its keywords, member titles and a few quotes; None keeps keywords."""

    def __call__(self, keywords: list[str], titles: list[str],
                 quotes: list[str]) -> str | None: ...


_TABLES = {  # table -> (key columns, compared columns)
    "topics": (("id",), ("label", "keywords", "size", "active", "parent_id")),
    "topic_memberships": (("concept_id", "topic_id"), ("probability", "active", "assignment")),
    "parent_topics": (("id",), ("label", "keywords", "size", "children", "active")),
    "topic_outliers": (("concept_id",), ("nearest_topic_id", "similarity", "active")),
}


@dataclass
class TopicLayout:
    """Wanted rows by table (without ``plan_id``), plus plan actions and stats."""

    rows: dict[str, dict[tuple[Any, ...], Row]] = field(
        default_factory=lambda: {table: {} for table in _TABLES})
    actions: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def add(self, table: str, row: Row) -> None:
        self.rows[table][tuple(row[c] for c in _TABLES[table][0])] = {**row, "active": 1}


def current_topics(state: GardenState) -> dict[str, dict[str, Row]]:
    """Active topic -> {concept_id: membership row} in the state."""
    out: dict[str, dict[str, Row]] = {
        row["id"]: {} for row in state.table("topics").values() if row["active"]}
    for row in state.table("topic_memberships").values():
        if row["active"] and row["topic_id"] in out:
            out[row["topic_id"]][row["concept_id"]] = row
    return out


def placed_concepts(state: GardenState) -> set[str]:
    """Concepts the current layout placed: active members and active outliers."""
    members = {c for topic in current_topics(state).values() for c in topic}
    return members | {r["concept_id"] for r in state.table("topic_outliers").values()
                      if r["active"]}


_Docs = dict[str, tuple[str, list[str]]]  # concept id -> (names, evidence quotes)


def _docs(state: GardenState, concept_ids: Sequence[str]) -> _Docs:
    evidence = state.evidence_by_concept()
    return {c: (concept_names(state.concept(c) or {"title": ""}),
                [str(span["quote"]) for span in evidence.get(c, []) if span.get("quote")])
            for c in concept_ids}


def _class_docs(group: Sequence[str], docs: _Docs) -> list[str]:
    """A topic's documents: each member's names, then each distinct quote once (one sentence
    often supports several concepts; counted per concept it would outweigh their names)."""
    quotes = sorted({quote for c in group for quote in docs[c][1]})
    return [docs[c][0] for c in group] + quotes


def _keywords(groups: list[list[str]], docs: _Docs, stop: frozenset[str],
              top_n: int = 5) -> list[list[str]]:
    return ctfidf_keywords([_class_docs(group, docs) for group in groups], top_n, stop)


def _membership(layout: TopicLayout, concept: str, topic: str, prob: float, how: str) -> None:
    layout.add("topic_memberships", {"concept_id": concept, "topic_id": topic,
                                     "probability": round(min(max(prob, 0.0), 1.0), 6),
                                     "assignment": how})


def _outlier(layout: TopicLayout, concept: str, found: Assignment) -> None:
    layout.add("topic_outliers", {"concept_id": concept, "nearest_topic_id":
                                  found.nearest_topic_id, "similarity": found.similarity})


def _label(keywords: list[str], members: Sequence[str], docs: _Docs,
           labeler: TopicLabeler | None) -> str:
    """The labeler's name when there is one and it answers, else the top keywords."""
    if labeler is not None and keywords:
        named = labeler(keywords, [docs[c][0].split("; ")[0] for c in members[:20]],
                        sorted({q for c in members[:10] for q in docs[c][1]})[:8])
        if named and named.strip():
            return " ".join(named.split())[:80]
    return label_from_keywords(keywords)


def _add_parents(layout: TopicLayout, groups: dict[str, list[str]], cents: Any,
                 docs: dict[str, str], stop: frozenset[str]) -> None:
    order = cents.topic_ids
    parent_of = parent_groups(cents.centroids)
    children: dict[int, list[str]] = {}
    for topic, parent in zip(order, parent_of, strict=True):
        if parent >= 0:
            children.setdefault(parent, []).append(topic)
    kids = [children[p] for p in sorted(children)]
    words = _keywords([[c for t in ks for c in groups[t]] for ks in kids], docs, stop)
    for ks, kw in zip(kids, words, strict=True):
        pid = parent_id(ks)
        layout.add("parent_topics", {"id": pid, "label": label_from_keywords(kw),
                                     "keywords": json.dumps(kw), "children": len(ks),
                                     "size": sum(len(groups[t]) for t in ks)})
        for topic in ks:
            layout.rows["topics"][(topic,)]["parent_id"] = pid
        layout.actions.append({"action": "parent_topic", "topic": pid,
                               "label": label_from_keywords(kw), "children": sorted(ks)})


def full_layout(
    state: GardenState, concept_ids: Sequence[str], result: ClusterResult,
    vectors: npt.NDArray[np.float32], *, reassign_outliers: bool = False,
    labeler: TopicLabeler | None = None,
) -> TopicLayout:
    """The layout of one clustering of ``concept_ids`` (rows of ``vectors``)."""
    index = {c: i for i, c in enumerate(concept_ids)}
    raw: dict[int, list[str]] = {}
    for concept, label in zip(concept_ids, result.labels.tolist(), strict=True):
        if label >= 0:
            raw.setdefault(label, []).append(concept)
    clusters = sorted(raw.values(), key=min)
    old = {t: set(m) for t, m in current_topics(state).items()}
    ids = match_topics(old, clusters, placed_concepts(state) & set(concept_ids))
    groups = dict(zip(ids, clusters, strict=True))
    docs = _docs(state, concept_ids)
    stop = stop_words_for(text for names, quotes in docs.values() for text in (names, *quotes))
    layout = TopicLayout()
    for topic, members, kw in zip(ids, clusters, _keywords(clusters, docs, stop), strict=True):
        layout.add("topics", {"id": topic, "label": _label(kw, members, docs, labeler),
                              "keywords": json.dumps(kw), "size": len(members),
                              "parent_id": None})
        for concept in members:
            _membership(layout, concept, topic, float(result.probabilities[index[concept]]),
                        "cluster")
    cents = centroids_for({t: [index[c] for c in m] for t, m in groups.items()}, vectors)
    outliers = [c for c in concept_ids if result.labels[index[c]] < 0]
    found = assign(vectors[[index[c] for c in outliers]], cents) if outliers else []
    for concept, hit in zip(outliers, found, strict=True):
        if reassign_outliers and hit.topic_id is not None:
            _membership(layout, concept, hit.topic_id, hit.similarity, "nearest")
            layout.rows["topics"][(hit.topic_id,)]["size"] += 1
        else:
            _outlier(layout, concept, hit)
    _add_parents(layout, groups, cents, docs, stop)
    layout.actions[:0] = [
        {"action": "topic", "topic": r["id"], "label": r["label"],
         "keywords": json.loads(r["keywords"]), "size": r["size"], "parent": r["parent_id"]}
        for r in sorted(layout.rows["topics"].values(), key=lambda r: r["id"])]
    layout.actions += topic_events(old, groups) if old else []
    layout.stats.update(mode="full", relative_validity=result.relative_validity)
    return layout


def incremental_layout(
    state: GardenState, concept_ids: Sequence[str], vectors: npt.NDArray[np.float32]
) -> TopicLayout:
    """The current layout with never-placed live concepts assigned (see the module doc)."""
    index = {c: i for i, c in enumerate(concept_ids)}
    current = {t: {c: r for c, r in m.items() if c in index}
               for t, m in current_topics(state).items()}
    current = {t: m for t, m in current.items() if m}
    clustered = {t: [index[c] for c, r in m.items() if r.get("assignment") == "cluster"]
                 or [index[c] for c in m] for t, m in current.items()}
    cents = centroids_for(clustered, vectors)
    fresh = sorted(set(concept_ids) - placed_concepts(state))
    layout = TopicLayout()
    for topic, members in current.items():
        for concept, row in members.items():
            _membership(layout, concept, topic, row["probability"],
                        row.get("assignment") or "cluster")
    for row in state.table("topic_outliers").values():
        if row["active"] and row["concept_id"] in index:
            _outlier(layout, row["concept_id"], Assignment(
                None, row["nearest_topic_id"], row["similarity"]))
    found = assign(vectors[[index[c] for c in fresh]], cents) if fresh else []
    sizes = {t: len(m) for t, m in current.items()}
    for concept, hit in zip(fresh, found, strict=True):
        if hit.topic_id is None:
            _outlier(layout, concept, hit)
            continue
        _membership(layout, concept, hit.topic_id, hit.similarity, "incremental")
        sizes[hit.topic_id] += 1
        layout.actions.append({"action": "topic_assign", "concept": concept,
                               "topic": hit.topic_id, "similarity": hit.similarity})
    _keep_labels_and_parents(state, layout, sizes)
    layout.stats.update(mode="incremental", new_concepts=len(fresh),
                        assigned_new=sum(h.topic_id is not None for h in found))
    return layout


def _keep_labels_and_parents(state: GardenState, layout: TopicLayout,
                             sizes: dict[str, int]) -> None:
    parents: dict[str, list[str]] = {}
    for topic, size in sorted(sizes.items()):
        row = state.table("topics")[(topic,)]
        layout.add("topics", {"id": topic, "label": row["label"], "keywords": row["keywords"],
                              "size": size, "parent_id": row.get("parent_id")})
        if row.get("parent_id"):
            parents.setdefault(row["parent_id"], []).append(topic)
    for pid, kids in sorted(parents.items()):
        row = state.table("parent_topics").get((pid,))
        if row is None:
            continue
        layout.add("parent_topics", {"id": pid, "label": row["label"],
                                     "keywords": row["keywords"], "children": len(kids),
                                     "size": sum(sizes[t] for t in kids)})


def _diff(state: GardenState, layout: TopicLayout, plan_id: str) -> list[RowChange]:
    changes: list[RowChange] = []
    for table, (keys, columns) in _TABLES.items():
        current, wanted = state.table(table), layout.rows[table]
        for key in sorted(set(current) | set(wanted), key=repr):
            have, want = current.get(key), wanted.get(key)
            if want is None:
                if have is not None and have["active"]:
                    changes.append(RowChange(table, dict(zip(keys, key, strict=True)),
                                             {"active": 1, "plan_id": have.get("plan_id")},
                                             {"active": 0, "plan_id": plan_id}))
                continue
            values = {c: want.get(c) for c in columns}
            if have is None:
                changes.append(RowChange(table, dict(zip(keys, key, strict=True)), None,
                                         {**values, "plan_id": plan_id}, {"active": 0}))
            elif any(have.get(c) != v for c, v in values.items()):
                before = {c: have.get(c) for c in [*columns, "plan_id"]}
                changes.append(RowChange(table, dict(zip(keys, key, strict=True)), before,
                                         {**values, "plan_id": plan_id}))
    return changes


def plan_topics(
    state: GardenState, layout: TopicLayout, *, now: datetime,
    params: dict[str, Any] | None = None, salt: str = "",
) -> Plan:
    """The topic plan that turns the state's topics into ``layout``."""
    plan_id = plan_id_for("topics", salt or now.isoformat(), layout.actions)
    topics = layout.rows["topics"]
    assigned = sum(row["size"] for row in topics.values())
    outliers = sorted(c for (c,) in layout.rows["topic_outliers"])
    stats = {
        **layout.stats,
        "topics": len(topics),
        "parents": len(layout.rows["parent_topics"]),
        "assigned": assigned,
        "outliers": len(outliers),
        "outlier_ids": outliers[:50],
        "largest_share": round(max((r["size"] for r in topics.values()), default=0)
                               / max(assigned, 1), 4),
        "params": params or {},
    }
    return Plan(plan_id, "topics", layout.actions, _diff(state, layout, plan_id), stats)
