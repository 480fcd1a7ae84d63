"""Snapshots of every JSON schema sent to an LLM: a schema change is a prompt change.

When a change is intended, review the diff and run ``pytest --snapshot-update`` on this file;
the schema hash in ``llm_calls`` changes with it, so old and new calls stay distinguishable.
(The strict-schema validator itself is covered by ``test_strict.py``.)
"""

from __future__ import annotations

import json

import pytest
from syrupy.assertion import SnapshotAssertion

from ontology import (
    ConceptHypothesis,
    ExtractionResult,
    StrictBase,
    check_strict_schema,
    schema_hash,
    strict_json_schema,
)

LLM_FACING: dict[str, type[StrictBase]] = {
    "ExtractionResult": ExtractionResult,
    "ConceptHypothesis": ConceptHypothesis,
}


@pytest.mark.parametrize("name", sorted(LLM_FACING))
def test_strict_schema_matches_snapshot(name: str, snapshot: SnapshotAssertion) -> None:
    schema = strict_json_schema(LLM_FACING[name])
    check_strict_schema(schema)
    assert json.dumps(schema, indent=2, sort_keys=True) == snapshot


@pytest.mark.parametrize("name", sorted(LLM_FACING))
def test_schema_hash_matches_snapshot(name: str, snapshot: SnapshotAssertion) -> None:
    assert schema_hash(strict_json_schema(LLM_FACING[name])) == snapshot


def test_every_field_of_the_extraction_schema_is_described() -> None:
    """The descriptions are the model's instructions; a field without one is a silent prompt."""
    schema = strict_json_schema(ExtractionResult)
    objects = [schema, *schema.get("$defs", {}).values()]
    for node in objects:
        for name, prop in node.get("properties", {}).items():
            assert prop.get("description") or "$ref" in prop, name
