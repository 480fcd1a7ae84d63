"""Each deterministic check fails on a crafted bad plan, names the failure, applies nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gardener.errors import PlanCheckFailed
from gardener.plans import Plan, RowChange
from gardener.service import apply_checked


def _link(src, dst, kind="merged_into"):
    return RowChange("concept_links", {"from_concept_id": src, "to_concept_id": dst, "kind": kind},
                     None, {"plan_id": "p", "active": 1}, {"active": 0})


def _setup(build):
    build.concept("c_a", "alpha")
    build.concept("c_b", "beta", quotes=["b1", "b2"])


BAD_PLANS = {
    "dangling": [_link("c_a", "c_missing")],
    "evidence": [RowChange("evidence", {"id": "EVIDENCE_OF_A"}, {"concept_id": "c_a"},
                           {"concept_id": "c_b"})],
    "cycles": [_link("c_a", "c_b"), _link("c_b", "c_a")],
    "empty_topic": [RowChange("topics", {"id": "t_empty"}, None,
                              {"label": "x", "keywords": "[]", "size": 0, "active": 1,
                               "plan_id": "p"})],
    "stale": [RowChange("concepts", {"id": "c_a"}, {"state": "weak"}, {"state": "archived"})],
}


@pytest.mark.parametrize("check", sorted(BAD_PLANS))
def test_bad_plan_is_rejected_and_nothing_applied(check, staging, build, prov, snapshot):
    _setup(build)
    evidence_of_a = next(staging.db["evidence"].rows_where("concept_id = 'c_a'"))["id"]
    changes = [
        RowChange(c.table, {"id": evidence_of_a}, c.before, c.after)
        if c.key.get("id") == "EVIDENCE_OF_A" else c
        for c in BAD_PLANS[check]
    ]
    plan = Plan(f"plan_{check}", "merge", [{"action": "crafted"}], changes)
    before = snapshot(staging)
    with pytest.raises(PlanCheckFailed) as info:
        apply_checked(staging, plan, prov)
    assert any(failure.startswith(f"{check}:") for failure in info.value.failures)
    assert check in info.value.message
    assert snapshot(staging) == before
    row = staging.db["gardener_plans"].get(plan.id)
    assert row["status"] == "rejected"
    assert any(f.startswith(f"{check}:") for f in json.loads(row["checks"]))


def test_plan_of_another_scope_is_rejected_and_nothing_applied(staging, build, prov, snapshot):
    _setup(build)  # both concepts are of scope u/a
    before = snapshot(staging)
    plan = Plan("plan_scope", "merge", [], [_link("c_a", "c_b")], {}, "bob", "a")
    with pytest.raises(PlanCheckFailed) as info:
        apply_checked(staging, plan, prov)
    assert any(f.startswith("one_scope:") and "bob/a" in f for f in info.value.failures)
    assert snapshot(staging) == before
    same = Plan("plan_same", "merge", [], [_link("c_a", "c_b")], {}, "u", "a")
    assert "one_scope" in apply_checked(staging, same, prov)


def test_good_plan_passes_every_check(staging, build, prov):
    _setup(build)
    plan = Plan("plan_ok", "merge", [], [_link("c_a", "c_b")])
    assert apply_checked(staging, plan, prov) == [
        "stale", "dangling", "evidence", "cycles", "empty_topic", "one_scope"]
    assert staging.db["gardener_plans"].get("plan_ok")["status"] == "applied"
    assert staging.count("concept_links") == 1


_values = st.dictionaries(st.sampled_from(["state", "active", "plan_id", "probability"]),
                          st.one_of(st.none(), st.integers(), st.text(max_size=8),
                                    st.floats(allow_nan=False, allow_infinity=False)),
                          max_size=3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.builds(RowChange, st.sampled_from(["concepts", "topics"]),
                          st.fixed_dictionaries({"id": st.text(min_size=1, max_size=8)}),
                          st.one_of(st.none(), _values), _values,
                          st.one_of(st.none(), _values)), max_size=5),
       st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=2), max_size=3))
def test_plan_json_round_trip_property(changes, actions):
    plan = Plan("plan_x", "merge", actions, changes, {"n": len(changes)})
    assert Plan.from_json(plan.to_json()) == plan
