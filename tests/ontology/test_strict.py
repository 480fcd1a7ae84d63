"""The strict-schema contract: what OpenAI strict mode demands, checked recursively."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from ontology import (
    ConceptHypothesis,
    EvidenceSpan,
    ExtractionResult,
    StrictBase,
    StrictSchemaError,
    check_strict_schema,
    schema_hash,
    strict_json_schema,
)


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def test_every_object_schema_of_the_core_models_is_closed_and_fully_required() -> None:
    for model in (ConceptHypothesis, EvidenceSpan, ExtractionResult):
        schema = strict_json_schema(model)
        check_strict_schema(schema)
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])


def test_nullable_fields_are_required_not_optional() -> None:
    schema = strict_json_schema(ConceptHypothesis)
    assert "first_seen" in schema["required"]
    first_seen = schema["properties"]["first_seen"]
    assert {"type": "null"} in first_seen["anyOf"]
    with pytest.raises(ValidationError):
        ConceptHypothesis.model_validate(
            {k: v for k, v in _hypothesis().items() if k != "first_seen"}
        )


def test_extra_keys_are_forbidden() -> None:
    with pytest.raises(ValidationError, match="extra"):
        ConceptHypothesis.model_validate({**_hypothesis(), "invented": 1})


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
         "#: additionalProperties"),
        (_closed({"a": {"type": "array", "items": {"type": "object", "properties": {
            "b": {"type": "string"}}, "required": [], "additionalProperties": False}}}),
         "#/properties/a/items: properties not in required: b"),
        ({**_closed({"a": {"$ref": "#/$defs/X"}}), "$defs": {"X": {
            "type": "object", "properties": {"c": {"type": "integer"}}, "required": ["c"]}}},
         "#/$defs/X: additionalProperties"),
        (_closed({"a": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {
            "d": {"type": "string"}}, "required": ["d"], "additionalProperties": True}]}}),
         "#/properties/a/anyOf/1: additionalProperties"),
        (_closed({"a": {"type": "string", "default": "x"}}), "defaults are not allowed"),
    ],
    ids=["top-level-open", "nested-in-array", "in-defs", "in-anyof", "default"],
)
def test_check_strict_schema_rejects_each_violation_with_its_path(
    schema: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(StrictSchemaError) as caught:
        check_strict_schema(schema)
    assert any(fragment in problem for problem in caught.value.problems), caught.value.problems


def test_a_model_with_a_default_cannot_become_a_strict_schema() -> None:
    class Loose(StrictBase):
        name: str = Field(default="x", description="has a default")

    class Nested(StrictBase):
        inner: Loose = Field(description="nested")

    with pytest.raises(StrictSchemaError):
        strict_json_schema(Nested)


def test_a_non_strict_base_model_is_rejected() -> None:
    class Open(BaseModel):
        name: str

    with pytest.raises(StrictSchemaError, match="additionalProperties"):
        strict_json_schema(Open)


def test_property_named_default_survives_normalisation() -> None:
    class HasDefaultField(StrictBase):
        default: str = Field(description="a field literally named default")

    schema = strict_json_schema(HasDefaultField)
    assert "default" in schema["properties"]
    assert schema["required"] == ["default"]


def test_schema_hash_is_stable_and_changes_with_the_schema() -> None:
    first = schema_hash(strict_json_schema(ExtractionResult))
    assert first == schema_hash(strict_json_schema(ExtractionResult))
    assert first != schema_hash(strict_json_schema(ConceptHypothesis))


def _hypothesis() -> dict[str, Any]:
    return {
        "concept_id": "c_1",
        "title": "marathon training",
        "type": "goal",
        "description": "Training for a first marathon.",
        "state": "active",
        "confidence": 0.8,
        "aliases": [],
        "evidence_spans": [
            {"source_id": "src_1", "message_id": "m_1", "text": "run a marathon",
             "confidence": 0.9, "start": 10, "end": 24}
        ],
        "relations": [],
        "revision_count": 0,
        "first_seen": None,
        "last_seen": None,
    }
