"""The doctor's states and their precedence (seed 000, with seed 001's ``degraded``): pure.

A later success never hides an earlier problem: the state of a store, a run or a unit is the
highest-ranked state among its findings, and ``healthy`` only when there is none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["EXIT_CODES", "PRECEDENCE", "Finding", "classify", "worst"]

PRECEDENCE = ("scope_conflict", "source_at_risk", "stale", "promotion_missing", "unverified",
              "uncertain", "degraded", "waiting", "healthy")
"""Highest first. ``degraded``: a lookup path misses what an exact list still finds."""

EXIT_CODES = {"healthy": 0, "waiting": 10, "degraded": 20, "uncertain": 30, "unverified": 40,
              "promotion_missing": 50, "stale": 60, "source_at_risk": 70, "scope_conflict": 80}
"""Distinct per state, so a monitor can act on the code alone (1 and 2 stay CLI errors)."""

_RANK = {state: rank for rank, state in enumerate(PRECEDENCE)}


@dataclass(frozen=True)
class Finding:
    """One problem: its state, the kind and id of the unit, a reason code, how many rows."""

    state: str
    kind: str
    unit: str
    reason: str
    count: int = 1
    run_id: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"state": self.state, "kind": self.kind, "unit": self.unit,
                "reason": self.reason, "count": self.count, "run_id": self.run_id}


def worst(states: Iterable[str]) -> str:
    """The highest-precedence state (``healthy`` for none)."""
    return min(states, key=lambda s: _RANK[s], default="healthy")


def classify(findings: Iterable[Finding]) -> tuple[str, dict[str, str], dict[str, str]]:
    """(store state, state per run id, state per ``kind:unit``)."""
    items = list(findings)
    runs: dict[str, list[str]] = {}
    units: dict[str, list[str]] = {}
    for f in items:
        if f.run_id is not None:
            runs.setdefault(f.run_id, []).append(f.state)
        units.setdefault(f"{f.kind}:{f.unit}", []).append(f.state)
    return (worst(f.state for f in items), {k: worst(v) for k, v in runs.items()},
            {k: worst(v) for k, v in units.items()})
