"""Merge groups by complete linkage over the pair rule of ``gardener.sameness``.

A *cluster* is one live concept together with every concept already merged into it (their rows
keep their own names), so a survivor's past members keep a say: a concept joins a group only
when it is the same as **every** member, old and new, not merely as the survivor (no hub
absorption, no chaining ``A ~ B ~ C`` into ``A ~ C``). Groups never exceed ``max_group``
members.

Candidates come from blocking keys on canonical names (exact form, initials, a name minus its
first or last word, a name with one word reduced to its first two letters), so the work grows
with the number of names, not with the number of pairs; a key shared by more than
``MAX_BLOCK`` clusters (a very common word) proposes nothing. Groups grow greedily, strongest
relation first (then by concept id), and the pass repeats until nothing joins, so the result is
a fixpoint: planning again on the merged state finds nothing to merge. Conversation overlap is
judged on each group's whole evidence, as it will be after the merge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
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


def _keys(name: str) -> Iterator[str]:
    words = canonical(name)
    if not words:
        return
    yield "=" + "".join(words)
    if len(words) == 1:
        yield "^" + words[0]
        yield "~" + words[0][:3]
    else:
        yield "^" + "".join(w[0] for w in words if zipf(w) < 6.0)
        yield "<" + " ".join(words[:-1])
        yield ">" + " ".join(words[1:])
        for i in range(len(words)):
            yield f"~{i}:" + " ".join([*words[:i], words[i][:2], *words[i + 1 :]])
    yield "<" + " ".join(words)
    yield ">" + " ".join(words)


def candidate_pairs(clusters: Sequence[Cluster]) -> list[tuple[int, int]]:
    """Index pairs (i < j) of clusters that share a blocking key, sorted."""
    blocks: dict[str, set[int]] = defaultdict(set)
    for index, cluster in enumerate(clusters):
        for member in cluster.members:
            for name in member.all_names():
                for key in _keys(name):
                    blocks[key].add(index)
    pairs: set[tuple[int, int]] = set()
    for members in blocks.values():
        if 1 < len(members) <= MAX_BLOCK:
            pairs.update(combinations(sorted(members), 2))
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
        """Complete linkage: the weakest verdict over every cross pair of members."""
        convs = _merge_sets(self.conversations[a], self.conversations[b])
        weakest: Verdict | None = None
        for x in self.members[a]:
            for y in self.members[b]:
                verdict = compare(replace(x, conversations=convs), replace(y, conversations=convs))
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
    changed = True
    while changed:
        changed = False
        for i, j in ranked:
            a, b = groups.find(i), groups.find(j)
            if a == b or len(groups.members[a]) + len(groups.members[b]) > max_group:
                continue
            verdict = groups.verdict(a, b)
            if verdict:
                reasons[min(a, b)] |= reasons.pop(max(a, b), set()) | {verdict.reason}
                groups.union(a, b)
                changed = True
    by_root: dict[int, list[str]] = defaultdict(list)
    for index, cluster in enumerate(clusters):
        by_root[groups.find(index)].append(cluster.id)
    out = [(sorted(ids), ", ".join(sorted(reasons[root])))
           for root, ids in by_root.items() if len(ids) > 1]
    return sorted(out)


def _pair_strength(clusters: Sequence[Cluster], pair: tuple[int, int]) -> int:
    a, b = clusters[pair[0]].members[0], clusters[pair[1]].members[0]
    return compare(a, b).strength
