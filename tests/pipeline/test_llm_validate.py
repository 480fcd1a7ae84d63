"""validate_reply as a property: valid replies round-trip, any damage is classified."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from ontology import CONCEPT_TYPES, RELATION_TYPES, ExtractionResult
from pipeline.llm import INVALID_CLASSES, validate_reply
from pipeline.llm.validate import Invalid, Valid

unit = st.floats(min_value=0, max_value=1, allow_nan=False)
relations = st.fixed_dictionaries({
    "target_title": st.text(max_size=20), "relation": st.sampled_from(RELATION_TYPES),
    "confidence": unit})
mentions = st.fixed_dictionaries({
    "title": st.text(max_size=30), "type": st.sampled_from(CONCEPT_TYPES),
    "description": st.text(max_size=60), "quote": st.text(max_size=60),
    "message_ref": st.from_regex(r"m[1-9][0-9]?", fullmatch=True), "confidence": unit,
    "relations": st.lists(relations, max_size=2)})
replies = st.fixed_dictionaries({"mentions": st.lists(mentions, max_size=3)})


@given(reply=replies)
@hyp_settings(max_examples=50, deadline=None)
def test_valid_replies_round_trip(reply: dict[str, Any]) -> None:
    verdict = validate_reply(ExtractionResult, json.dumps(reply, ensure_ascii=False))
    assert isinstance(verdict, Valid)
    assert verdict.value.model_dump(mode="json") == reply


@given(reply=replies, cut=st.integers(min_value=1, max_value=10_000),
       damage=st.sampled_from(["truncate", "prose", "concat", "extra", "drop"]))
@hyp_settings(max_examples=100, deadline=None)
def test_damaged_replies_are_always_invalid_and_classified(
    reply: dict[str, Any], cut: int, damage: str
) -> None:
    text = json.dumps(reply)
    if damage == "truncate":
        text = text[: max(1, min(cut, len(text) - 1))]
    elif damage == "prose":
        text = f"Here is the result: {text}"
    elif damage == "concat":
        text = text + text
    elif damage == "extra":
        text = json.dumps({**reply, "extra": 1})
    else:
        text = json.dumps({})
    verdict = validate_reply(ExtractionResult, text)
    assert isinstance(verdict, Invalid) and verdict.error_class in INVALID_CLASSES
    expected = {"truncate": "truncated_json", "prose": "prose_around_json",
                "concat": "merged_objects", "extra": "extra_keys", "drop": "missing_fields"}
    assert verdict.error_class == expected[damage], (text, verdict)
