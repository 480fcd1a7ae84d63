"""The merge pair rule on the labelled pairs, its near misses, and complete-linkage groups."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gardener.lifecycle import plan_merges
from gardener.merging import Cluster, merge_groups
from gardener.sameness import (
    ConceptFacts,
    canonical,
    compare,
    credible_names,
    is_generic,
    is_junk,
    name_relation,
)
from gardener.state import GardenState
from staging.gardener_repo import GardenerRepo

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "labelled" / "merge_pairs.json"
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _facts(side: dict) -> ConceptFacts:  # type: ignore[type-arg]
    convs = side.get("conversations")
    return ConceptFacts(side["title"], side["type"],
                        credible_names(side["title"], side.get("aliases", [])),
                        None if convs is None else frozenset(convs), side.get("split_origin"))


def test_labelled_pairs_precision_at_least_90_percent() -> None:
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]
    assert len(pairs) >= 150 and sum(p["same"] for p in pairs) >= 30
    said = [bool(compare(_facts(p["a"]), _facts(p["b"]))) for p in pairs]
    right = sum(s and p["same"] for s, p in zip(said, pairs, strict=True))
    assert right / max(sum(said), 1) >= 0.9
    assert right / sum(p["same"] for p in pairs) >= 0.5  # and it does merge


@pytest.mark.parametrize(("a", "b", "relation"), [
    ("BFS algorithm", "BFS", "category"),
    ("Mermaid syntax", "Mermaid", "category"),
    ("GCP", "Google Cloud Platform", "acronym"),
    ("LLMs", "large language models", "initials"),
    ("partner Tomás", "Tomas", "role"),
    ("Apache Airflow", "Airflow", "prefix"),
    ("Tuesdays", "tuesday", "exact"),
    ("Kubernetes", "Kubernets", "spelling"),
    ("Portugal", "Portuguese", None),
    ("Data", "PHP", None),
    ("Google", "GCP", None),
    ("Program", "Java program", None),
    ("Tuesday", "Thursday", None),
    ("Python 2", "Python 3", None),
    ("RDD", "requesting detailed data", None),
    ("Caching", "metastore caching", None),
    ("ORM", "Atabix ORM", None),
])
def test_name_relations_and_near_misses(a: str, b: str, relation: str | None) -> None:
    assert name_relation([a], [b]) == relation
    assert name_relation([b], [a]) == relation


def test_generic_junk_and_canonical_forms() -> None:
    assert is_generic("Data") and is_generic("Server") and not is_generic("Kubernetes")
    assert is_junk("do the race briefing") and not is_junk("race briefing")
    assert canonical("DAGs") == ("dag",) and canonical("real-time") == ("real", "time")
    assert credible_names("Hadoop configuration", ["Apache Hive", "Hadoop configuration tool",
                                                   "hadoop configurations"]) == (
        "Hadoop configuration", "Hadoop configuration tool")  # each name once


def test_weak_relations_need_shared_evidence_and_split_siblings_never_merge() -> None:
    a = ConceptFacts("BFS", "entity", ("BFS",), frozenset({"conv1"}))
    b = ConceptFacts("BFS algorithm", "entity", ("BFS algorithm",), frozenset({"conv2"}))
    assert compare(a, b).reason == "category_without_shared_evidence"
    assert compare(a, ConceptFacts("BFS algorithm", "entity", (), frozenset({"conv1"}))).same
    x = ConceptFacts("Maria", "entity", split_origin="c_maria")
    assert compare(x, ConceptFacts("maria", "entity", split_origin="c_maria")).reason == (
        "split_siblings")
    assert not compare(x, ConceptFacts("Maria", "belief")).same  # types


def test_complete_linkage_does_not_chain() -> None:
    names = ["GCP", "Google Cloud Platform", "Google Cloud Platform service"]
    clusters = [Cluster(f"c{i}", (ConceptFacts(n, "entity", (n,)),)) for i, n in enumerate(names)]
    # GCP ~ Google Cloud Platform ~ ... service, but GCP is not "... service": no chain
    assert merge_groups(clusters) == [(["c0", "c1"], "acronym")]


def test_groups_stop_at_twenty(staging, build) -> None:  # type: ignore[no-untyped-def]
    for i in range(25):
        build.concept(f"c_{i:02d}", "Kubernetes", type="entity", quotes=[f"quote {i}"])
    state = GardenState.from_rows(GardenerRepo(staging.db).load_rows())
    plan = plan_merges(state, now=NOW)
    assert plan.stats["largest_group"] == 20 and plan.stats["merges"] == 19 + 4


def test_no_hub_and_a_real_name_survives(staging, build, prov) -> None:  # type: ignore[no-untyped-def]
    build.concept("c_data", "Data", type="entity", quotes=[f"data {i}" for i in range(9)])
    for i, title in enumerate(["PHP", "Server", "POST request", "Louvain", "Clustering"]):
        build.concept(f"c_{i}", title, type="entity", quotes=[title])
    build.concept("c_bfs", "BFS", type="entity", quotes=["BFS"])
    build.concept("c_bfs_alg", "BFS algorithm", type="entity", quotes=["BFS", "BFS again"])
    state = GardenState.from_rows(GardenerRepo(staging.db).load_rows())
    plan = plan_merges(state, now=NOW)
    assert [(a["survivor_title"], a["merged_titles"]) for a in plan.actions] == [
        ("BFS algorithm", ["BFS"])]
    GardenerRepo(staging.db).apply_plan(plan.to_dict(), ["test"], prov)
    again = GardenState.from_rows(GardenerRepo(staging.db).load_rows())
    assert plan_merges(again, now=NOW).empty  # a fixpoint
