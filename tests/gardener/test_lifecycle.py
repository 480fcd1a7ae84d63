"""Merge/unmerge and split/unsplit round-trips, decay transitions with an explicit ``now``."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from gardener.lifecycle import plan_decay, plan_merges, types_compatible
from gardener.plans import Plan
from gardener.service import revert_plan
from gardener.splits import part_keywords, plan_splits
from gardener.state import GardenState
from staging.gardener_repo import GardenerRepo

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _state(staging):
    return GardenState.from_rows(GardenerRepo(staging.db).load_rows())


def _apply(staging, plan, prov):
    GardenerRepo(staging.db).apply_plan(plan.to_dict(), ["test"], prov)


def _duplicates(build):
    build.concept("c_a", "Compost heap project", aliases=["compost heap"],
                  description="building a compost heap in the garden",
                  quotes=["I started the compost heap", "turned the compost"])
    build.concept("c_b", "compost heap", description="building a compost heap in the garden",
                  quotes=["the compost heap is warm"])
    build.concept("c_c", "Guitar practice", description="daily guitar chord practice",
                  quotes=["practised chords"])
    build.relation("r_1", "c_c", "c_b", "supports", "2026-01-02T00:00:00+00:00")


def test_merge_moves_aliases_evidence_relations_and_unmerge_restores_exactly(
    staging, build, prov, snapshot
):
    _duplicates(build)
    before = snapshot(staging)
    state = _state(staging)
    plan = plan_merges(state, now=NOW)
    assert plan.stats == {"merges": 1, "groups": 1, "largest_group": 2}
    assert plan.actions[0]["survivor"] == "c_a" and plan.actions[0]["merged"] == ["c_b"]
    _apply(staging, plan, prov)

    merged = staging.db["concepts"].get("c_b")
    survivor = staging.db["concepts"].get("c_a")
    assert merged["state"] == "merged" and merged["merged_into"] == "c_a"
    assert merged["revision_count"] == 2 and survivor["revision_count"] == 2
    assert json.loads(survivor["aliases"]) == ["compost heap"]  # title already an alias
    assert staging.count("evidence", "concept_id = 'c_a'") == 3
    assert staging.db["relations"].get("r_1")["target_concept_id"] == "c_a"
    link = staging.db["concept_links"].get(("c_b", "c_a", "merged_into"))
    assert link["active"] == 1 and link["plan_id"] == plan.id
    assert staging.count("concept_revisions", "action = 'merge'") == 2

    revert_plan(staging, plan.id)
    after = snapshot(staging)
    links = after.pop("concept_links")
    before.pop("concept_links")
    assert after == before  # concepts, evidence, relations, topics: the exact prior state
    assert [link["active"] for link in links] == [0]  # the link is kept, inactive
    assert staging.db["gardener_plans"].get(plan.id)["status"] == "reverted"
    assert staging.count("concept_revisions", "action = 'unmerge'") == 2


def test_merge_needs_compatible_type_and_a_name_relation(staging, build):
    build.concept("c_a", "compost heap", type="project")
    build.concept("c_b", "compost heap", type="belief")
    build.concept("c_c", "compost heap", type="goal")
    state = _state(staging)
    plan = plan_merges(state, now=NOW)
    assert [a["merged"] for a in plan.actions] == [["c_c"]]  # belief is not compatible
    assert types_compatible("goal", "project") and not types_compatible("goal", "belief")


def test_split_round_trip(staging, build, embedder, prov, snapshot):
    quotes = ["python packaging wheels build", "python packaging wheels pip",
              "python packaging wheels upload", "sourdough bread starter flour",
              "sourdough bread starter oven", "sourdough bread starter water"]
    build.concept("c_mix", "Weekend plans", quotes=quotes)
    build.concept("c_one", "Single", quotes=["only one quote"])
    before = snapshot(staging)
    state = _state(staging)
    spans = state.evidence_by_concept()["c_mix"]
    vectors = embedder.embed([s["quote"] for s in spans])
    plan = plan_splits(state, {s["id"]: vectors[i] for i, s in enumerate(spans)}, now=NOW)
    assert plan.stats == {"splits": 1}
    _apply(staging, plan, prov)
    assert staging.db["concepts"].get("c_mix")["state"] == "split"
    parts = plan.actions[0]["part_ids"]
    titles = sorted(staging.db["concepts"].get(p)["title"] for p in parts)
    assert titles == ["Weekend plans (bread)", "Weekend plans (packaging)"]
    assert sorted(staging.count("evidence", "concept_id = ?", [p]) for p in parts) == [3, 3]
    assert staging.count("concept_links", "kind = 'split_into' AND active = 1") == 2

    revert_plan(staging, plan.id)
    after = snapshot(staging)
    assert after["evidence"] == before["evidence"]
    assert after["relations"] == before["relations"]
    concepts = {row["id"]: row for row in after["concepts"]}
    assert [row for row in before["concepts"]] == [concepts[r["id"]] for r in before["concepts"]]
    assert {concepts[p]["state"] for p in parts} == {"merged"}  # folded back, not deleted
    assert staging.count("concept_links", "active = 1") == 0


def test_split_leaves_one_topic_concept_alone(staging, build, embedder):
    build.concept("c_same", "Bread", quotes=[f"sourdough bread starter {w}" for w in "abcdef"])
    state = _state(staging)
    spans = state.evidence_by_concept()["c_same"]
    vectors = embedder.embed([s["quote"] for s in spans])
    plan = plan_splits(state, {s["id"]: vectors[i] for i, s in enumerate(spans)}, now=NOW)
    assert plan.empty


def test_decay_active_to_weak_to_archived(staging, build, prov):
    build.concept("c_old", "old idea", last_seen="2025-10-01T00:00:00+00:00")
    build.concept("c_rich", "well supported", quotes=["a", "b", "c"],
                  last_seen="2025-10-01T00:00:00+00:00")
    build.concept("c_new", "fresh idea", last_seen="2026-05-20T00:00:00+00:00")
    plan = plan_decay(_state(staging), now=NOW, after_days=180)
    assert [(a["concept"], a["to"]) for a in plan.actions] == [("c_old", "weak")]
    _apply(staging, plan, prov)
    assert staging.db["concepts"].get("c_old")["state"] == "weak"

    assert plan_decay(_state(staging), now=NOW, after_days=180).empty  # not old enough yet
    later = datetime(2027, 1, 1, tzinfo=UTC)
    plan2 = plan_decay(_state(staging), now=later, after_days=180)
    assert {(a["concept"], a["to"]) for a in plan2.actions} == {
        ("c_old", "archived"), ("c_new", "weak")}
    _apply(staging, plan2, prov)
    assert staging.db["concepts"].get("c_old")["state"] == "archived"
    assert staging.count("concepts") == 3  # never deleted
    assert staging.db["concepts"].get("c_rich")["state"] == "active"


def test_plan_json_round_trip(staging, build):
    _duplicates(build)
    state = _state(staging)
    plan = plan_merges(state, now=NOW)
    again = Plan.from_json(plan.to_json())
    assert again == plan and again.to_json() == plan.to_json()
    assert len(again.changes) == len(plan.changes) > 0


def test_decay_measures_age_against_the_reference_not_the_wall_clock(staging, build):
    build.concept("c_old", "old idea", last_seen="2025-10-01T00:00:00+00:00")
    state = _state(staging)
    latest = datetime(2025, 12, 1, tzinfo=UTC)  # e.g. the newest evidence of an old export
    assert plan_decay(state, now=NOW, after_days=180, reference=latest).empty
    plan = plan_decay(state, now=NOW, after_days=180)
    assert plan.changes[0].after["updated_at"] == NOW.isoformat()


def test_merge_again_after_unmerge_reactivates_the_link(staging, build, prov):
    _duplicates(build)
    state = _state(staging)
    first = plan_merges(state, now=NOW)
    _apply(staging, first, prov)
    revert_plan(staging, first.id)
    state = _state(staging)
    later = datetime(2026, 7, 1, tzinfo=UTC)
    second = plan_merges(state, now=later)
    link = next(c for c in second.changes if c.table == "concept_links")
    assert link.before == {"plan_id": first.id, "active": 0}
    _apply(staging, second, prov)
    row = staging.db["concept_links"].get(("c_b", "c_a", "merged_into"))
    assert (row["active"], row["plan_id"]) == (1, second.id)
    assert staging.db["concepts"].get("c_b")["state"] == "merged"


def test_split_parts_are_settled_and_never_merged_back(staging, build, embedder, prov):
    quotes = ["python packaging wheels build", "python packaging wheels pip",
              "python packaging wheels upload", "sourdough bread starter flour",
              "sourdough bread starter oven", "sourdough bread starter water"]
    build.concept("c_mix", "Weekend plans", quotes=quotes)
    state = _state(staging)
    spans = state.evidence_by_concept()["c_mix"]
    vectors = dict(zip([s["id"] for s in spans], embedder.embed(quotes), strict=True))
    _apply(staging, plan_splits(state, vectors, now=NOW), prov)
    after = _state(staging)
    assert len(after.live_concepts()) == 2
    assert plan_splits(after, vectors, now=NOW).empty  # a part is not split again
    assert plan_merges(after, now=NOW).empty  # nor merged back into its sibling


def test_part_keywords_are_new_words_and_distinct():
    assert part_keywords("Maria", [["maria", "last"], ["maria", "party"]]) == ["last", "party"]
    assert part_keywords("marks find topper", [["section", "a"], ["section", "b"]]) == [
        "section", "b"]
