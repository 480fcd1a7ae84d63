"""Split plans: a concept whose evidence forms clearly separated groups becomes several concepts.

For each live concept with at least ``2 * min_part`` evidence spans, the quote embeddings are
cut into two groups by average-linkage agglomerative clustering on cosine distance (no seed, so
deterministic). The concept is split when each group has at least ``min_part`` spans and the
cosine silhouette of the cut is at least ``min_silhouette`` (a scale-free measure of "clearly
separated"). Each part is a new concept (id from the original id and its evidence ids, title
suffixed with the part's top c-TF-IDF keyword that is not already a word of the title nor the
other part's keyword) that keeps its evidence; the original becomes ``split`` with SPLIT_INTO
links. Reverting folds the parts back (state ``merged`` into the original) and restores the
original exactly.

Splits and merges never undo each other, so gardening converges: a split part is not split
again (its evidence is one side of a cut already judged), a merge survivor is not split (the
merge rule found its members to be one concept), and the merge rule never joins split siblings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from gardener.labels import ctfidf_keywords
from gardener.lifecycle import plan_id_for
from gardener.plans import Plan, RowChange, upsert_change
from gardener.state import GardenState, Row
from ontology import normalize_name, stable_id

__all__ = ["part_keywords", "plan_splits", "split_candidates", "two_groups"]


def two_groups(vectors: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int64], float]:
    """Labels (0/1) of the best two-way cut and its cosine silhouette."""
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import silhouette_score

    labels = AgglomerativeClustering(n_clusters=2, metric="cosine", linkage="average").fit(
        vectors
    ).labels_
    if len(set(labels.tolist())) < 2:
        return labels, -1.0
    return labels, float(silhouette_score(vectors, labels, metric="cosine"))


def _settled(state: GardenState) -> set[str]:
    """Concepts a split must leave alone: split parts and merge survivors."""
    parts = {row["to_concept_id"] for row in state.table("concept_links").values()
             if row["kind"] == "split_into" and row.get("active", 1)}
    survivors = {row["merged_into"] for row in state.table("concepts").values()
                 if row["state"] == "merged" and row["merged_into"]}
    return parts | survivors


def split_candidates(state: GardenState, min_part: int) -> list[tuple[Row, list[Row]]]:
    """Live concepts with enough evidence to be split, with their evidence rows."""
    evidence = state.evidence_by_concept()
    settled = _settled(state)
    return [
        (row, evidence[row["id"]])
        for row in state.live_concepts()
        if len(evidence.get(row["id"], [])) >= 2 * min_part and row["id"] not in settled
    ]


def part_keywords(title: str, keywords: list[list[str]]) -> list[str]:
    """One keyword per part: its best one not already a word of the title or taken."""
    taken = set(normalize_name(title).split())
    chosen = []
    for words in keywords:
        word = next((w for w in words if normalize_name(w) not in taken), "")
        taken.add(normalize_name(word))
        chosen.append(word)
    return chosen


def _part_row(original: Row, spans: list[Row], keyword: str, now: str) -> Row:
    part_id = stable_id("concept", original["id"], "split", *sorted(s["id"] for s in spans))
    return {
        "id": part_id,
        "title": f"{original['title']} ({keyword})" if keyword else original["title"],
        "type": original["type"],
        "description": original["description"],
        "state": "active",
        "confidence": original["confidence"],
        "aliases": "[]",
        "revision_count": 0,
        "first_seen": original["first_seen"],
        "last_seen": original["last_seen"],
        "merged_into": None,
        "created_at": now,
        "updated_at": now,
    }


def _split_changes(
    state: GardenState, original: Row, groups: list[list[Row]], plan_id: str, now: str
) -> tuple[list[RowChange], list[Row]]:
    keywords = part_keywords(
        original["title"],
        ctfidf_keywords([[span["quote"] for span in group] for group in groups], top_n=8))
    before = {k: original[k] for k in ("state", "revision_count", "updated_at")}
    after = {"state": "split", "revision_count": original["revision_count"] + 1, "updated_at": now}
    changes = [RowChange("concepts", {"id": original["id"]}, before, after)]
    parts = []
    for group, words in zip(groups, keywords, strict=True):
        part = _part_row(original, group, words, now)
        parts.append(part)
        fold_back = {"state": "merged", "merged_into": original["id"]}
        values = {k: v for k, v in part.items() if k not in ("id", "created_at")}
        if state.concept(part["id"]) is None:  # a re-split after an unsplit reuses the part
            values["created_at"] = part["created_at"]
        row = upsert_change(state, "concepts", {"id": part["id"]}, values, fold_back)
        changes += [row] if row else []
        for span in group:
            changes.append(RowChange("evidence", {"id": span["id"]},
                                     {"concept_id": original["id"]}, {"concept_id": part["id"]}))
        key = {"from_concept_id": original["id"], "to_concept_id": part["id"],
               "kind": "split_into"}
        link = upsert_change(state, "concept_links", key, {"plan_id": plan_id, "active": 1},
                             {"active": 0})
        changes += [link] if link else []
    return changes, parts


def plan_splits(
    state: GardenState,
    quote_vectors: Mapping[str, npt.NDArray[np.float32]],
    *,
    now: datetime,
    min_part: int = 2,
    min_silhouette: float = 0.5,
    salt: str = "",
) -> Plan:
    """Split every live concept whose evidence quotes form two clearly separated groups."""
    stamp = now.isoformat()
    found: list[tuple[Row, list[list[Row]], float]] = []
    for row, spans in split_candidates(state, min_part):
        usable = [span for span in spans if span["id"] in quote_vectors]
        if len(usable) < 2 * min_part:
            continue
        labels, score = two_groups(np.stack([quote_vectors[s["id"]] for s in usable]))
        groups = [[s for s, lab in zip(usable, labels, strict=True) if lab == k] for k in (0, 1)]
        if score >= min_silhouette and min(len(g) for g in groups) >= min_part:
            groups.sort(key=lambda g: g[0]["id"])
            found.append((row, groups, score))
    actions: list[dict[str, Any]] = [
        {"action": "split", "concept": row["id"], "title": row["title"],
         "silhouette": round(score, 4), "parts": [[s["id"] for s in g] for g in groups]}
        for row, groups, score in found
    ]
    plan_id = plan_id_for("split", salt or stamp, actions)
    changes: list[RowChange] = []
    for action, (row, groups, _) in zip(actions, found, strict=True):
        row_changes, parts = _split_changes(state, row, groups, plan_id, stamp)
        changes += row_changes
        action["part_ids"] = [part["id"] for part in parts]
        action["part_titles"] = json.loads(json.dumps([part["title"] for part in parts]))
    return Plan(plan_id, "split", actions, changes, {"splits": len(found)})
