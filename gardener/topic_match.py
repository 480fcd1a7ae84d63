"""Stable topic ids: a re-clustered topic keeps the id of the old topic it mostly continues.

Overlap is measured on the concepts both clusterings saw (concepts new since the old one, or
gone since, do not count against a match). A new topic keeps an old id when more than
``min_share`` of the old topic's surviving members are in it *and* more than ``min_share`` of
its own previously-seen members came from that old topic; pairs are taken greedily by overlap
(ties by id), so each id is used at most once. Unmatched new topics get a fresh id from their
members. ``topic_events`` describes what happened to the others: a retired topic whose members
now sit in two or more topics was split, a new topic drawn from two or more was merged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ontology import stable_id

__all__ = ["MIN_SHARE", "fresh_topic_id", "match_topics", "topic_events"]

#: A topic keeps its id when more than this share of its membership persists (both ways).
MIN_SHARE = 0.5


def fresh_topic_id(members: Collection[str]) -> str:
    """A content id for a topic no old topic continues (deterministic in its members)."""
    return stable_id("topic", *sorted(members))


def match_topics(
    old: Mapping[str, Collection[str]],
    new: Sequence[Collection[str]],
    seen: Collection[str],
    min_share: float = MIN_SHARE,
) -> list[str]:
    """The id of each new topic: an old id it continues, else ``fresh_topic_id``.

    ``old`` maps old topic ids to their members; ``seen`` is every concept the old clustering
    placed (members and outliers) that is still clustered now.
    """
    seen_set = set(seen)
    old_sets = {tid: set(m) & seen_set for tid, m in old.items()}
    new_sets = [set(m) & seen_set for m in new]
    pairs = []
    for index, members in enumerate(new_sets):
        for tid, old_members in old_sets.items():
            shared = len(members & old_members)
            if (shared and shared > min_share * len(old_members)
                    and shared > min_share * len(members)):
                pairs.append((-shared, tid, index))
    ids: list[str | None] = [None] * len(new)
    used: set[str] = set()
    for _, tid, index in sorted(pairs):
        if ids[index] is None and tid not in used:
            ids[index] = tid
            used.add(tid)
    return [tid if tid is not None else fresh_topic_id(new[i]) for i, tid in enumerate(ids)]


def topic_events(
    old: Mapping[str, Collection[str]],
    new: Mapping[str, Collection[str]],
    min_part: float = 0.2,
) -> list[dict[str, Any]]:
    """``topic_split`` / ``topic_merge`` / ``topic_retired`` / ``topic_new`` records, by id.

    A part counts when it holds at least ``min_part`` of the topic's members.
    """
    where = {c: tid for tid, members in new.items() for c in members}
    came = {c: tid for tid, members in old.items() for c in members}
    events: list[dict[str, Any]] = []
    for tid in sorted(set(old) - set(new)):
        into = Counter(where[c] for c in old[tid] if c in where)
        parts = {t: n for t, n in sorted(into.items()) if n >= min_part * len(old[tid])}
        kind = "topic_split" if len(parts) >= 2 else "topic_retired"
        events.append({"action": kind, "topic": tid, "into": parts, "size": len(old[tid])})
    for tid in sorted(set(new) - set(old)):
        frm = Counter(came[c] for c in new[tid] if c in came)
        parts = {t: n for t, n in sorted(frm.items()) if n >= min_part * len(new[tid])}
        kind = "topic_merge" if len(parts) >= 2 else "topic_new"
        events.append({"action": kind, "topic": tid, "from": parts, "size": len(new[tid])})
    return events
