"""Evidence verification: offsets always index the original message text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ontology import ExtractionRequest, RawMention, SegmentMessage
from pipeline.evidence import locate_quote, normalise_for_match, verify_mention


def _request(*texts: str) -> ExtractionRequest:
    messages = tuple(
        SegmentMessage(f"m{i + 1}", f"msg-{i + 1}", "user", None, None, text)
        for i, text in enumerate(texts)
    )
    return ExtractionRequest("seg-1", "t", messages)


def _mention(quote: str, ref: str = "m1") -> RawMention:
    return RawMention(title="Rust", type="goal", description="d", quote=quote,
                      message_ref=ref, confidence=0.8, relations=[])


def test_exact_quote_offsets() -> None:
    text = "I want to learn Rust this year."
    start, end = locate_quote("learn Rust", text)  # type: ignore[misc]
    assert text[start:end] == "learn Rust"


def test_whitespace_and_quote_variants_map_back_to_original() -> None:
    text = "He said:\n\n  \u201cship   it\u201d \u2014 now"
    span = locate_quote('said: "ship it" - now', text)
    assert span is not None
    start, end = span
    assert text[start:end] == "said:\n\n  \u201cship   it\u201d \u2014 now"


def test_quote_absent_is_none() -> None:
    assert locate_quote("learn Go", "I want to learn Rust") is None
    assert locate_quote("   ", "anything") is None


def test_verify_reasons() -> None:
    request = _request("I want to learn Rust.", "My sister lives in Lyon.")
    ok = verify_mention(_mention("learn Rust"), request, 3)
    assert ok.verified and ok.message_id == "msg-1" and (ok.start, ok.end) == (10, 20)
    assert verify_mention(_mention("learn Rust", "m9"), request, 3).reason == "unknown_message_ref"
    assert verify_mention(_mention("Ru"), request, 3).reason == "quote_too_short"
    assert verify_mention(_mention("learn Go"), request, 3).reason == "quote_not_found"
    other = verify_mention(_mention("lives in Lyon"), request, 3)
    assert not other.verified and other.reason == "quote_in_other_message"
    assert other.start is None


_TEXT = st.text(
    alphabet=st.sampled_from(list("ab c\n\t\u00a0\u201c\u201d\"'\u2014-xyz.")), max_size=120
)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, data=st.data())
def test_located_span_equals_slice_modulo_whitespace(text: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, len(text)))
    quote = text[i:j]
    span = locate_quote(quote, text)
    if not quote.strip():
        assert span is None
        return
    assert span is not None
    start, end = span
    assert 0 <= start < end <= len(text)
    assert normalise_for_match(text[start:end])[0] == normalise_for_match(quote.strip())[0]
