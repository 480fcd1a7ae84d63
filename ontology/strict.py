"""Strict schemas for LLM-facing models (seed 002: SGR with ``extra="forbid"``).

``StrictBase`` models are what an LLM is asked to fill. OpenAI's strict structured outputs
require every object schema to set ``additionalProperties: false`` and to list *every*
property in ``required``; optional values are expressed as required-but-nullable.
``strict_json_schema`` emits such a schema and ``check_strict_schema`` proves it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = [
    "StrictBase",
    "StrictSchemaError",
    "check_strict_schema",
    "schema_hash",
    "strict_json_schema",
]


class StrictBase(BaseModel):
    """Base for every model whose JSON schema is sent to an LLM."""

    model_config = ConfigDict(extra="forbid")


class StrictSchemaError(ValueError):
    """A JSON schema violates the strict-mode contract; ``problems`` lists each path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("schema is not strict: " + "; ".join(problems))


_DROP_KEYS = ("default", "title")  # "title" costs tokens and says nothing the name does not


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The strict JSON schema of ``model``: refs kept in ``$defs``, defaults dropped.

    Raises ``StrictSchemaError`` if the model cannot be expressed strictly (for example a
    field with a default, which would not be listed in ``required``).
    """
    schema = copy.deepcopy(model.model_json_schema(mode="validation"))
    _normalise(schema)
    check_strict_schema(schema)
    return schema


def _normalise(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _normalise(item)
        return
    if not isinstance(node, dict):
        return
    for key in _DROP_KEYS:
        node.pop(key, None)
    if "$ref" in node and len(node) > 1:
        # Strict mode rejects keywords beside $ref; the referenced schema keeps its own text.
        ref = node["$ref"]
        node.clear()
        node["$ref"] = ref
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            for sub in value.values():  # keys here are names, not keywords
                _normalise(sub)
        else:
            _normalise(value)


def check_strict_schema(schema: dict[str, Any]) -> None:
    """Reject any object schema, at any depth, that is not closed and fully required."""
    problems: list[str] = []
    _walk(schema, "#", problems)
    if problems:
        raise StrictSchemaError(problems)


def _walk(node: Any, path: str, problems: list[str]) -> None:
    if isinstance(node, list):
        for index, item in enumerate(node):
            _walk(item, f"{path}/{index}", problems)
        return
    if not isinstance(node, dict):
        return
    if _is_object_schema(node):
        _check_object(node, path, problems)
    for key, value in node.items():
        if key in ("enum", "const", "required", "examples"):
            continue
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                _walk(sub, f"{path}/properties/{name}", problems)
        else:
            _walk(value, f"{path}/{key}", problems)


def _is_object_schema(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    is_object_type = kind == "object" or (isinstance(kind, list) and "object" in kind)
    return is_object_type or "properties" in node


def _check_object(node: dict[str, Any], path: str, problems: list[str]) -> None:
    if node.get("additionalProperties") is not False:
        problems.append(f"{path}: additionalProperties must be false")
    properties = node.get("properties", {})
    required = set(node.get("required", []))
    missing = [name for name in properties if name not in required]
    if missing:
        problems.append(f"{path}: properties not in required: {', '.join(sorted(missing))}")
    if "default" in node:
        problems.append(f"{path}: defaults are not allowed")
    for name, sub in properties.items():
        if isinstance(sub, dict) and "default" in sub:
            problems.append(f"{path}/properties/{name}: defaults are not allowed")


def schema_hash(schema: dict[str, Any]) -> str:
    """A stable short hash of a schema: a schema change is a prompt change."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
