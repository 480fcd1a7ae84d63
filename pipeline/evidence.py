"""Evidence verification: a quote must occur verbatim in the message it cites.

Pure functions. Matching forgives only whitespace runs, curly versus straight quotes and dash
variants; the offsets returned always index the ORIGINAL message text, so that
``message_text[start:end]`` is the real span the concept rests on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ontology import ExtractionRequest, RawMention

__all__ = [
    "REJECT_REASONS",
    "Verification",
    "locate_quote",
    "normalise_for_match",
    "verify_mention",
]

REJECT_REASONS = (
    "unknown_message_ref",
    "quote_too_short",
    "quote_not_found",
    "quote_in_other_message",
)

_CHAR_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
    "\u2015": "-", "\u2212": "-",
    "\u00a0": " ",
}


@dataclass(frozen=True)
class Verification:
    """The outcome of checking one mention's quote against its cited message."""

    verified: bool
    message_id: str | None
    start: int | None
    end: int | None
    reason: str | None

    @classmethod
    def rejected(cls, reason: str, message_id: str | None = None) -> Verification:
        return cls(False, message_id, None, None, reason)


def normalise_for_match(text: str) -> tuple[str, list[int]]:
    """Whitespace runs to one space, quote/dash variants folded; plus each char's origin index."""
    out: list[str] = []
    origin: list[int] = []
    in_space = False
    for index, char in enumerate(text):
        mapped = _CHAR_MAP.get(char, char)
        if mapped.isspace():
            if in_space:
                continue
            in_space = True
            mapped = " "
        else:
            in_space = False
        out.append(mapped)
        origin.append(index)
    return "".join(out), origin


def locate_quote(quote: str, message_text: str) -> tuple[int, int] | None:
    """Offsets of the first occurrence of ``quote`` in ``message_text``, or None.

    The quote is stripped; an empty quote is never found. ``message_text[start:end]`` equals the
    quote modulo whitespace runs, quote and dash variants.
    """
    stripped = quote.strip()
    if not stripped:
        return None
    direct = message_text.find(stripped)
    if direct >= 0:
        return direct, direct + len(stripped)
    needle, _ = normalise_for_match(stripped)
    haystack, origin = normalise_for_match(message_text)
    found = haystack.find(needle)
    if found < 0:
        return None
    # The needle starts and ends with a non-space char, each of which maps to one original char.
    return origin[found], origin[found + len(needle) - 1] + 1


def verify_mention(
    mention: RawMention, request: ExtractionRequest, min_quote_chars: int
) -> Verification:
    """Check one mention: known message ref, long enough quote, found in THAT message."""
    message = request.message_for(mention.message_ref.strip())
    if message is None:
        return Verification.rejected("unknown_message_ref")
    if len(mention.quote.strip()) < max(1, min_quote_chars):
        return Verification.rejected("quote_too_short", message.message_id)
    span = locate_quote(mention.quote, message.text)
    if span is not None:
        return Verification(True, message.message_id, span[0], span[1], None)
    for other in request.messages:
        if other.ref != message.ref and locate_quote(mention.quote, other.text) is not None:
            return Verification.rejected("quote_in_other_message", message.message_id)
    return Verification.rejected("quote_not_found", message.message_id)
