"""Merge groups by complete linkage over the pair rule of ``gardener.sameness``.

A *cluster* is one live concept together with every concept already merged into it (their rows
keep their own names), so a survivor's past members keep a say: a concept joins a group only
when it is the same as **every** member, old and new, not merely as the survivor (no hub
absorption, no chaining ``A ~ B ~ C`` into ``A ~ C``). Groups never exceed ``max_group``
members.

Candidates come from blocking keys on canonical names (exact form; initials against a single
word; a name against itself plus a first or last word; one word's prefix and length for typos),
so the work grows with the number of names, not with the number of pairs; a key shared by more
than ``MAX_BLOCK`` clusters on one side proposes nothing. Groups grow greedily, strongest
relation first (then by concept id), and the pass repeats until nothing joins, so the result is
a fixpoint: planning again on the merged state finds nothing to merge. Conversation overlap is
judged on each group's whole evidence, as it will be after the merge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from gardener.sameness import ConceptFacts, Verdict, canonical, compare, zipf

__all__ = ["MAX_BLOCK", "MAX_GROUP", "Cluster", "candidate_pairs", "merge_groups"]

MAX_GROUP = 20
MAX_BLOCK = 200


@dataclass(frozen=True)
class Cluster:
    """A live concept (``id``) and the facts of its members (itself first)."""

    id: str
    members: tuple[ConceptFacts, ...]


_WITHIN, _SHORT, _LONG = 0, 1, 2


def _typo_keys(words: tuple[str, ...]) -> Iterator[tuple[str, int]]:
    """One word differs by a typo: same prefix, same length or one letter longer."""
    for i, word in enumerate(words):
        if len(word) < 5:
            continue
        rest = " ".join([*words[:i], "_", *words[i + 1 :]])
        yield f"~{rest}|{word[:3]}|{len(word)}", _WITHIN
        yield f"~{rest}|{word[:3]}|{len(word)}+", _SHORT
        yield f"~{rest}|{word[:3]}|{len(word) - 1}+", _LONG


def _keys(name: str) -> Iterator[tuple[str, int]]:
    """Blocking keys and the side they are on: pairs are drawn within ``_WITHIN`` keys and
    across the short and long sides of the others (a name and that name plus a word)."""
    words = canonical(name)
    if not words:
        return
    yield "=" + "".join(words), _WITHIN
    joined = " ".join(words)
    yield "<" + joined, _SHORT
    yield ">" + joined, _SHORT
    if len(words) == 1:
        yield "^" + words[0], _SHORT
    else:
        yield "^" + "".join(w[0] for w in words if zipf(w) < 6.0), _LONG
        yield "<" + " ".join(words[:-1]), _LONG
        yield ">" + " ".join(words[1:]), _LONG
    yield from _typo_keys(words)


def candidate_pairs(clusters: Sequence[Cluster]) -> list[tuple[int, int]]:
    """Index pairs (i < j) of clusters that share a blocking key, sorted."""
    sides: tuple[dict[str, list[int]], ...] = ({}, {}, {})
    for index, cluster in enumerate(clusters):
        for member in cluster.members:
            for name in member.all_names():
                for key, side in _keys(name):
                    sides[side].setdefault(key, []).append(index)
    within, short, long = sides
    pairs: set[tuple[int, int]] = set()
    for members in within.values():
        unique = sorted(set(members))
        if 1 < len(unique) <= MAX_BLOCK:
            pairs.update(combinations(unique, 2))
    for key, longs in long.items():
        shorts = set(short.get(key, ()))
        if shorts and len(shorts) <= MAX_BLOCK and len(set(longs)) <= MAX_BLOCK:
            pairs.update((min(a, b), max(a, b)) for a in shorts for b in set(longs) if a != b)
    return sorted(pairs)


class _Groups:
    """Union-find over clusters with each group's members and evidence conversations."""

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self.parent = list(range(len(clusters)))
        self.members = {i: list(c.members) for i, c in enumerate(clusters)}
        self.conversations = {i: _union(c.members) for i, c in enumerate(clusters)}

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def verdict(self, a: int, b: int) -> Verdict:
        """Complete linkage: the weakest verdict over every cross pair of members; evidence
        overlap is the two groups' (what each member's will be once merged)."""
        ca, cb = self.conversations[a], self.conversations[b]
        overlap = ca is None or cb is None or bool(ca & cb)
        weakest: Verdict | None = None
        for x in self.members[a]:
            for y in self.members[b]:
                verdict = compare(x, y, overlap=overlap)
                if not verdict:
                    return verdict
                if weakest is None or verdict.strength < weakest.strength:
                    weakest = verdict
        assert weakest is not None
        return weakest

    def union(self, a: int, b: int) -> None:
        low, high = sorted((a, b))
        self.parent[high] = low
        self.members[low] += self.members.pop(high)
        self.conversations[low] = _merge_sets(self.conversations[low],
                                              self.conversations.pop(high))


def _union(members: Sequence[ConceptFacts]) -> frozenset[str] | None:
    known = [m.conversations for m in members if m.conversations is not None]
    return frozenset().union(*known) if known else None


def _merge_sets(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if a is None or b is None:
        return a if b is None else b
    return a | b


def merge_groups(
    clusters: Sequence[Cluster], *, max_group: int = MAX_GROUP
) -> list[tuple[list[str], str]]:
    """Groups of cluster ids (sorted, two or more) that are one concept, with the relation."""
    groups = _Groups(clusters)
    pairs = candidate_pairs(clusters)
    ranked = sorted(pairs, key=lambda p: (-_pair_strength(clusters, p), p))
    reasons: dict[int, set[str]] = defaultdict(set)
    dirty: set[int] | None = None  # None: every pair; then only pairs touching a grown group
    while dirty is None or dirty:
        grown: set[int] = set()
        for i, j in ranked:
            a, b = groups.find(i), groups.find(j)
            if a == b or (dirty is not None and a not in dirty and b not in dirty):
                continue
            if len(groups.members[a]) + len(groups.members[b]) > max_group:
                continue
            verdict = groups.verdict(a, b)
            if verdict:
                reasons[min(a, b)] |= reasons.pop(max(a, b), set()) | {verdict.reason}
                groups.union(a, b)
                grown.add(min(a, b))
        dirty = {groups.find(g) for g in grown}
    by_root: dict[int, list[str]] = defaultdict(list)
    for index, cluster in enumerate(clusters):
        by_root[groups.find(index)].append(cluster.id)
    out = [(sorted(ids), ", ".join(sorted(reasons[root])))
           for root, ids in by_root.items() if len(ids) > 1]
    return sorted(out)


def _pair_strength(clusters: Sequence[Cluster], pair: tuple[int, int]) -> int:
    a, b = clusters[pair[0]].members[0], clusters[pair[1]].members[0]
    return compare(a, b).strength
