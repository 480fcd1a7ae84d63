"""Validate a reply against a StrictBase model and, when it fails, say why in one word.

The classes name what went wrong so failures can be counted and compared across models and
schema versions: ``empty_reply``, ``refusal``, ``truncated_json``, ``prose_around_json``,
``merged_objects`` (two objects concatenated, or one object with duplicate keys),
``invalid_json``, ``extra_keys``, ``missing_fields``, ``bad_enum``, ``wrong_type``,
``out_of_range``. Nothing here salvages JSON from prose unless asked to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from ontology import StrictBase

__all__ = ["INVALID_CLASSES", "Invalid", "Valid", "validate_reply"]

M = TypeVar("M", bound=StrictBase)

INVALID_CLASSES = (
    "empty_reply",
    "refusal",
    "truncated_json",
    "prose_around_json",
    "merged_objects",
    "invalid_json",
    "extra_keys",
    "missing_fields",
    "bad_enum",
    "wrong_type",
    "out_of_range",
)

# pydantic error types -> our classes, in the order a class wins when several occur.
_PYDANTIC_CLASSES = (
    ("extra_keys", ("extra_forbidden",)),
    ("missing_fields", ("missing",)),
    ("bad_enum", ("literal_error", "enum")),
    ("out_of_range", ("greater_than", "greater_than_equal", "less_than", "less_than_equal",
                      "too_long", "too_short", "finite_number")),
)


@dataclass(frozen=True)
class Valid(Generic[M]):
    value: M


@dataclass(frozen=True)
class Invalid:
    error_class: str
    detail: str


class _DuplicateKey(ValueError):
    pass


def validate_reply(
    model_cls: type[M],
    text: str | None,
    *,
    finish_reason: str | None = None,
    refusal: str | None = None,
    salvage: bool = False,
) -> Valid[M] | Invalid:
    """The validated model, or the class and detail of the first thing wrong with ``text``."""
    if refusal or finish_reason == "content_filter":
        return Invalid("refusal", refusal or "the reply was stopped by a content filter")
    if text is None or not text.strip():
        return Invalid("empty_reply", "the reply had no content")
    syntax = _check_syntax(text, finish_reason)
    if syntax is not None:
        if salvage and syntax.error_class == "prose_around_json":
            inner = _json_object_in(text)
            if inner is not None:
                return validate_reply(model_cls, inner, finish_reason=finish_reason)
        return syntax
    try:
        return Valid(model_cls.model_validate_json(text))
    except ValidationError as exc:
        return Invalid(_class_of(exc), _describe(exc))


def _check_syntax(text: str, finish_reason: str | None) -> Invalid | None:
    stripped = text.strip()
    try:
        parsed = json.loads(stripped, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        return Invalid("merged_objects", f"an object repeats the key {exc}: two objects merged")
    except json.JSONDecodeError as exc:
        return _classify_decode_error(stripped, exc, finish_reason)
    if not isinstance(parsed, dict):
        return Invalid("wrong_type", f"the reply is a JSON {type(parsed).__name__}, not an object")
    return None


def _classify_decode_error(
    stripped: str, exc: json.JSONDecodeError, finish_reason: str | None
) -> Invalid:
    where = f"{exc.msg} at char {exc.pos}"
    if not stripped.startswith(("{", "[")):
        if "{" in stripped:
            return Invalid("prose_around_json", f"text around the JSON object ({where})")
        return Invalid("invalid_json", f"the reply is not JSON ({where})")
    first = _first_value_end(stripped)
    if first is not None:
        rest = stripped[first:].lstrip()
        if rest.startswith(("{", "[")):
            return Invalid("merged_objects", f"several JSON values one after another ({where})")
        return Invalid("prose_around_json", f"text after the JSON object ({where})")
    if finish_reason == "length" or _unclosed(stripped):
        return Invalid("truncated_json", f"the JSON ends before it is closed ({where})")
    return Invalid("invalid_json", where)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(repr(key))
        seen[key] = value
    return seen


def _unclosed(text: str) -> bool:
    """True if brackets or a string are still open at the end of ``text``."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return in_string or depth > 0


def _first_value_end(text: str) -> int | None:
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        return None
    return end


def _json_object_in(text: str) -> str | None:
    """The first complete JSON object inside prose (opt-in salvage), or None."""
    start = text.find("{")
    while start != -1:
        try:
            _, end = json.JSONDecoder().raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return text[start:end]
    return None


def _class_of(exc: ValidationError) -> str:
    kinds = {error["type"] for error in exc.errors()}
    for name, types in _PYDANTIC_CLASSES:
        if kinds & set(types):
            return name
    return "wrong_type"


def _describe(exc: ValidationError, limit: int = 8) -> str:
    lines = []
    for error in exc.errors()[:limit]:
        path = ".".join(str(part) for part in error["loc"]) or "(root)"
        lines.append(f"{path}: {error['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        lines.append(f"... and {more} more")
    return "; ".join(lines)
