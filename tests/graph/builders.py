"""Build a small store by inserting source rows and staging rows directly (no extractor needed).

Shape: conversation A has a chain m1 -> m2 -> m3 -> m4 -> m5 plus a side branch m2 -> m3b;
conversation B has b1 -> b2. Concepts: c_rust (two revisions), c_hostile (a title made to
break Cypher string building), c_old (merged into c_rust), c_split (split into c_rust).
Relations are bitemporal; one has been invalidated and one expired.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from graph import GraphUnavailable, open_graph
from ontology import Conversation, Message, Source, stable_id
from pipeline.settings import Settings
from staging import SourceStore, StagingStore, transaction

HOSTILE = "Rust\" }) DETACH DELETE n // `x` ' \n\u00e9\u6f22\U0001f980 $param {id:1}"
T1 = "2024-01-01T10:00:00+00:00"
T2 = "2024-02-01T10:00:00+00:00"
T3 = "2024-03-01T10:00:00+00:00"
T4 = "2024-04-01T10:00:00+00:00"


@dataclass
class Built:
    messages: dict[str, Message] = field(default_factory=dict)
    concepts: dict[str, str] = field(default_factory=dict)  # name -> id
    evidence: dict[str, dict[str, object]] = field(default_factory=dict)
    relations: dict[str, str] = field(default_factory=dict)
    segment_id: str = ""
    topic_id: str = ""


def _prov(run_id: str, scope: str, when: str = T1) -> dict[str, str]:
    return {"run_id": run_id, "user_scope": scope, "assistant_scope": "asst",
            "writer": "tests.builders", "written_at": when}


TEXTS = {
    "m1": "I want to learn Rust this year.",
    "m2": "Rust is a systems language; start with the book.",
    "m3": f"Okay. {HOSTILE} is what I typed by accident.",
    "m3b": "Alternative branch reply.",
    "m4": "Ownership is the hard part.",
    "m5": "Borrowing rules follow from ownership.",
    "b1": "Planning a trip to Lisbon.",
    "b2": "Lisbon in spring is lovely.",
}
PARENTS = {"m1": None, "m2": "m1", "m3": "m2", "m3b": "m2", "m4": "m3", "m5": "m4",
           "b1": None, "b2": "b1"}


def _source_rows(settings: Settings, scope: str, built: Built) -> None:
    source = Source(id=stable_id("src", scope), path="/tmp/export.jsonl", sha256="0" * 64,
                    format="jsonl", imported_at=datetime(2024, 1, 1, tzinfo=UTC),
                    user_scope=scope, assistant_scope="asst")
    store = SourceStore.open(settings.source_db)
    with transaction(store.db):
        store.add_source(source)
        for conv_name, names in (("A", ["m1", "m2", "m3", "m3b", "m4", "m5"]), ("B", ["b1", "b2"])):
            conv = Conversation(
                id=stable_id("conv", scope, conv_name), source_id=source.id,
                external_id=conv_name, title=HOSTILE if conv_name == "A" else "Trip",
                created_at=datetime(2024, 1, 1, tzinfo=UTC), updated_at=None,
                user_scope=scope, assistant_scope="asst",
            )
            msgs = []
            for pos, name in enumerate(names):
                parent = PARENTS[name]
                msgs.append(Message(
                    id=stable_id("msg", scope, name), conversation_id=conv.id,
                    source_id=source.id,
                    parent_id=stable_id("msg", scope, parent) if parent else None,
                    external_id=name, role="user" if pos % 2 == 0 else "assistant",
                    author=None, text=TEXTS[name], parts=[],
                    created_at=datetime(2024, 1, 1, 10, pos, tzinfo=UTC), position=pos,
                    on_current_branch=name != "m3b", user_scope=scope, assistant_scope="asst",
                ))
            store.add_conversation(conv, msgs)
            built.messages.update({m.external_id: m for m in msgs})
    store.close()


def add_concept(staging: StagingStore, run_id: str, scope: str, name: str, title: str,
                state: str = "active", merged_into: str | None = None) -> str:
    cid = stable_id("concept", scope, name)
    staging.db.table("concepts").insert({
        "id": cid, "title": title, "type": "goal", "description": f"about {title}",
        "state": state, "confidence": 0.9, "aliases": json.dumps([title]),
        "revision_count": 1, "first_seen": T1, "last_seen": T2, "merged_into": merged_into,
        "created_at": T1, "updated_at": T3, **_prov(run_id, scope),
    })
    return cid


def add_evidence(staging: StagingStore, run_id: str, scope: str, concept_id: str,
                 message: Message, quote: str) -> dict[str, object]:
    start = message.text.index(quote)
    row = {"id": stable_id("ev", concept_id, message.id, start), "concept_id": concept_id,
           "message_id": message.id, "source_id": message.source_id, "quote": quote,
           "start": start, "end": start + len(quote), "confidence": 0.8, "mention_id": None,
           **_prov(run_id, scope)}
    staging.db.table("evidence").insert(row)
    return row


def _staging_rows(settings: Settings, scope: str, built: Built) -> None:
    staging = StagingStore.open(settings.staging_db)
    run = staging.start_run("extract", {}, "test", scope, "asst")
    m = built.messages
    with transaction(staging.db):
        c = built.concepts
        c["rust"] = add_concept(staging, run.id, scope, "rust", "Learning Rust")
        c["hostile"] = add_concept(staging, run.id, scope, "hostile", HOSTILE)
        c["old"] = add_concept(staging, run.id, scope, "old", "Rust lang", "merged", c["rust"])
        c["split"] = add_concept(staging, run.id, scope, "split", "Rust and Go", "split")
        for rev, (action, title, when) in enumerate(
            [("create", "Rust", T1), ("refine", "Learning Rust", T3)], start=1
        ):
            staging.db.table("concept_revisions").insert({
                "concept_id": c["rust"], "revision": rev, "action": action,
                "snapshot": json.dumps({"title": title, "state": "active"}),
                "reason": f"{action} reason", **_prov(run.id, scope, when),
            })
        built.evidence["e1"] = add_evidence(staging, run.id, scope, c["rust"], m["m1"],
                                            "learn Rust")
        built.evidence["e3"] = add_evidence(staging, run.id, scope, c["rust"], m["m3"], "Okay.")
        built.evidence["e2"] = add_evidence(staging, run.id, scope, c["hostile"], m["m3"],
                                            HOSTILE)
        for name, src, dst, rel, valid, invalid, created, expired in (
            ("r1", "rust", "hostile", "supports", T1, T3, T1, None),
            ("r2", "hostile", "rust", "causes", None, None, T2, T4),
            ("r3", "old", "rust", "instance_of", T1, None, T1, None),
        ):
            rid = stable_id("rel", scope, name)
            built.relations[name] = rid
            staging.db.table("relations").insert({
                "id": rid, "source_concept_id": c[src], "target_concept_id": c[dst],
                "relation": rel, "confidence": 0.7, "valid_at": valid, "invalid_at": invalid,
                "created_at": created, "expired_at": expired, "evidence_message_id": None,
                "invalidated_by": None, **_prov(run.id, scope),
            })
        for src, kind in (("old", "merged_into"), ("split", "split_into")):
            staging.db.table("concept_links").insert({
                "from_concept_id": c[src], "to_concept_id": c["rust"], "kind": kind,
                "plan_id": "plan1", "active": 1, **_prov(run.id, scope),
            })
        built.topic_id = stable_id("topic", scope, "lang")
        staging.db.table("topics").insert({
            "id": built.topic_id, "label": "languages", "keywords": json.dumps(["rust"]),
            "size": 1, "active": 1, "plan_id": "plan1", **_prov(run.id, scope),
        })
        staging.db.table("topic_memberships").insert({
            "concept_id": c["rust"], "topic_id": built.topic_id, "probability": 0.75,
            "active": 1, "plan_id": "plan1", **_prov(run.id, scope),
        })
        names = ["m1", "m2", "m3"]
        built.segment_id = stable_id("seg", scope, *names)
        staging.db.table("segments").insert({
            "id": built.segment_id, "conversation_id": m["m1"].conversation_id, "ordinal": 0,
            "branch": "current", "token_estimate": 42, "status": "extracted",
            "source_message_ids": json.dumps([m[n].id for n in names]), **_prov(run.id, scope),
        })
        for pos, name in enumerate(names):
            staging.db.table("segment_messages").insert(
                {"segment_id": built.segment_id, "message_id": m[name].id, "position": pos}
            )
    staging.finish_run(run, "completed")
    staging.close()


def build_store(settings: Settings, scope: str = "user-a") -> Built:
    """Source + staging rows for ``scope``; returns the ids tests assert against."""
    built = Built()
    _source_rows(settings, scope, built)
    _staging_rows(settings, scope, built)
    return built


def require_neo4j(settings: Settings) -> None:
    """Empty this schema's nodes in the Neo4j database, or skip (fail when CI=true)."""
    try:
        graph = open_graph(settings, "neo4j")
    except GraphUnavailable as exc:
        reason = f"Neo4j unreachable at {settings.neo4j_uri}: {exc.message} ({exc.hint})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(reason)
    try:
        graph.delete_all()
    finally:
        graph.close()
