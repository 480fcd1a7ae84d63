"""Concept lifecycle plans: merge near-duplicates, split mixed concepts, decay stale ones.

Every function here is pure: a ``GardenState`` in, a ``Plan`` out. Nothing is deleted: merged
and split concepts keep their rows, with state ``merged``/``split`` and links.

* **Merge**: groups of live concepts that are one concept by the pair rule of
  ``gardener.sameness`` (names, type compatibility, evidence overlap), grown by complete
  linkage over each survivor's past and present members (``gardener.merging``: no hubs, at
  most ``max_group`` members, a fixpoint). The survivor is never a generic or junk title while
  a member has a real name; then the most evidence, the highest confidence, the earliest
  ``first_seen``, the smallest id. It takes the others' titles and aliases (each name once),
  their evidence and their live relations; each other concept becomes ``merged`` with
  ``merged_into`` and a MERGED_INTO link; every touched concept's ``revision_count`` grows by
  one.
* **Split**: see ``gardener.splits``.
* **Decay**: an active concept with at most ``max_evidence`` spans whose ``last_seen`` is older
  than ``after_days`` before the reference time (default ``now``) becomes ``weak``; a weak one
  whose ``last_seen`` is older than twice that, and that has stayed unchanged (``updated_at``)
  for ``after_days`` of system time, becomes ``archived``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from gardener.merging import MAX_GROUP, Cluster, merge_groups
from gardener.plans import Plan, RowChange, upsert_change
from gardener.sameness import (
    COMPATIBLE_TYPES,
    ConceptFacts,
    canonical,
    credible_names,
    is_generic,
    is_junk,
    types_compatible,
)
from gardener.state import LIVE_STATES, GardenState, Row
from ontology import normalize_name, stable_id

__all__ = [
    "COMPATIBLE_TYPES",
    "merge_clusters",
    "plan_decay",
    "plan_id_for",
    "plan_merges",
    "types_compatible",
]


def plan_id_for(step: str, salt: str, actions: list[dict[str, Any]]) -> str:
    return stable_id("plan", step, salt, json.dumps(actions, sort_keys=True, default=str))


def _aliases(row: Row) -> list[str]:
    return list(json.loads(row["aliases"] or "[]"))


def _roots(state: GardenState) -> dict[str, list[Row]]:
    """Merged rows by the live concept their ``merged_into`` chain ends at."""
    members: dict[str, list[Row]] = {}
    concepts = state.table("concepts")
    for row in sorted(concepts.values(), key=lambda r: r["id"]):
        if row["state"] != "merged" or not row["merged_into"]:
            continue
        target, seen = concepts.get((row["merged_into"],)), {row["id"]}
        while target is not None and target["state"] == "merged" and target["id"] not in seen:
            seen.add(target["id"])
            target = concepts.get((target["merged_into"],))
        if target is not None and target["state"] in LIVE_STATES:
            members.setdefault(target["id"], []).append(row)
    return members


def merge_clusters(state: GardenState, conversations: Mapping[str, str] | None = None
                   ) -> list[Cluster]:
    """One ``Cluster`` per live concept: its own names first, then its past members' facts.

    A survivor's aliases include its members' names; only its own ones speak for it. Evidence
    conversations (from ``conversations``, message id -> conversation id) are left unknown
    when no mapping is given.
    """
    evidence = state.evidence_by_concept()
    split_from = {row["to_concept_id"]: row["from_concept_id"]
                  for row in state.table("concept_links").values()
                  if row["kind"] == "split_into" and row.get("active", 1)}
    past = _roots(state)
    clusters = []
    for row in state.live_concepts():
        convs = None if conversations is None else frozenset(
            conversations.get(span["message_id"], span["message_id"])
            for span in evidence.get(row["id"], []))
        members = past.get(row["id"], [])
        theirs = {canonical(name) for m in members for name in [m["title"], *_aliases(m)]}
        own = [alias for alias in _aliases(row) if canonical(alias) not in theirs]
        head = ConceptFacts(row["title"], row["type"], credible_names(row["title"], own), convs,
                            split_from.get(row["id"]))
        rest = tuple(ConceptFacts(m["title"], m["type"], credible_names(m["title"], _aliases(m)),
                                  convs, split_from.get(m["id"])) for m in members)
        clusters.append(Cluster(row["id"], (head, *rest)))
    return clusters


def _survivor(members: list[Row], evidence_counts: Mapping[str, int]) -> Row:
    """Never a generic or junk title while another member has a real name; then the most
    evidence, the highest confidence, the earliest ``first_seen``, the smallest id."""
    def rank(row: Row) -> tuple[Any, ...]:
        return (
            is_generic(row["title"]) or is_junk(row["title"]),
            -evidence_counts.get(row["id"], 0),
            -row["confidence"],
            row["first_seen"] or "9999",
            row["id"],
        )

    return min(members, key=rank)


def _merged_aliases(survivor: Row, others: list[Row]) -> list[str]:
    aliases = list(json.loads(survivor["aliases"] or "[]"))
    seen = {normalize_name(survivor["title"])} | {normalize_name(a) for a in aliases}
    for other in others:
        for name in [other["title"], *json.loads(other["aliases"] or "[]")]:
            if normalize_name(name) not in seen:
                seen.add(normalize_name(name))
                aliases.append(name)
    return aliases


def _min_opt(values: list[str | None]) -> str | None:
    present = [v for v in values if v]
    return min(present) if present else None


def _max_opt(values: list[str | None]) -> str | None:
    present = [v for v in values if v]
    return max(present) if present else None


def _survivor_change(survivor: Row, others: list[Row], now: str) -> RowChange:
    everyone = [survivor, *others]
    columns = ("aliases", "revision_count", "confidence", "first_seen", "last_seen", "updated_at")
    after = {
        "aliases": json.dumps(_merged_aliases(survivor, others)),
        "revision_count": survivor["revision_count"] + 1,
        "confidence": max(row["confidence"] for row in everyone),
        "first_seen": _min_opt([row["first_seen"] for row in everyone]),
        "last_seen": _max_opt([row["last_seen"] for row in everyone]),
        "updated_at": now,
    }
    before = {column: survivor[column] for column in columns}
    return RowChange("concepts", {"id": survivor["id"]}, before, after)


def _repoint_relations(relations: list[Row], merged: str, survivor: str) -> list[RowChange]:
    changes = []
    for row in relations:
        if row["expired_at"] is not None:
            continue
        ends = {"source_concept_id": row["source_concept_id"],
                "target_concept_id": row["target_concept_id"]}
        moved = {col: survivor if value == merged else value for col, value in ends.items()}
        if moved == ends or moved["source_concept_id"] == moved["target_concept_id"]:
            continue
        before = {col: ends[col] for col in moved if moved[col] != ends[col]}
        after = {col: moved[col] for col in before}
        changes.append(RowChange("relations", {"id": row["id"]}, before, after))
    return changes


def _relations_by_concept(state: GardenState) -> dict[str, list[Row]]:
    index: dict[str, list[Row]] = {}
    for row in sorted(state.table("relations").values(), key=lambda r: r["id"]):
        index.setdefault(row["source_concept_id"], []).append(row)
        if row["target_concept_id"] != row["source_concept_id"]:
            index.setdefault(row["target_concept_id"], []).append(row)
    return index


def _merge_changes(
    state: GardenState, survivor: Row, others: list[Row], plan_id: str, now: str,
    index: tuple[dict[str, list[Row]], dict[str, list[Row]]],
) -> list[RowChange]:
    evidence, relations = index
    changes = [_survivor_change(survivor, others, now)]
    for other in others:
        before = {k: other[k] for k in ("state", "merged_into", "revision_count", "updated_at")}
        after = {"state": "merged", "merged_into": survivor["id"],
                 "revision_count": other["revision_count"] + 1, "updated_at": now}
        changes.append(RowChange("concepts", {"id": other["id"]}, before, after))
        for span in evidence.get(other["id"], []):
            changes.append(RowChange("evidence", {"id": span["id"]},
                                     {"concept_id": other["id"]}, {"concept_id": survivor["id"]}))
        changes += _repoint_relations(relations.get(other["id"], []), other["id"], survivor["id"])
        key = {"from_concept_id": other["id"], "to_concept_id": survivor["id"],
               "kind": "merged_into"}
        link = upsert_change(state, "concept_links", key, {"plan_id": plan_id, "active": 1},
                             {"active": 0})
        changes += [link] if link else []
    return changes


def plan_merges(
    state: GardenState,
    *,
    now: datetime,
    conversations: Mapping[str, str] | None = None,
    max_group: int = MAX_GROUP,
    salt: str = "",
) -> Plan:
    """Merge each group of live concepts that are one concept (``gardener.merging``) into one
    survivor; ``conversations`` maps message ids to conversation ids for the overlap test."""
    stamp = now.isoformat()
    counts = {cid: len(rows) for cid, rows in state.evidence_by_concept().items()}
    actions: list[dict[str, Any]] = []
    chosen: list[tuple[Row, list[Row]]] = []
    for group, why in merge_groups(merge_clusters(state, conversations), max_group=max_group):
        rows = [row for row in (state.concept(cid) for cid in group) if row is not None]
        survivor = _survivor(rows, counts)
        others = [row for row in rows if row["id"] != survivor["id"]]
        chosen.append((survivor, others))
        actions.append({
            "action": "merge",
            "survivor": survivor["id"],
            "survivor_title": survivor["title"],
            "merged": [row["id"] for row in others],
            "merged_titles": [row["title"] for row in others],
            "reason": f"same concept ({why}), complete linkage",
        })
    plan_id = plan_id_for("merge", salt or stamp, actions)
    index = (state.evidence_by_concept(), _relations_by_concept(state))
    changes = [c for s, o in chosen for c in _merge_changes(state, s, o, plan_id, stamp, index)]
    sizes = [len(o) + 1 for _, o in chosen]
    stats = {"merges": sum(len(o) for _, o in chosen), "groups": len(chosen),
             "largest_group": max(sizes, default=0)}
    return Plan(plan_id, "merge", actions, changes, stats)


def _decay_target(row: Row, count: int, cutoffs: tuple[str, str, str], max_ev: int) -> str | None:
    cutoff, archive_cutoff, weak_since = cutoffs
    seen = row["last_seen"] or row["first_seen"] or row["created_at"]
    if row["state"] == "active" and count <= max_ev and seen < cutoff:
        return "weak"
    if row["state"] == "weak" and seen < archive_cutoff and row["updated_at"] <= weak_since:
        return "archived"
    return None


def plan_decay(
    state: GardenState,
    *,
    now: datetime,
    after_days: int,
    max_evidence: int = 1,
    reference: datetime | None = None,
    salt: str = "",
) -> Plan:
    """active -> weak (little evidence, old last_seen) and weak -> archived (twice as old).

    Age is measured against ``reference`` (default ``now``); ``now`` stamps ``updated_at``.
    """
    present = reference or now
    cutoffs = (
        (present - timedelta(days=after_days)).isoformat(),
        (present - timedelta(days=2 * after_days)).isoformat(),
        (now - timedelta(days=after_days)).isoformat(),
    )
    counts = {cid: len(rows) for cid, rows in state.evidence_by_concept().items()}
    stamp = now.isoformat()
    actions, changes = [], []
    for row in state.live_concepts():
        target = _decay_target(row, counts.get(row["id"], 0), cutoffs, max_evidence)
        if target is None:
            continue
        actions.append({"action": "decay", "concept": row["id"], "title": row["title"],
                        "from": row["state"], "to": target, "last_seen": row["last_seen"],
                        "evidence": counts.get(row["id"], 0)})
        before = {k: row[k] for k in ("state", "revision_count", "updated_at")}
        after = {"state": target, "revision_count": row["revision_count"] + 1, "updated_at": stamp}
        changes.append(RowChange("concepts", {"id": row["id"]}, before, after))
    plan_id = plan_id_for("decay", salt or stamp, actions)
    stats = {"weak": sum(a["to"] == "weak" for a in actions),
             "archived": sum(a["to"] == "archived" for a in actions)}
    return Plan(plan_id, "decay", actions, changes, stats)
