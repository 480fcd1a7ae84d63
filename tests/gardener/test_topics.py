"""Topics over a real staging db: hierarchy, stable ids, incremental assignment, outliers.

Small inputs (< 40 concepts) take the deterministic agglomerative fallback, so no numba here.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from gardener.assign import assign, centroids_for
from gardener.hierarchy import parent_groups
from gardener.service import GardenOptions, garden
from gardener.topic_match import match_topics, topic_events
from staging.projection import project_staging

NOW = datetime(2026, 6, 1, tzinfo=UTC)
WORDS = {
    "garden": "soil compost plants vegetables seeds",
    "flowers": "soil roses tulips bulbs seeds",
    "music": "guitar piano songs chords notes",
    "singing": "voice choir songs notes breath",
    "code": "python tests release packaging bugs",
    "servers": "linux deploy release docker bugs",
}
NAMES = ["amber", "birch", "cedar", "dune", "elm"]
OPTIONS = GardenOptions(merge_threshold=0.99)


def populate(build, topics=WORDS, names=NAMES, prefix="c"):
    for topic, words in topics.items():
        for name in names:
            build.concept(f"{prefix}_{topic}_{name}", f"{topic} {name}", description=words,
                          quotes=[f"I keep thinking about {topic} and {words}"],
                          last_seen="2026-05-01T00:00:00+00:00")


def run(staging, embedder, **options):
    return garden(staging, embedder, seed=3, trials=0, dry_run=False, now=NOW,
                  options=replace(OPTIONS, **options))


def active(staging, table, where="active = 1"):
    return list(staging.db[table].rows_where(where))


def topic_of(staging):
    return {r["concept_id"]: r["topic_id"] for r in active(staging, "topic_memberships")}


def test_hierarchy_outliers_and_rerun_plans_nothing(staging, build, embedder, snapshot):
    populate(build)
    build.concept("c_odd", "knitting", description="wool needles scarf", quotes=["wool"],
                  last_seen="2026-05-01T00:00:00+00:00")
    report = run(staging, embedder)
    topics = active(staging, "topics")
    assert len(topics) == 6 and report.plan("topics").stats["mode"] == "full"
    parents = {r["id"]: r for r in active(staging, "parent_topics")}
    assert parents and all(r["children"] >= 2 for r in parents.values())
    for parent_id, row in parents.items():
        kids = [t for t in topics if t["parent_id"] == parent_id]
        assert len(kids) == row["children"] and sum(t["size"] for t in kids) == row["size"]
    groups = {}
    for t in topics:
        groups.setdefault(t["parent_id"], set()).add(t["label"].split(", ")[0])
    # topics sharing vocabulary share a parent
    assert any({"garden", "flowers"} <= g or {"music", "singing"} <= g for g in groups.values())
    odd = staging.db["topic_outliers"].get("c_odd")
    assert odd["active"] == 1 and odd["nearest_topic_id"] in {t["id"] for t in topics}
    assert "c_odd" not in topic_of(staging)  # visibly unassigned

    projected = project_staging(staging.db)
    assert {e["dst"] for e in projected["SUBTOPIC_OF"]} == set(parents)
    assert {n["id"] for n in projected["Topic"]} >= set(parents)

    before = snapshot(staging)
    again = run(staging, embedder)
    assert again.plan("topics").empty and again.plan("topics").stats["mode"] == "incremental"
    assert snapshot(staging) == before


def test_new_concepts_join_existing_topics_and_ids_survive_a_recluster(
    staging, build, embedder
):
    populate(build)
    run(staging, embedder)
    ids_before = {r["id"] for r in active(staging, "topics")}
    garden_topic = topic_of(staging)["c_garden_amber"]

    populate(build, {"garden": WORDS["garden"]}, ["fig", "gorse"], prefix="n")
    build.concept("n_odd", "astronomy", description="telescope stars orbit", quotes=["stars"],
                  last_seen="2026-05-01T00:00:00+00:00")
    report = run(staging, embedder)
    stats = report.plan("topics").stats
    assert stats["mode"] == "incremental" and stats["new_concepts"] == 3
    assert {r["id"] for r in active(staging, "topics")} == ids_before
    joined = staging.db["topic_memberships"].get(("n_garden_fig", garden_topic))
    assert joined["assignment"] == "incremental" and joined["active"] == 1
    assert staging.db["topics"].get(garden_topic)["size"] == 7
    assert staging.db["topic_outliers"].get("n_odd")["active"] == 1
    assert run(staging, embedder).plan("topics").empty

    full = run(staging, embedder, recluster=True)
    assert full.plan("topics").stats["mode"] == "full"
    assert {r["id"] for r in active(staging, "topics")} == ids_before  # matched by overlap
    assert topic_of(staging)["n_garden_gorse"] == garden_topic
    assert staging.db["topic_memberships"].get(("n_garden_fig", garden_topic))[
        "assignment"] == "cluster"


def test_drift_above_the_threshold_reclusters(staging, build, embedder):
    populate(build, {k: WORDS[k] for k in ("garden", "music", "code")})
    run(staging, embedder)
    populate(build, {k: WORDS[k] for k in ("flowers", "singing", "servers")})
    report = run(staging, embedder)
    stats = report.plan("topics").stats
    assert stats["mode"] == "full" and stats["reason"] == "drift" and stats["drift"] == 1.0
    assert len(active(staging, "topics")) == 6


def test_match_keeps_ids_of_continuing_topics_and_records_splits():
    old = {"t_a": {"1", "2", "3", "4"}, "t_b": {"5", "6", "7", "8"}}
    seen = {str(i) for i in range(1, 9)}
    new = [{"1", "2", "3", "4", "9"}, {"5", "6"}, {"7", "8"}]
    ids = match_topics(old, new, seen)
    assert ids[0] == "t_a"  # grew by a new concept: same topic
    assert "t_b" not in ids and len(set(ids)) == 3  # halved: neither half continues it
    assert match_topics(old, new, seen) == ids  # deterministic
    events = topic_events(old, dict(zip(ids, new, strict=True)))
    split = next(e for e in events if e["topic"] == "t_b")
    assert split["action"] == "topic_split" and sorted(split["into"].values()) == [2, 2]
    merged = match_topics(old, [old["t_a"] | old["t_b"]], seen)
    assert merged[0] not in old
    assert topic_events(old, {merged[0]: old["t_a"] | old["t_b"]})[-1]["action"] == "topic_merge"


def test_assignment_radius_and_parent_groups_are_deterministic():
    rng = np.random.default_rng(0)
    centres = np.eye(8, dtype=np.float32)[:4] * 5
    vectors = np.concatenate([c + rng.normal(0, 0.3, (10, 8)) for c in centres]).astype(
        np.float32)
    cents = centroids_for({f"t{k}": list(range(10 * k, 10 * k + 10)) for k in range(4)},
                          vectors)
    near = assign(centres[:2] + 0.01, cents)
    assert [a.topic_id for a in near] == ["t0", "t1"]
    far = assign(np.ones((1, 8), dtype=np.float32), cents)[0]
    assert far.topic_id is None and far.nearest_topic_id is not None  # outside every radius
    pairs = np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.9, 0.1]], dtype=np.float32)
    groups = parent_groups(pairs)
    assert groups == parent_groups(pairs) and groups[0] == groups[1] != groups[2] == groups[3]
    assert parent_groups(pairs[:3]) == [-1, -1, -1]
