"""Bitemporal invalidation of relations, as a pure function, and as-of queries.

Vocabulary (Graphiti's): ``valid_at``/``invalid_at`` are world time (when the fact held, from
message timestamps), ``created_at``/``expired_at`` are system time (when the memory learned it and
when it stopped believing it). Nothing is deleted: invalidation sets ``invalid_at``,
``expired_at`` and ``invalidated_by`` on the older fact.

Which facts conflict (``conflict_key``):

* **Contradictions**: ``supports`` and ``conflicts_with`` between the same two concepts (in either
  direction) contradict each other; the newer one invalidates the older.
* **Functional relations** (``FUNCTIONAL_RELATIONS``): ``instance_of`` holds one value per source
  concept at a time; a newer ``instance_of`` with another target invalidates the older one.
  ``causes``, ``enables`` and repeated identical facts never conflict.

Facts are processed in world-time order (``valid_at``, falling back to ``created_at``, then
``created_at``, then id) whatever order they arrived in, so a bulk backfill ends in the same state
as processing the facts one by one as they happened. A fact without a computed invalidation that
was invalidated by an earlier run (``invalidated_by`` set) is restored; invalidations that came
from elsewhere (``invalid_at`` without ``invalidated_by``) are left alone. ``expired_at`` keeps
the system time of the first invalidation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gardener.lifecycle import plan_id_for
from gardener.plans import Plan, RowChange
from gardener.state import GardenState

__all__ = [
    "CONTRADICTORY_RELATIONS",
    "FUNCTIONAL_RELATIONS",
    "Invalidation",
    "believed_at",
    "conflict_key",
    "invalidate",
    "plan_invalidations",
    "true_at",
]

FUNCTIONAL_RELATIONS = frozenset({"instance_of"})
CONTRADICTORY_RELATIONS = frozenset({"supports", "conflicts_with"})

Fact = Mapping[str, Any]


@dataclass(frozen=True)
class Invalidation:
    relation_id: str
    invalid_at: str | None
    invalidated_by: str | None


def _ts(value: str | datetime | None) -> datetime | None:
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def world_time(fact: Fact) -> datetime:
    moment = _ts(fact.get("valid_at")) or _ts(fact["created_at"])
    assert moment is not None
    return moment


def conflict_key(fact: Fact) -> tuple[str, ...] | None:
    """Facts with the same key and different relation/target conflict; ``None`` never does."""
    relation = fact["relation"]
    if relation in FUNCTIONAL_RELATIONS:
        return ("functional", relation, fact["source_concept_id"])
    if relation in CONTRADICTORY_RELATIONS:
        pair = sorted((fact["source_concept_id"], fact["target_concept_id"]))
        return ("contradiction", *pair)
    return None


def _conflicts(older: Fact, newer: Fact) -> bool:
    if older["relation"] in FUNCTIONAL_RELATIONS:
        return bool(older["target_concept_id"] != newer["target_concept_id"])
    return bool(older["relation"] != newer["relation"])


def _order(fact: Fact) -> tuple[datetime, datetime, str]:
    created = _ts(fact["created_at"])
    assert created is not None
    return (world_time(fact), created, str(fact["id"]))


def invalidate(facts: Iterable[Fact]) -> dict[str, Invalidation]:
    """The invalidation every fact should carry, by id, from the whole set (arrival-independent)."""
    live: dict[tuple[str, ...], list[Fact]] = {}
    result: dict[str, Invalidation] = {}
    for fact in sorted(facts, key=_order):
        result[fact["id"]] = Invalidation(fact["id"], None, None)
        key = conflict_key(fact)
        if key is None:
            continue
        kept = []
        for older in live.get(key, []):
            if _conflicts(older, fact):
                stamp = fact.get("valid_at") or fact["created_at"]
                result[older["id"]] = Invalidation(older["id"], stamp, fact["id"])
            else:
                kept.append(older)
        live[key] = [*kept, fact]
    return result


def _change(row: Fact, target: Invalidation, now: str) -> RowChange | None:
    if row["invalid_at"] is not None and row["invalidated_by"] is None:
        return None  # invalidated elsewhere: not ours to change
    current = (row["invalid_at"], row["invalidated_by"])
    if current == (target.invalid_at, target.invalidated_by):
        return None
    columns = ("invalid_at", "invalidated_by", "expired_at")
    before = {column: row[column] for column in columns}
    expired = None if target.invalid_at is None else (row["expired_at"] or now)
    after = {"invalid_at": target.invalid_at, "invalidated_by": target.invalidated_by,
             "expired_at": expired}
    return RowChange("relations", {"id": row["id"]}, before, after)


def plan_invalidations(state: GardenState, *, now: datetime, salt: str = "") -> Plan:
    """Set invalid_at/expired_at/invalidated_by on relations superseded by newer conflicts."""
    stamp = now.isoformat()
    rows = sorted(state.table("relations").values(), key=lambda row: row["id"])
    targets = invalidate(rows)
    changes, actions = [], []
    for row in rows:
        change = _change(row, targets[row["id"]], stamp)
        if change is None:
            continue
        changes.append(change)
        actions.append({"action": "invalidate" if change.after["invalid_at"] else "restore",
                        "relation": row["id"], "type": row["relation"],
                        "source": row["source_concept_id"], "target": row["target_concept_id"],
                        "invalid_at": change.after["invalid_at"],
                        "invalidated_by": change.after["invalidated_by"]})
    plan_id = plan_id_for("invalidate", salt or stamp, actions)
    return Plan(plan_id, "invalidate", actions, changes, {"invalidations": len(actions)})


def believed_at(facts: Iterable[Fact], moment: datetime | str) -> list[Fact]:
    """Facts the memory held at system time ``moment``: created by then, not yet expired."""
    at = _ts(moment)
    assert at is not None
    return [
        fact for fact in facts
        if (_ts(fact["created_at"]) or at) <= at
        and (fact.get("expired_at") is None or at < (_ts(fact["expired_at"]) or at))
    ]


def true_at(facts: Iterable[Fact], moment: datetime | str) -> list[Fact]:
    """Facts that held in the world at ``moment`` as now known: valid_at <= T < invalid_at."""
    at = _ts(moment)
    assert at is not None
    return [
        fact for fact in facts
        if world_time(fact) <= at
        and (fact.get("invalid_at") is None or at < (_ts(fact["invalid_at"]) or at))
    ]
