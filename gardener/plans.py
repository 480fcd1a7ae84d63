"""Plans as plain data, their JSON round-trip, and the deterministic checks run before apply.

A plan is a list of readable ``actions`` (what and why) and the exact ``changes`` (row by row,
with the prior values) that carry them out. Storing the prior values is what makes a plan
reversible: reverting writes ``before`` back over ``after``.

Checks (each failure is named, and a failing plan applies nothing):

* ``stale``: every changed row still holds the ``before`` values the plan was computed from, and
  no inserted row exists yet;
* ``dangling``: every touched evidence row, relation, concept link, membership and
  ``merged_into`` references a concept (and topic) that exists after the plan;
* ``evidence``: every touched concept that is live (active or weak) afterwards keeps at least one
  verified evidence span (the ``evidence`` table only holds verified spans);
* ``cycles``: MERGED_INTO (active links and ``concepts.merged_into``) has no cycle;
* ``empty_topic``: every touched topic that is active afterwards has at least one active member.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from gardener.errors import PlanCheckFailed
from gardener.state import LIVE_STATES, TABLE_KEYS, GardenState

__all__ = [
    "CHECKS",
    "PLAN_STEPS",
    "Plan",
    "RowChange",
    "check_plan",
    "upsert_change",
    "validate_plan",
]

PLAN_STEPS = ("merge", "split", "decay", "invalidate", "topics")
CHECKS = ("stale", "dangling", "evidence", "cycles", "empty_topic", "one_scope")


@dataclass(frozen=True)
class RowChange:
    """One row written by a plan. ``before is None`` means an insert.

    ``revert`` is what reverting an insert writes over the row (``None`` deletes it); links and
    split parts are deactivated, never deleted.
    """

    table: str
    key: dict[str, Any]
    before: dict[str, Any] | None
    after: dict[str, Any]
    revert: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    id: str
    step: str
    actions: list[dict[str, Any]] = field(default_factory=list)
    changes: list[RowChange] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    #: the (user, assistant) scope the plan was computed for; it never touches another's rows
    user_scope: str = ""
    assistant_scope: str = ""

    @property
    def empty(self) -> bool:
        return not self.changes

    def change_dicts(self) -> list[dict[str, Any]]:
        return [change.to_dict() for change in self.changes]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "step": self.step,
            "actions": self.actions,
            "changes": self.change_dicts(),
            "stats": self.stats,
            "user_scope": self.user_scope,
            "assistant_scope": self.assistant_scope,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        changes = [RowChange(**change) for change in data["changes"]]
        return cls(data["id"], data["step"], list(data["actions"]), changes, dict(data["stats"]),
                   str(data.get("user_scope", "")), str(data.get("assistant_scope", "")))

    @classmethod
    def from_json(cls, text: str) -> Plan:
        return cls.from_dict(json.loads(text))


def _row_key(change: RowChange) -> tuple[Any, ...]:
    return tuple(change.key[column] for column in TABLE_KEYS[change.table])


def _stale(plan: Plan, state: GardenState) -> list[str]:
    failures = []
    for change in plan.changes:
        current = state.table(change.table).get(_row_key(change))
        where = f"{change.table} {_row_key(change)}"
        if change.before is None:
            if current is not None:
                failures.append(f"stale: {where} already exists")
        elif current is None:
            failures.append(f"stale: {where} does not exist")
        elif any(current.get(col) != value for col, value in change.before.items()):
            failures.append(f"stale: {where} changed since the plan was computed")
    return failures


_REFERENCES = {
    "evidence": (("concept_id", "concepts"),),
    "relations": (("source_concept_id", "concepts"), ("target_concept_id", "concepts")),
    "concept_links": (("from_concept_id", "concepts"), ("to_concept_id", "concepts")),
    "topic_memberships": (("concept_id", "concepts"), ("topic_id", "topics")),
    "concepts": (("merged_into", "concepts"),),
}


def _dangling(plan: Plan, after: GardenState) -> list[str]:
    failures = []
    for change in plan.changes:
        row = after.table(change.table).get(_row_key(change))
        if row is None:
            continue
        for column, target in _REFERENCES.get(change.table, ()):
            ref = row.get(column)
            if ref is not None and (ref,) not in after.table(target):
                failures.append(f"dangling: {change.table} {_row_key(change)} -> {column}={ref}")
    return failures


def _touched_concepts(plan: Plan) -> set[str]:
    touched: set[str] = set()
    for change in plan.changes:
        if change.table == "concepts":
            touched.add(change.key["id"])
        elif change.table == "evidence":
            for values in (change.before or {}, change.after):
                if values.get("concept_id"):
                    touched.add(values["concept_id"])
    return touched


def _evidence(plan: Plan, after: GardenState) -> list[str]:
    counts = Counter(row["concept_id"] for row in after.table("evidence").values())
    failures = []
    for concept_id in sorted(_touched_concepts(plan)):
        row = after.concept(concept_id)
        if row is not None and row["state"] in LIVE_STATES and counts[concept_id] == 0:
            failures.append(f"evidence: live concept {concept_id} has no verified evidence")
    return failures


def _cycles(after: GardenState) -> list[str]:
    import networkx as nx

    graph: Any = nx.DiGraph()
    for row in after.table("concept_links").values():
        if row["kind"] == "merged_into" and row.get("active", 1):
            graph.add_edge(row["from_concept_id"], row["to_concept_id"])
    for row in after.table("concepts").values():
        if row.get("merged_into") and row["state"] == "merged":
            graph.add_edge(row["id"], row["merged_into"])
    return [
        "cycles: MERGED_INTO cycle " + " -> ".join(str(edge[0]) for edge in cycle)
        for cycle in [list(c) for c in _find_cycles(graph)]
    ]


def _find_cycles(graph: Any) -> list[list[tuple[str, str]]]:
    import networkx as nx

    try:
        return [nx.find_cycle(graph)]
    except nx.NetworkXNoCycle:
        return []


def _empty_topics(plan: Plan, after: GardenState) -> list[str]:
    touched = {
        change.key["id"] if change.table == "topics" else change.key["topic_id"]
        for change in plan.changes
        if change.table in ("topics", "topic_memberships")
    }
    members = Counter(
        row["topic_id"] for row in after.table("topic_memberships").values() if row["active"]
    )
    failures = []
    for topic_id in sorted(touched):
        row = after.table("topics").get((topic_id,))
        if row is not None and row["active"] and members[topic_id] == 0:
            failures.append(f"empty_topic: topic {topic_id} has no active member")
    return failures


_CONCEPT_COLUMNS = {"concepts": ("id", "merged_into"), "topic_outliers": ("concept_id",),
                    **{table: tuple(col for col, target in refs if target == "concepts")
                       for table, refs in _REFERENCES.items() if table != "concepts"}}


def _scope(row: Mapping[str, Any]) -> tuple[Any, Any]:
    return row.get("user_scope"), row.get("assistant_scope")


def _cross_scope(plan: Plan, after: GardenState) -> list[str]:
    """A scoped plan may only write rows whose concepts are all of its scope."""
    if not plan.user_scope:
        return []
    scope = (plan.user_scope, plan.assistant_scope)
    failures = []
    for change in plan.changes:
        row = after.table(change.table).get(_row_key(change)) or {}
        for column in _CONCEPT_COLUMNS.get(change.table, ()):
            concept = after.concept(row[column]) if row.get(column) else None
            # a row this plan inserts has no scope yet: it is written with the plan's own
            if concept is not None and concept.get("user_scope") and _scope(concept) != scope:
                failures.append(f"one_scope: {change.table} {_row_key(change)} -> {column}="
                                f"{row[column]} is of another scope than {'/'.join(scope)}")
    return failures


def check_plan(plan: Plan, state: GardenState) -> list[str]:
    """Every failed check, named; an empty list means the plan may be applied."""
    failures = _stale(plan, state)
    after = state.with_changes(plan.change_dicts())
    failures += _dangling(plan, after)
    failures += _evidence(plan, after)
    failures += _cycles(after)
    failures += _empty_topics(plan, after)
    failures += _cross_scope(plan, after)
    return failures


def validate_plan(plan: Plan, state: GardenState) -> list[str]:
    """The names of the checks that ran; raises ``PlanCheckFailed`` naming each failure."""
    failures = check_plan(plan, state)
    if failures:
        raise PlanCheckFailed(plan.step, failures)
    return list(CHECKS)


def upsert_change(
    state: GardenState, table: str, key: dict[str, Any], values: dict[str, Any],
    revert: dict[str, Any] | None,
) -> RowChange | None:
    """Insert the row, or update the columns that differ when it exists (e.g. a link left
    inactive by a reverted plan); ``None`` when the row already holds ``values``."""
    current = state.table(table).get(tuple(key[column] for column in TABLE_KEYS[table]))
    if current is None:
        return RowChange(table, key, None, values, revert)
    changed = {col: value for col, value in values.items() if current.get(col) != value}
    if not changed:
        return None
    return RowChange(table, key, {col: current.get(col) for col in changed}, changed)
