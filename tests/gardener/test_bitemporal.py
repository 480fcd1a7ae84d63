"""Bitemporal invalidation: conflicts, functional relations, bulk backfill order, as-of queries."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from gardener.bitemporal import (
    believed_at,
    conflict_key,
    invalidate,
    plan_invalidations,
    true_at,
)
from gardener.state import GardenState
from staging.gardener_repo import GardenerRepo

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def fact(fid, source, target, relation, day, created_day=None, **extra):
    return {
        "id": fid, "source_concept_id": source, "target_concept_id": target,
        "relation": relation, "valid_at": f"2026-01-{day:02d}T00:00:00+00:00",
        "created_at": f"2026-03-{(created_day or day):02d}T00:00:00+00:00",
        "invalid_at": None, "expired_at": None, "invalidated_by": None, **extra,
    }


def test_newer_conflicting_fact_invalidates_the_older():
    facts = [fact("r_old", "a", "b", "supports", 3), fact("r_new", "b", "a", "conflicts_with", 9)]
    result = invalidate(facts)
    assert result["r_old"].invalid_at == facts[1]["valid_at"]
    assert result["r_old"].invalidated_by == "r_new"
    assert result["r_new"].invalid_at is None


def test_functional_relation_keeps_one_value_and_others_never_conflict():
    facts = [fact("r1", "a", "x", "instance_of", 1), fact("r2", "a", "y", "instance_of", 5),
             fact("r3", "a", "y", "instance_of", 7),  # same value again: no conflict
             fact("r4", "a", "x", "causes", 2), fact("r5", "a", "z", "causes", 8)]
    result = invalidate(facts)
    assert {fid for fid, inv in result.items() if inv.invalid_at} == {"r1"}
    assert result["r1"].invalidated_by == "r2"
    assert conflict_key(facts[3]) is None


def test_shuffled_bulk_backfill_matches_incremental_processing():
    facts = [fact(f"r{i}", "a", "b", rel, day) for i, (rel, day) in enumerate(
        [("supports", 1), ("conflicts_with", 4), ("supports", 9), ("conflicts_with", 12)])]
    facts += [fact(f"i{d}", "a", f"class{d % 3}", "instance_of", d) for d in range(1, 20, 2)]
    incremental: dict = {}
    seen: list = []
    for item in sorted(facts, key=lambda f: f["valid_at"]):  # one by one, as it happened
        seen.append(item)
        incremental = invalidate(seen)
    for seed in range(5):
        arrival = facts[:]
        random.Random(seed).shuffle(arrival)
        assert invalidate(arrival) == incremental
    assert incremental["r0"].invalidated_by == "r1" and incremental["r2"].invalidated_by == "r3"
    assert incremental["r3"].invalid_at is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["supports", "conflicts_with", "instance_of"]),
                          st.integers(1, 28), st.sampled_from("xyz")),
                min_size=1, max_size=12), st.randoms())
def test_invalidation_is_independent_of_arrival_order(items, rnd):
    facts = [fact(f"r{i}", "a", target, rel, day) for i, (rel, day, target) in enumerate(items)]
    shuffled = facts[:]
    rnd.shuffle(shuffled)
    assert invalidate(shuffled) == invalidate(facts)


def test_plan_applies_in_staging_and_as_of_queries(staging, build, prov):
    for cid in ("c_a", "c_b"):
        build.concept(cid, cid)
    build.relation("r_old", "c_a", "c_b", "supports", "2026-01-03T00:00:00+00:00",
                   created_at="2026-02-01T00:00:00+00:00")
    build.relation("r_new", "c_a", "c_b", "conflicts_with", "2026-01-20T00:00:00+00:00",
                   created_at="2026-02-05T00:00:00+00:00")
    repo = GardenerRepo(staging.db)
    plan = plan_invalidations(GardenState.from_rows(repo.load_rows()), now=NOW)
    assert [a["relation"] for a in plan.actions] == ["r_old"]
    repo.apply_plan(plan.to_dict(), ["test"], prov)
    old = staging.db["relations"].get("r_old")
    assert old["invalid_at"] == "2026-01-20T00:00:00+00:00"
    assert old["expired_at"] == NOW.isoformat() and old["invalidated_by"] == "r_new"
    assert staging.count("relations") == 2  # nothing deleted
    again = plan_invalidations(GardenState.from_rows(repo.load_rows()), now=NOW)
    assert again.empty  # idempotent

    rows = list(staging.db["relations"].rows)
    ids = lambda found: sorted(r["id"] for r in found)  # noqa: E731
    assert ids(true_at(rows, "2026-01-10T00:00:00+00:00")) == ["r_old"]
    assert ids(true_at(rows, "2026-01-25T00:00:00+00:00")) == ["r_new"]
    assert ids(believed_at(rows, "2026-02-03T00:00:00+00:00")) == ["r_old"]
    assert ids(believed_at(rows, "2026-03-01T00:00:00+00:00")) == ["r_new", "r_old"]
    assert ids(believed_at(rows, "2026-07-01T00:00:00+00:00")) == ["r_new"]


def test_external_invalidations_are_left_alone():
    facts = [fact("r1", "a", "b", "supports", 1, invalid_at="2026-01-02T00:00:00+00:00"),
             fact("r2", "a", "b", "conflicts_with", 5)]
    state = GardenState.from_rows({"relations": facts})
    plan = plan_invalidations(state, now=NOW)
    assert plan.empty
