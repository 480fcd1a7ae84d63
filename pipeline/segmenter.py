"""Segmentation: conversations cut into token-bounded windows along every branch.

A segment is a run of consecutive messages of one branch (the current branch, or the part of a
side branch that the current branch does not cover), small enough for one extraction call.
Messages are never split (evidence offsets are per message); a message larger than the bound
is a segment on its own. Consecutive windows share ``overlap_messages`` messages of context.
Segment ids hash the ordered message ids, so re-segmenting the same data yields the same ids.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ontology import ExtractionRequest, Message, SegmentMessage, stable_id
from pipeline.settings import Settings
from staging import Run, SourceStore, StagingStore, transaction
from staging.segments_repo import SegmentRow, SegmentsRepo

__all__ = [
    "CURRENT_BRANCH",
    "SegmentPlan",
    "estimate_tokens",
    "segment_conversation",
    "segment_store",
    "to_extraction_request",
]

CURRENT_BRANCH = "current"
_MESSAGE_OVERHEAD_TOKENS = 4  # role label, separators
_TEXT_ROLES = frozenset({"user", "assistant"})
_BATCH_CONVERSATIONS = 200


@dataclass(frozen=True)
class SegmentPlan:
    """One window of messages to extract from, before it is stored."""

    id: str
    conversation_id: str
    ordinal: int
    branch: str
    message_ids: tuple[str, ...]
    token_estimate: int


def estimate_tokens(text: str) -> int:
    """About four characters per token, plus a small per-message overhead."""
    return (len(text) + 3) // 4 + _MESSAGE_OVERHEAD_TOKENS


def segment_conversation(
    messages: Sequence[Message], max_tokens: int, overlap_messages: int
) -> list[SegmentPlan]:
    """Plans for one conversation: the current branch first, then each side branch."""
    if not messages:
        return []
    ordered = sorted(messages, key=lambda m: (m.position, m.id))
    tree = _Tree(ordered)
    covered: set[str] = set()
    plans: list[SegmentPlan] = []
    seen_ids: set[str] = set()
    for branch, context, tail in tree.branches(covered, overlap_messages):
        for window in _windows(context, tail, max_tokens, overlap_messages):
            if not _has_text(window):
                continue
            plan = _plan(ordered[0].conversation_id, len(plans), branch, window)
            if plan.id not in seen_ids:
                seen_ids.add(plan.id)
                plans.append(plan)
    return plans


def to_extraction_request(
    plan: SegmentPlan | SegmentRow,
    messages_by_id: Mapping[str, Message], conversation_title: str | None
) -> ExtractionRequest:
    """The segment as an extractor sees it: messages with text, labelled m1..mN in order."""
    shown: list[SegmentMessage] = []
    for message_id in plan.message_ids:
        message = messages_by_id.get(message_id)
        if message is None or not message.text.strip():
            continue
        shown.append(
            SegmentMessage(
                ref=f"m{len(shown) + 1}",
                message_id=message.id,
                role=message.role,
                author=message.author,
                created_at=message.created_at,
                text=message.text,
            )
        )
    return ExtractionRequest(
        segment_id=plan.id, conversation_title=conversation_title, messages=tuple(shown)
    )


def segment_store(
    source: SourceStore, staging: StagingStore, settings: Settings, run: Run
) -> int:
    """Segment every conversation of the source db; returns the number of new segments.

    Idempotent and resumable: segment ids are content hashes and rows are inserted with
    INSERT OR IGNORE, one transaction per batch of conversations.
    """
    repo = SegmentsRepo(staging)
    by_conversation = itertools.groupby(source.messages(), key=lambda m: m.conversation_id)
    new = 0
    batch: list[SegmentPlan] = []
    for count, (_conversation_id, group) in enumerate(by_conversation, start=1):
        batch.extend(
            segment_conversation(
                list(group), settings.segment_max_tokens, settings.segment_overlap_messages
            )
        )
        if count % _BATCH_CONVERSATIONS == 0:
            new += _flush(repo, staging, batch, run)
            batch = []
    return new + _flush(repo, staging, batch, run)


def _flush(repo: SegmentsRepo, staging: StagingStore, plans: list[SegmentPlan], run: Run) -> int:
    if not plans:
        return 0
    with transaction(staging.db):
        return repo.upsert_segments(plans, run)


class _Tree:
    """Parent/child structure of one conversation, tolerant of orphans and cycles."""

    def __init__(self, ordered: Sequence[Message]) -> None:
        self.ordered = ordered
        self.by_id = {m.id: m for m in ordered}
        parents = {m.parent_id for m in ordered if m.parent_id in self.by_id}
        self.leaves = [m for m in ordered if m.id not in parents]

    def path_to(self, leaf: Message) -> list[Message]:
        """Root-to-leaf path (stops at a missing parent or a cycle)."""
        path: list[Message] = []
        seen: set[str] = set()
        node: Message | None = leaf
        while node is not None and node.id not in seen:
            seen.add(node.id)
            path.append(node)
            node = self.by_id.get(node.parent_id) if node.parent_id else None
        path.reverse()
        return path

    def current_path(self) -> list[Message]:
        flagged = [m for m in self.ordered if m.on_current_branch]
        if flagged:
            return flagged
        return self.path_to(self.leaves[-1]) if self.leaves else list(self.ordered)

    def branches(
        self, covered: set[str], overlap: int
    ) -> Iterable[tuple[str, list[Message], list[Message]]]:
        """(branch label, shared context, uncovered messages) for every branch."""
        current = self.current_path()
        covered.update(m.id for m in current)
        yield CURRENT_BRANCH, [], current
        for leaf in self.leaves:
            if leaf.id in covered:
                continue
            path = self.path_to(leaf)
            first = next(i for i, m in enumerate(path) if m.id not in covered)
            tail = path[first:]
            covered.update(m.id for m in tail)
            yield leaf.id, path[max(0, first - overlap) : first] if overlap > 0 else [], tail
        rest = [m for m in self.ordered if m.id not in covered]  # parent cycles: no leaf
        if rest:
            covered.update(m.id for m in rest)
            yield rest[-1].id, [], rest


def _windows(
    context: list[Message], tail: list[Message], max_tokens: int, overlap: int
) -> list[list[Message]]:
    """Greedy token-bounded windows over ``tail``, each carrying up to ``overlap`` messages."""
    windows: list[list[Message]] = []
    current: list[Message] = []
    carry = context
    for message in tail:
        cost = estimate_tokens(message.text)
        if current and _tokens(current) + cost > max_tokens:
            windows.append(current)
            carry = current[-overlap:] if overlap > 0 else []
            current = []
        if not current:
            current = _fit(carry, cost, max_tokens)
        current.append(message)
    if current:
        windows.append(current)
    return windows


def _fit(carry: list[Message], cost: int, max_tokens: int) -> list[Message]:
    """The longest suffix of ``carry`` that fits in the bound together with ``cost``."""
    kept = list(carry)
    while kept and _tokens(kept) + cost > max_tokens:
        kept.pop(0)
    return kept


def _tokens(window: Sequence[Message]) -> int:
    return sum(estimate_tokens(m.text) for m in window)


def _has_text(window: Sequence[Message]) -> bool:
    return any(m.role in _TEXT_ROLES and m.text.strip() for m in window)


def _plan(conversation_id: str, ordinal: int, branch: str, window: list[Message]) -> SegmentPlan:
    ids = tuple(m.id for m in window)
    return SegmentPlan(
        id=stable_id("seg", *ids),
        conversation_id=conversation_id,
        ordinal=ordinal,
        branch=branch,
        message_ids=ids,
        token_estimate=_tokens(window),
    )
