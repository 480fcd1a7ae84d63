"""Property tests: content-addressed ids are stable, sensitive to every key part, and
independent of the order of conversations in a file and of nodes in a mapping."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ontology import stable_id
from pipeline.importers import chatgpt, jsonl
from pipeline.importers.base import ImportContext, conversation_id, message_id

CTX = ImportContext("src_x", "user-a", "assistant-a", "chatgpt")
ids = st.text(alphabet=st.characters(blacklist_characters="\x1f", blacklist_categories=("Cs",)),
              min_size=1, max_size=12)
texts = st.text(max_size=40)


@st.composite
def conversations(draw: st.DrawFn) -> dict[str, Any]:
    """A ChatGPT conversation with a random tree (branches included)."""
    conv_id = draw(ids)
    n = draw(st.integers(min_value=1, max_value=8))
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                        "children": []}}
    nodes = ["root"]
    for i in range(n):
        parent = draw(st.sampled_from(nodes))
        node_id = f"n{i}"
        mapping[node_id] = {"id": node_id, "parent": parent, "children": [], "message": {
            "id": f"m{i}", "author": {"role": draw(st.sampled_from(["user", "assistant"]))},
            "create_time": draw(st.none() | st.floats(1.6e9, 1.8e9)),
            "content": {"content_type": "text", "parts": [draw(texts)]}}}
        mapping[parent]["children"].append(node_id)
        nodes.append(node_id)
    return {"id": conv_id, "title": draw(texts), "mapping": mapping,
            "current_node": draw(st.sampled_from(nodes))}


def _signature(records: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    out = set()
    for record in records:
        parsed = chatgpt.convert(record, CTX)
        out.add((parsed.conversation.id, None, None, None, None))
        out.update((m.id, m.parent_id, m.position, m.on_current_branch, m.conversation_id)
                   for m in parsed.messages)
    return out


@settings(max_examples=40, deadline=None)
@given(ids, ids, ids)
def test_message_id_is_stable_id(scope: str, conv: str, ext: str) -> None:
    assert message_id(scope, conv, ext) == stable_id("msg", scope, conv, ext)
    assert message_id(scope, conv, ext) == message_id(scope, conv, ext)


@settings(max_examples=40, deadline=None)
@given(ids, ids, ids, st.integers(0, 2), ids)
def test_any_key_part_change_changes_the_id(
    scope: str, conv: str, ext: str, which: int, other: str
) -> None:
    parts = [scope, conv, ext]
    changed = list(parts)
    changed[which] = other
    assert (message_id(*parts) == message_id(*changed)) == (parts == changed)
    assert conversation_id(scope, "chatgpt", conv) != conversation_id(scope, "claude", conv)


@settings(max_examples=40, deadline=None)
@given(st.lists(conversations(), min_size=1, max_size=4, unique_by=lambda c: c["id"]),
       st.randoms(use_true_random=False))
def test_order_of_conversations_and_nodes_does_not_change_ids(
    records: list[dict[str, Any]], rnd: random.Random
) -> None:
    first = _signature(records)
    assert first == _signature(records)  # same input, same ids
    shuffled = list(records)
    rnd.shuffle(shuffled)
    reordered = []
    for record in shuffled:
        items = list(record["mapping"].items())
        rnd.shuffle(items)
        reordered.append({**record, "mapping": dict(items)})
    assert _signature(reordered) == first


@settings(max_examples=40, deadline=None)
@given(conversations(), ids)
def test_user_scope_is_part_of_every_id(record: dict[str, Any], scope: str) -> None:
    other = ImportContext("src_x", scope, "assistant-a", "chatgpt")
    a, b = chatgpt.convert(record, CTX), chatgpt.convert(record, other)
    same = scope == CTX.user_scope
    assert (a.conversation.id == b.conversation.id) == same
    assert all((x.id == y.id) == same for x, y in zip(a.messages, b.messages, strict=True))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["human", "gpt"]), texts), min_size=1, max_size=6),
       st.integers(0, 5), texts)
def test_sharegpt_ids_follow_content(turns: list[tuple[str, str]], index: int,
                                     new_text: str) -> None:
    record = {"conversations": [{"from": f, "value": v} for f, v in turns]}
    ctx = ImportContext("src_x", "user-a", "assistant-a", "sharegpt")
    (first,) = list(jsonl.read_sharegpt([("record 1", record)], ctx))
    (again,) = list(jsonl.read_sharegpt([("record 1", record)], ctx))
    assert [m.id for m in first.messages] == [m.id for m in again.messages]  # type: ignore[union-attr]
    index %= len(turns)
    if turns[index][1] == new_text:
        return
    edited = [dict(t) for t in record["conversations"]]
    edited[index]["value"] = new_text
    (changed,) = list(jsonl.read_sharegpt([("record 1", {"conversations": edited})], ctx))
    assert changed.conversation.id != first.conversation.id  # type: ignore[union-attr]
