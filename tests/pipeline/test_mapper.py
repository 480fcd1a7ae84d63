"""The semantic mapper on a real staging db: create, attach, refine, reject, relations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pytest

from ontology import RawMention, RawRelation, normalize_name, stable_id
from pipeline.evidence import Verification
from pipeline.mapping import MappingInput, SemanticMapper, type_compat
from pipeline.settings import Settings
from staging import StagingStore
from staging.concept_repo import ConceptRepo


class WordEmbedder:
    """Bag of words hashed into 64 dims; ``synonyms`` map words to a shared bucket."""

    name = "test-words"
    dim = 64

    def __init__(self, synonyms: dict[str, str] | None = None) -> None:
        self.synonyms = synonyms or {}

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                word = self.synonyms.get(word, word)
                out[row, sum(map(ord, word)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


_ids: list[str] = []


@pytest.fixture
def world(settings: Settings):  # type: ignore[no-untyped-def]
    staging = StagingStore.open(settings.staging_db)
    run = staging.start_run("extract", {}, "test", settings.user_scope, settings.assistant_scope)
    repo = ConceptRepo(staging)
    yield staging, repo, run
    staging.close()


def _item(title: str, quote: str, *, kind: str = "goal", message: str = "msg-1",
          start: int = 0, description: str = "d", confidence: float = 0.7,
          relations: list[RawRelation] | None = None, verified: bool = True,
          day: int = 1) -> MappingInput:
    mention = RawMention(title=title, type=kind, description=description, quote=quote,  # type: ignore[arg-type]
                         message_ref="m1", confidence=confidence, relations=relations or [])
    check = (Verification(True, message, start, start + len(quote), None) if verified
             else Verification.rejected("quote_not_found", message))
    _ids.append(title)
    return MappingInput(stable_id("mn", len(_ids)), mention, check, "src-1",
                        datetime(2024, 1, day, tzinfo=UTC))


def _map(staging, repo, run, settings, items, embedder=None):  # type: ignore[no-untyped-def]
    mapper = SemanticMapper(repo, embedder or WordEmbedder(), settings)
    from staging import transaction

    with transaction(staging.db):
        return mapper.map_extraction(items, run.provenance("mapper"))


def _decisions(staging: StagingStore) -> list[dict]:  # type: ignore[type-arg]
    return list(staging.db.query("SELECT * FROM mapper_decisions ORDER BY rowid"))


def test_create_then_alias_hit_attaches(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    tally = _map(staging, repo, run, settings, [_item("Learn Rust", "learn Rust")])
    assert tally.actions == {"create": 1}
    cid = stable_id("c", settings.user_scope, settings.assistant_scope, "goal",
                    normalize_name("Learn Rust"))
    tally = _map(staging, repo, run, settings,
                 [_item("learn  rust!", "learn rust", message="msg-2", day=5)])
    assert tally.actions == {"attach": 1}
    concept = repo.get(cid)
    assert concept is not None and len(concept.evidence_spans) == 2
    assert concept.revision_count == 0
    assert concept.first_seen == datetime(2024, 1, 1, tzinfo=UTC)
    assert concept.last_seen == datetime(2024, 1, 5, tzinfo=UTC)
    scores = json.loads(_decisions(staging)[1]["scores"])
    assert scores["alias_hit"] is True and scores["type_compat"] == 1.0
    assert scores["candidate"] == cid and scores["via"] == "alias"


def test_fuzzy_near_duplicate_refines_with_alias(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    _map(staging, repo, run, settings, [_item("conceptmem project", "conceptmem", kind="project")])
    tally = _map(staging, repo, run, settings, [
        _item("conceptmem projects", "the conceptmem", kind="project", message="msg-2",
              description="A memory of concepts built from chat exports, with lineage.",
              confidence=0.9, day=3)])
    assert tally.actions == {"refine": 1}
    (concept,) = repo.load_hypotheses()
    assert concept.revision_count == 1
    assert concept.aliases == ["conceptmem projects"]
    assert concept.confidence == 0.9
    assert concept.description.startswith("A memory of concepts")
    assert concept.last_seen == datetime(2024, 1, 3, tzinfo=UTC)
    revisions = list(staging.db.query(
        "SELECT revision, action FROM concept_revisions ORDER BY revision"))
    assert [(r["revision"], r["action"]) for r in revisions] == [(0, "create"), (1, "refine")]
    scores = json.loads(_decisions(staging)[1]["scores"])
    assert scores["fuzzy"] >= settings.mapper_fuzzy_threshold and not scores["alias_hit"]


def test_embedding_match_needs_same_type_and_some_lexical_support(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    embedder = WordEmbedder({"jog": "run", "sprint": "run", "dawn": "morning",
                             "app": "ledgerline"})
    _map(staging, repo, run, settings,
         [_item("morning run", "I run", kind="behavioral_pattern"),
          _item("Ledgerline", "Ledgerline", kind="project", message="msg-1b")], embedder)
    tally = _map(staging, repo, run, settings, [
        _item("morning jog", "jog", kind="behavioral_pattern", message="msg-2"),
        _item("morning jog", "a jog", kind="event", message="msg-3"),
        _item("dawn sprint", "sprint", kind="behavioral_pattern", message="msg-4"),
        _item("Ledgerline app", "Ledgerline app", kind="project", message="msg-5"),
    ], embedder)
    assert tally.actions == {"refine": 1, "create": 3}  # "Ledgerline app" becomes an alias
    scores = [json.loads(d["scores"]) for d in _decisions(staging)[2:]]
    # a synonym the embedder knows but no name relation: the merge bar keeps it apart
    assert scores[0]["cosine"] >= 0.95 and scores[0]["via"] is None
    assert settings.mapper_embedding_min_fuzzy <= scores[0]["fuzzy"] < 92
    assert scores[1]["via"] is None  # event vs behavioral_pattern: no match
    assert scores[2]["cosine"] >= 0.95 and scores[2]["via"] is None  # no lexical support
    assert scores[3]["via"] == "embedding" and scores[3]["fuzzy"] < 92  # a kind-word: same


def test_different_type_creates_a_new_concept(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    _map(staging, repo, run, settings, [_item("Lyon", "Lyon", kind="entity")])
    tally = _map(staging, repo, run, settings,
                 [_item("Lyon", "Lyon", kind="event", message="msg-2")])
    assert tally.actions == {"create": 1}
    assert len(repo.load_hypotheses()) == 2
    decision = _decisions(staging)[1]
    assert decision["reason"].startswith("type_incompatible:")
    assert json.loads(decision["scores"])["type_compat"] == 0.0


def test_compatible_types_attach(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    assert type_compat("goal", "project") == 0.5 and type_compat("entity", "event") == 0.0
    _map(staging, repo, run, settings, [_item("Ship conceptmem", "ship it", kind="goal")])
    tally = _map(staging, repo, run, settings,
                 [_item("ship conceptmem", "ship", kind="project", message="msg-2")])
    assert tally.actions == {"attach": 1}


def test_unverified_and_duplicate_evidence_are_rejected(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    tally = _map(staging, repo, run, settings, [
        _item("Learn Rust", "learn Rust"),
        _item("Learn Rust", "learn Rust"),
        _item("Learn Go", "learn Go", verified=False),
    ])
    assert tally.actions == {"create": 1, "reject": 2}
    assert tally.reject_reasons == {"duplicate_evidence": 1, "unverified_evidence": 1}
    assert staging.count("concepts") == 1 and staging.count("evidence") == 1
    reasons = [d["reason"] for d in _decisions(staging)]
    assert reasons[2] == "unverified_evidence:quote_not_found"
    for concept in repo.load_hypotheses():
        assert concept.evidence_spans


def test_relations_resolve_titles_within_the_extraction(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    tally = _map(staging, repo, run, settings, [
        _item("Learn Rust", "learn Rust",
              relations=[RawRelation(target_title="new job", relation="enables", confidence=0.6),
                         RawRelation(target_title="ghost", relation="causes", confidence=0.6)]),
        _item("New job", "a new job", kind="goal", message="msg-2", day=2),
    ])
    assert tally.relations == 1
    (row,) = staging.db.query("SELECT * FROM relations")
    assert row["relation"] == "enables" and row["valid_at"].startswith("2024-01-01")
    assert row["invalid_at"] is None and row["expired_at"] is None and row["created_at"]
    source = repo.get(row["source_concept_id"])
    assert source is not None and source.relations[0].target_id == row["target_concept_id"]


def test_scopes_never_share_concepts(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    mapper = SemanticMapper(repo, WordEmbedder(), settings)
    from staging import transaction

    for n, user in enumerate(("alice", "bob", "alice")):
        with transaction(staging.db):
            mapper.map_extraction([_item("Learn Rust", "learn Rust", message=f"msg-{n}")],
                                  run.provenance("mapper"), (user, "helper"))
    rows = list(staging.db.query("SELECT id, user_scope, assistant_scope FROM concepts"))
    assert sorted(r["user_scope"] for r in rows) == ["alice", "bob"]
    alice = stable_id("c", "alice", "helper", "goal", "learn rust")
    assert {r["id"] for r in rows} == {alice, stable_id("c", "bob", "helper", "goal", "learn rust")}
    assert len(repo.evidence_for(alice)) == 2
    assert {r["user_scope"] for r in staging.db.query("SELECT user_scope FROM evidence")} \
        == {"alice", "bob"}
    assert [r.id for r in repo.rows(scope=("bob", "helper"))] != [alice]


def test_retired_concepts_merged_archived_split(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    _map(staging, repo, run, settings, [
        _item("Learn Rust", "learn Rust"), _item("Zig toolchain", "Zig", message="msg-2"),
        _item("Old hobby", "hobby", message="msg-3"), _item("Big plan", "plan", message="msg-4"),
    ])
    ids = {row.title: row.id for row in repo.rows()}
    prov = run.provenance("gardener")
    from staging import transaction

    with transaction(staging.db):
        for title, state, into in (("Zig toolchain", "merged", ids["Learn Rust"]),
                                   ("Old hobby", "archived", None), ("Big plan", "split", None)):
            row = repo.row(ids[title])
            assert row is not None
            row.state, row.merged_into = state, into
            repo.save_concept(row, prov)
    tally = _map(staging, repo, run, settings, [
        _item("Zig toolchain", "Zig again", message="msg-5"),
        _item("Old hobby", "hobby again", message="msg-6"),
        _item("Big plan", "plan again", message="msg-7"),
    ])
    assert tally.actions == {"refine": 2, "reject": 1}
    reasons = [d["reason"] for d in _decisions(staging)[-3:]]
    assert reasons[0].startswith(f"merged_into:{ids['Learn Rust']}")
    assert reasons[1].startswith("revived:archived") and reasons[2] == "concept_retired:split"
    revived = repo.get(ids["Old hobby"])
    assert revived is not None and revived.state == "active" and revived.revision_count == 1
    assert len(revived.evidence_spans) == 2
    assert len(repo.evidence_for(ids["Learn Rust"])) == 2


def _state(repo: ConceptRepo, title: str, kind: str, settings: Settings) -> str | None:
    row = repo.row(stable_id("c", settings.user_scope, settings.assistant_scope, kind,
                             normalize_name(title)))
    return row.state if row is not None else None


def test_tentative_mentions_start_weak_and_recurrence_activates(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    low = settings.mapper_weak_below - 0.05
    _map(staging, repo, run, settings,
         [_item("pottery class", "pottery class", kind="entity", confidence=low)])
    assert _state(repo, "pottery class", "entity", settings) == "weak"
    # same day, another message: still a hypothesis (a theme recurs over days)
    _map(staging, repo, run, settings, [_item("pottery class", "pottery class", kind="entity",
                                              confidence=low, message="msg-2")])
    assert _state(repo, "pottery class", "entity", settings) == "weak"
    _map(staging, repo, run, settings, [_item("Pottery class", "Pottery class", kind="entity",
                                              confidence=low, message="msg-3", day=9)])
    assert _state(repo, "pottery class", "entity", settings) == "active"
    concept = repo.get(stable_id("c", settings.user_scope, settings.assistant_scope, "entity",
                                 "pottery class"))
    assert concept is not None and len({s.message_id for s in concept.evidence_spans}) == 3
    # a confident mention creates an active concept at once
    _map(staging, repo, run, settings, [_item("Lisbon Marathon", "Lisbon Marathon")])
    assert _state(repo, "Lisbon Marathon", "goal", settings) == "active"


def test_tentative_mention_takes_the_type_of_the_concept_it_names(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    _map(staging, repo, run, settings, [_item("Ledgerline", "Ledgerline", kind="project")])
    tally = _map(staging, repo, run, settings, [
        _item("ledgerline", "ledgerline", kind="event", confidence=0.2, message="msg-2"),
    ])
    assert tally.actions == {"attach": 1}
    assert _state(repo, "ledgerline", "event", settings) is None  # no second concept
    # a confident mention of another type keeps its own type (decide's rules apply)
    tally = _map(staging, repo, run, settings, [
        _item("Ledgerline", "Ledgerline", kind="event", confidence=0.8, message="msg-3"),
    ])
    assert tally.actions == {"create": 1}


def test_weak_names_are_embedded_only_once_active(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world

    class Counting(WordEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            self.seen.extend(texts)
            return super().embed(texts)

    embedder = Counting()
    mapper = SemanticMapper(repo, embedder, settings)
    from staging import transaction

    low = settings.mapper_weak_below - 0.1
    for i, day in enumerate((1, 5, 9)):
        with transaction(staging.db):
            mapper.map_extraction([_item("night shifts", "night shifts", kind="entity",
                                         confidence=low, message=f"msg-{i}", day=day)],
                                  run.provenance("mapper"))
        if i < 2:
            assert "night shifts" not in embedder.seen
    assert _state(repo, "night shifts", "entity", settings) == "active"
    assert embedder.seen.count("night shifts") == 1
    row = mapper.index.rows_of[stable_id("c", settings.user_scope, settings.assistant_scope,
                                         "entity", "night shifts")][0]
    assert np.linalg.norm(mapper.index._vectors[row]) > 0.99


def test_a_lone_common_noun_stays_weak_however_often(world, settings) -> None:  # type: ignore[no-untyped-def]
    staging, repo, run = world
    low = settings.mapper_weak_below - 0.05
    for i, day in enumerate((1, 4, 8, 12)):
        _map(staging, repo, run, settings, [_item("community", "community", kind="entity",
                                                  confidence=low, message=f"msg-{i}", day=day)])
    assert _state(repo, "community", "entity", settings) == "weak"
    concept = repo.get(stable_id("c", settings.user_scope, settings.assistant_scope, "entity",
                                 "community"))
    assert concept is not None and len(concept.evidence_spans) == 4  # the evidence is kept
