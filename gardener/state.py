"""An in-memory view of the staging tables the gardener reads and changes.

Plans are computed against a ``GardenState`` and simulated on it before they are applied, so the
checks, the dry run and the next step's planner all see the same result the database will hold.
Rows are plain dicts keyed by each table's primary key, exactly as the staging tables store them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LIVE_STATES",
    "TABLE_KEYS",
    "GardenState",
    "Row",
    "concept_names",
    "concept_text",
    "label_text",
]

Row = dict[str, Any]

#: Primary-key columns of every table a plan may change.
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "concepts": ("id",),
    "evidence": ("id",),
    "relations": ("id",),
    "concept_links": ("from_concept_id", "to_concept_id", "kind"),
    "topics": ("id",),
    "topic_memberships": ("concept_id", "topic_id"),
    "parent_topics": ("id",),
    "topic_outliers": ("concept_id",),
}

#: Concept states the gardener treats as part of the live memory.
LIVE_STATES = ("active", "weak")


def _key(table: str, row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(row[column] for column in TABLE_KEYS[table])


@dataclass
class GardenState:
    """Rows by table and key. ``with_changes`` returns a new state; the original is untouched."""

    tables: dict[str, dict[tuple[Any, ...], Row]] = field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: Mapping[str, Iterable[Mapping[str, Any]]]) -> GardenState:
        tables: dict[str, dict[tuple[Any, ...], Row]] = {name: {} for name in TABLE_KEYS}
        for table, table_rows in rows.items():
            tables[table] = {_key(table, row): dict(row) for row in table_rows}
        return cls(tables)

    def table(self, name: str) -> dict[tuple[Any, ...], Row]:
        return self.tables.setdefault(name, {})

    def concept(self, concept_id: str) -> Row | None:
        return self.table("concepts").get((concept_id,))

    def live_concepts(self) -> list[Row]:
        """Active and weak concepts, sorted by id (every planner iterates in this order)."""
        rows = [row for row in self.table("concepts").values() if row["state"] in LIVE_STATES]
        return sorted(rows, key=lambda row: row["id"])

    def evidence_by_concept(self) -> dict[str, list[Row]]:
        grouped: dict[str, list[Row]] = defaultdict(list)
        for row in self.table("evidence").values():
            grouped[row["concept_id"]].append(row)
        for rows in grouped.values():
            rows.sort(key=lambda row: row["id"])
        return grouped

    def with_changes(self, changes: Iterable[Mapping[str, Any]]) -> GardenState:
        """A copy with row changes applied (``RowChange.to_dict`` shape); touched tables copied."""
        tables = dict(self.tables)
        copied: set[str] = set()
        for change in changes:
            name = change["table"]
            if name not in copied:
                tables[name] = dict(tables.get(name, {}))
                copied.add(name)
            key = tuple(change["key"][column] for column in TABLE_KEYS[name])
            current = tables[name].get(key)
            if change["before"] is None:
                tables[name][key] = {**change["key"], **change["after"]}
            elif current is not None:
                tables[name][key] = {**current, **change["after"]}
        return GardenState(tables)


def concept_names(row: Mapping[str, Any]) -> str:
    """The text a topic is labelled by: the concept's title and aliases.

    Descriptions are left out: extractors write them from templates ("Something the person
    wants to achieve: ..."), and template words would win every topic's c-TF-IDF.
    """
    aliases = row.get("aliases") or "[]"
    names = json.loads(aliases) if isinstance(aliases, str) else list(aliases)
    return "; ".join([str(row["title"]), *(str(name) for name in names)])


def label_text(row: Mapping[str, Any], evidence: Iterable[Mapping[str, Any]]) -> str:
    """The text a topic's keywords are drawn from: names plus the verbatim evidence quotes.

    Titles alone are too short for c-TF-IDF to tell a topic's vocabulary from its neighbours';
    the quotes are what the person actually said about the concept.
    """
    quotes = [str(span["quote"]) for span in evidence if span.get("quote")]
    return ". ".join([concept_names(row), *quotes])


def concept_text(row: Mapping[str, Any]) -> str:
    """The text a concept is embedded by: title, description, aliases."""
    aliases = row.get("aliases") or "[]"
    names = json.loads(aliases) if isinstance(aliases, str) else list(aliases)
    parts = [str(row["title"]), str(row.get("description") or "")]
    if names:
        parts.append("; ".join(str(name) for name in names))
    return ". ".join(part for part in parts if part)
