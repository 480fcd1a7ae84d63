"""Segmentation: coverage, order, token bounds, branches, stable ids, idempotent storage."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from ontology import Conversation, Message, Source
from pipeline.segmenter import (
    CURRENT_BRANCH,
    estimate_tokens,
    segment_conversation,
    segment_store,
    to_extraction_request,
)
from pipeline.settings import Settings
from staging import SourceStore, StagingStore, transaction
from staging.segments_repo import SegmentsRepo

CONV = "conv_1"


def msg(
    idx: int,
    text: str,
    *,
    parent: int | None = None,
    role: str = "user",
    current: bool = True,
    conv: str = CONV,
) -> Message:
    return Message(
        id=f"{conv}_m{idx}",
        conversation_id=conv,
        source_id="src_1",
        parent_id=None if parent is None else f"{conv}_m{parent}",
        external_id=str(idx),
        role=role,  # type: ignore[arg-type]
        author=None,
        text=text,
        parts=[],
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
        position=idx,
        on_current_branch=current,
        user_scope="u",
        assistant_scope="a",
    )


def linear(texts: list[str]) -> list[Message]:
    return [
        msg(i, t, parent=i - 1 if i else None, role="user" if i % 2 == 0 else "assistant")
        for i, t in enumerate(texts)
    ]


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=900), min_size=1, max_size=40),
    max_tokens=st.integers(min_value=20, max_value=400),
    overlap=st.integers(min_value=0, max_value=3),
)
def test_linear_properties(lengths: list[int], max_tokens: int, overlap: int) -> None:
    messages = linear(["x" * n if n else "" for n in lengths])
    # make sure there is text somewhere so that no window is skipped for lack of text
    messages[0] = msg(0, "hello there")
    plans = segment_conversation(messages, max_tokens, overlap)
    order = {m.id: m.position for m in messages}
    covered = [mid for p in plans for mid in p.message_ids]
    textless = {m.id for m in messages if not m.text.strip()}
    assert {m.id for m in messages} - textless <= set(covered)
    for plan in plans:
        positions = [order[mid] for mid in plan.message_ids]
        assert positions == sorted(positions) and len(set(positions)) == len(positions)
        assert plan.branch == CURRENT_BRANCH
        assert plan.token_estimate <= max_tokens or len(plan.message_ids) == 1
    assert [p.ordinal for p in plans] == list(range(len(plans)))
    assert len({p.id for p in plans}) == len(plans)


def test_overlap_between_consecutive_windows() -> None:
    messages = linear(["word " * 40 for _ in range(12)])  # ~54 tokens each
    plans = segment_conversation(messages, max_tokens=200, overlap_messages=1)
    assert len(plans) > 2
    for before, after in itertools.pairwise(plans):
        assert before.message_ids[-1] == after.message_ids[0]
    no_overlap = segment_conversation(messages, max_tokens=200, overlap_messages=0)
    flat = [mid for p in no_overlap for mid in p.message_ids]
    assert len(flat) == len(set(flat)) == len(messages)


def test_oversize_message_is_its_own_segment() -> None:
    messages = linear(["short one", "y" * 10_000, "short two"])
    plans = segment_conversation(messages, max_tokens=100, overlap_messages=1)
    big = [p for p in plans if messages[1].id in p.message_ids]
    assert [p.message_ids for p in big] == [(messages[1].id,)]
    assert big[0].token_estimate == estimate_tokens("y" * 10_000)


def test_side_branches_are_segmented_with_shared_context() -> None:
    # m0 -> m1 -> m2 -> m3 (current) ; m1 -> m4 -> m5 (side) ; m4 -> m6 (side)
    messages = [
        msg(0, "root question"),
        msg(1, "answer one", parent=0, role="assistant"),
        msg(2, "follow up current", parent=1),
        msg(3, "answer current", parent=2, role="assistant"),
        msg(4, "edited follow up", parent=1, current=False),
        msg(5, "answer to edit", parent=4, role="assistant", current=False),
        msg(6, "another regenerate", parent=4, role="assistant", current=False),
    ]
    plans = segment_conversation(messages, max_tokens=1000, overlap_messages=1)
    by_branch = {p.branch: p for p in plans}
    assert by_branch[CURRENT_BRANCH].message_ids == tuple(f"{CONV}_m{i}" for i in range(4))
    side5 = by_branch[f"{CONV}_m5"].message_ids
    side6 = by_branch[f"{CONV}_m6"].message_ids
    assert side5 == (f"{CONV}_m1", f"{CONV}_m4", f"{CONV}_m5")  # one message of context
    assert side6 == (f"{CONV}_m4", f"{CONV}_m6")  # m4 already covered by the m5 branch
    assert len(plans) == 3


def test_parent_cycles_and_orphans_are_still_covered() -> None:
    messages = [
        msg(0, "root"),
        msg(1, "cycle a", parent=2, current=False),
        msg(2, "cycle b", parent=1, current=False),
        msg(3, "orphan", parent=99, current=False),
    ]
    plans = segment_conversation(messages, 1000, 1)
    assert {mid for p in plans for mid in p.message_ids} == {m.id for m in messages}


def test_segments_without_user_or_assistant_text_are_skipped() -> None:
    messages = [msg(0, "system prompt", role="system"), msg(1, "", parent=0)]
    assert segment_conversation(messages, 100, 1) == []
    assert segment_conversation([], 100, 1) == []


def test_ids_are_stable_and_content_addressed() -> None:
    messages = linear(["a " * 100, "b " * 100, "c " * 100, "d " * 100])
    first = segment_conversation(messages, 120, 1)
    again = segment_conversation(list(reversed(messages)), 120, 1)
    assert first == again
    other = segment_conversation(linear(["a " * 100, "b " * 100]), 120, 1)
    assert first[0].id == other[0].id  # same messages, same id


def test_extraction_request_labels_messages_with_text() -> None:
    messages = linear(["first", "", "third"])
    plan = segment_conversation(messages, 1000, 1)[0]
    request = to_extraction_request(plan, {m.id: m for m in messages}, "A title")
    assert [m.ref for m in request.messages] == ["m1", "m2"]
    assert [m.text for m in request.messages] == ["first", "third"]
    assert request.segment_id == plan.id and request.conversation_title == "A title"
    assert request.message_for("m2") is not None and request.message_for("m9") is None


def _fill_source(settings: Settings, conversations: int) -> SourceStore:
    source = SourceStore.open(settings.source_db)
    now = datetime(2024, 1, 1, tzinfo=UTC)
    with transaction(source.db):
        source.add_source(Source(id="src_1", path="x.json", sha256="0", format="jsonl",
                                 imported_at=now, user_scope="u", assistant_scope="a"))
        for c in range(conversations):
            conv = f"conv_{c}"
            source.add_conversation(
                Conversation(id=conv, source_id="src_1", external_id=conv, title=f"T{c}",
                             created_at=now, updated_at=now, user_scope="u", assistant_scope="a"),
                [msg(i, f"message {i} " * 30, parent=i - 1 if i else None, conv=conv)
                 for i in range(6)],
            )
    return source


def test_segment_store_is_idempotent(settings: Settings) -> None:
    settings = settings.model_copy(update={"segment_max_tokens": 120})
    source = _fill_source(settings, conversations=5)
    staging = StagingStore.open(settings.staging_db)
    run = staging.start_run("segment", {}, "test", "u", "a")
    new = segment_store(source, staging, settings, run)
    assert new > 5
    assert staging.count("segments") == new
    assert segment_store(source, staging, settings, run) == 0
    repo = SegmentsRepo(staging)
    assert repo.count_by_status() == {"pending": new}
    member_ids = {mid for row in repo.pending_segments() for mid in repo.segment_messages(row.id)}
    assert member_ids == {m.id for m in source.messages()}


@st.composite
def trees(draw: st.DrawFn) -> list[Message]:
    """A random conversation tree with the path to one leaf flagged as the current branch."""
    n = draw(st.integers(min_value=1, max_value=30))
    parents = [None] + [draw(st.integers(min_value=0, max_value=i - 1)) for i in range(1, n)]
    sizes = draw(st.lists(st.integers(1, 400), min_size=n, max_size=n))
    children = {p for p in parents if p is not None}
    leaves = [i for i in range(n) if i not in children]
    leaf = draw(st.sampled_from(leaves))
    current: set[int] = set()
    node: int | None = leaf
    while node is not None:
        current.add(node)
        node = parents[node]
    return [
        msg(i, "t" * sizes[i], parent=parents[i], current=i in current,
            role="user" if i % 2 == 0 else "assistant")
        for i in range(n)
    ]


@settings(max_examples=80, deadline=None)
@given(messages=trees(), max_tokens=st.integers(30, 300), overlap=st.integers(0, 2))
def test_branching_properties(messages: list[Message], max_tokens: int, overlap: int) -> None:
    plans = segment_conversation(messages, max_tokens, overlap)
    parent_of = {m.id: m.parent_id for m in messages}
    assert {m.id for m in messages} == {mid for p in plans for mid in p.message_ids}
    for plan in plans:
        # every segment is a contiguous path of the tree, in order
        for before, after in itertools.pairwise(plan.message_ids):
            assert parent_of[after] == before
        assert plan.token_estimate <= max_tokens or len(plan.message_ids) == 1
    assert len({p.id for p in plans}) == len(plans)
    assert plans[0].branch == CURRENT_BRANCH
    side = {p.branch for p in plans} - {CURRENT_BRANCH}
    leaves = {m.id for m in messages} - {m.parent_id for m in messages}
    assert side <= leaves


def test_segment_store_resumes_after_a_partial_run(settings: Settings) -> None:
    settings = settings.model_copy(update={"segment_max_tokens": 120})
    source = _fill_source(settings, conversations=6)
    full = StagingStore.open(settings.store / "full.db")
    run = full.start_run("segment", {}, "test", "u", "a")
    expected = segment_store(source, full, settings, run)
    staging = StagingStore.open(settings.staging_db)
    run = staging.start_run("segment", {}, "test", "u", "a")
    first_two = [
        plan
        for conv in ("conv_0", "conv_1")
        for plan in segment_conversation(list(source.messages(conv)), 120, 1)
    ]
    with transaction(staging.db):  # as if killed after the first batch
        SegmentsRepo(staging).upsert_segments(first_two, run)
    assert segment_store(source, staging, settings, run) == expected - len(first_two)
    ids = {r[0] for r in staging.db.execute("SELECT id FROM segments").fetchall()}
    assert ids == {r[0] for r in full.db.execute("SELECT id FROM segments").fetchall()}
