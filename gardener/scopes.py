"""Partition the gardener's rows by (user_scope, assistant_scope): no plan crosses two scopes.

Every staging row carries its scope, but a row's meaning follows its concept: evidence,
relations (by their source), links (by their ``from`` concept), memberships and outliers go with
their concept's scope; a topic with the scope of its members; a parent topic with its topics'.
A row whose concept or children are unknown keeps its own columns. Pure: rows in, rows out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["Scope", "partition_rows"]

Scope = tuple[str, str]
Rows = Mapping[str, Iterable[Mapping[str, Any]]]

#: table -> the column naming the concept whose scope the row follows
_BY_CONCEPT = {"evidence": "concept_id", "relations": "source_concept_id",
               "concept_links": "from_concept_id", "topic_memberships": "concept_id",
               "topic_outliers": "concept_id"}


def _own(row: Mapping[str, Any]) -> Scope:
    return str(row["user_scope"]), str(row["assistant_scope"])


def _majority(scopes: Iterable[Scope]) -> Scope | None:
    counts = Counter(scopes)
    return min(counts, key=lambda s: (-counts[s], s)) if counts else None


def _topic_scopes(tables: Mapping[str, Sequence[Mapping[str, Any]]],
                  concept: Mapping[str, Scope]) -> dict[str, Scope]:
    members: dict[str, list[Scope]] = {}
    for row in tables.get("topic_memberships", []):
        if row["concept_id"] in concept:
            members.setdefault(str(row["topic_id"]), []).append(concept[row["concept_id"]])
    scopes: dict[str, Scope] = {}
    for row in tables.get("topics", []):
        scopes[str(row["id"])] = _majority(members.get(str(row["id"]), ())) or _own(row)
    return scopes


def _scope_of(table: str, row: Mapping[str, Any], concept: Mapping[str, Scope],
              topic: Mapping[str, Scope], parent: Mapping[str, Scope]) -> Scope:
    if table == "concepts":
        return concept[row["id"]]
    if table in _BY_CONCEPT:
        return concept.get(row[_BY_CONCEPT[table]]) or _own(row)
    if table == "topics":
        return topic[str(row["id"])]
    if table == "parent_topics":
        return parent.get(str(row["id"])) or _own(row)
    return _own(row)


def partition_rows(rows: Rows) -> dict[Scope, dict[str, list[dict[str, Any]]]]:
    """``load_rows()`` output -> the same shape per scope pair (every table present in each)."""
    tables = {name: [dict(row) for row in table_rows] for name, table_rows in rows.items()}
    concept = {str(row["id"]): _own(row) for row in tables.get("concepts", [])}
    topic = _topic_scopes(tables, concept)
    children: dict[str, list[Scope]] = {}
    for row in tables.get("topics", []):
        if row.get("parent_id"):
            children.setdefault(str(row["parent_id"]), []).append(topic[str(row["id"])])
    parent = {pid: s for pid, kids in children.items() if (s := _majority(kids)) is not None}
    parts: dict[Scope, dict[str, list[dict[str, Any]]]] = {}
    for name, table_rows in tables.items():
        for row in table_rows:
            scope = _scope_of(name, row, concept, topic, parent)
            parts.setdefault(scope, {n: [] for n in tables})[name].append(row)
    return dict(sorted(parts.items()))
