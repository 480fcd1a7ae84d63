"""End to end: garden a staging db built here (small input: the deterministic fallback parts)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from gardener.service import GardenOptions, garden
from pipeline.cli.app import main
from staging import StagingStore

NOW = datetime(2026, 6, 1, tzinfo=UTC)
TOPICS = {
    "garden": "garden soil compost plants growing vegetables",
    "music": "music practice instrument songs playing notes",
    "code": "software code python programming tests release",
}
OPTIONS = GardenOptions(decay_after_days=180)


def populate(build):
    for topic, description in TOPICS.items():
        for index, word in enumerate(["alpha", "beta", "gamma", "delta"]):
            build.concept(f"c_{topic}_{word}", f"{topic} {word}", description=description,
                          quotes=[f"{topic} {word} quote"], last_seen="2026-05-01T00:00:00+00:00",
                          confidence=0.5 + index / 10)
    build.concept("c_dup", "garden alpha", description=TOPICS["garden"], quotes=["dup"],
                  last_seen="2026-05-01T00:00:00+00:00")
    build.concept("c_stale", "old hobby", description="knitting wool", quotes=["knit"],
                  last_seen="2025-10-01T00:00:00+00:00")
    build.relation("r_old", "c_music_alpha", "c_code_beta", "supports",
                   "2026-01-03T00:00:00+00:00")
    build.relation("r_new", "c_code_beta", "c_music_alpha", "conflicts_with",
                   "2026-02-03T00:00:00+00:00")


def run(staging, embedder, dry_run=False):
    return garden(staging, embedder, seed=7, trials=2, dry_run=dry_run, now=NOW, options=OPTIONS)


def test_garden_end_to_end(staging, build, embedder):
    populate(build)
    report = run(staging, embedder)
    steps = {plan.step: plan for plan in report.plans}
    assert list(steps) == ["merge", "split", "decay", "invalidate", "topics"]
    merge = steps["merge"].actions[0]  # same text; c_dup is the more confident one
    assert (merge["survivor"], merge["merged"]) == ("c_dup", ["c_garden_alpha"])
    assert staging.count("concepts", "state = 'merged'") == 1
    assert staging.db["concepts"].get("c_stale")["state"] == "weak"
    assert staging.db["relations"].get("r_old")["invalidated_by"] == "r_new"
    assert staging.count("topics", "active = 1") == 3
    assert staging.count("topic_memberships", "active = 1") == 12
    labels = sorted(row["label"] for row in staging.db["topics"].rows)
    assert [label.split(", ")[0] for label in labels] == ["code", "garden", "music"]
    assert steps["topics"].stats["outliers"] == 1  # the weak knitting concept, visibly
    statuses = [row["status"] for row in staging.db["gardener_plans"].rows]
    assert statuses == ["applied"] * 4  # split had nothing to do
    run_row = staging.db["runs"].get(report.run_id)
    assert run_row["status"] == "completed" and run_row["stage"] == "garden"
    assert "topics 3" in report.summary()

    again = run(staging, embedder)  # same data, same seed: same topics, nothing to change
    assert [plan.step for plan in again.plans if not plan.empty] == []
    assert staging.count("topics") == 3


def test_dry_run_stores_nothing_and_plans_what_a_real_run_applies(
    staging, build, embedder, tmp_path, snapshot
):
    populate(build)
    copy_path = tmp_path / "copy.db"
    target = sqlite3.connect(copy_path)
    staging.db.conn.backup(target)
    target.close()
    before = snapshot(staging)
    dry = run(staging, embedder, dry_run=True)
    assert snapshot(staging) == before
    for table in ("gardener_plans", "runs", "embeddings", "concept_revisions"):
        assert staging.count(table) == 0
    assert dry.run_id is None and dry.applied == []

    other = StagingStore.open(copy_path)
    try:
        real = run(other, embedder)
        topics = {a["topic"] for a in real.plan("topics").actions}
        assert topics == {a["topic"] for a in dry.plan("topics").actions}
        assert {r["id"] for r in other.db["topics"].rows} == topics
    finally:
        other.close()


def test_cli_garden_dry_run_then_apply(settings, monkeypatch, capsys, builder_for):
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    staging = StagingStore.open(settings.staging_db)
    populate(builder_for(staging))
    staging.close()
    store = ["--store", str(settings.store)]
    assert main([*store, "garden", "--dry-run", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("DRY RUN") and "topics:" in out and "merge:" in out
    assert main([*store, "garden", "--trials", "2"]) == 0
    assert capsys.readouterr().out.startswith("applied 4 plans")
    staging = StagingStore.open(settings.staging_db)
    try:
        assert staging.count("gardener_plans", "status = 'applied'") >= 3
        assert staging.count("topics", "active = 1") >= 2
        merge_id = staging.db.execute(
            "SELECT id FROM gardener_plans WHERE step = 'merge'").fetchone()[0]
    finally:
        staging.close()
    assert main([*store, "garden", "--revert", merge_id]) == 0
    assert capsys.readouterr().out.startswith(f"reverted merge plan {merge_id}")
    staging = StagingStore.open(settings.staging_db)
    try:
        assert staging.db["gardener_plans"].get(merge_id)["status"] == "reverted"
        assert staging.count("concepts", "state = 'merged'") == 0
    finally:
        staging.close()
    assert main([*store, "garden", "--revert", merge_id]) == 1
    assert "is reverted" in capsys.readouterr().err


def test_cli_garden_without_store_says_what_to_do(settings, capsys):
    assert main(["--store", str(settings.store), "garden"]) == 1
    assert "conceptmem run" in capsys.readouterr().err
