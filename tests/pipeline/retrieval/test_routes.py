"""Each route on a small real store; paths exist in staging and the embedded graph; scopes."""

from __future__ import annotations

import json
import sqlite3

import pytest

from graph import open_graph
from pipeline.cli.app import main
from pipeline.retrieval import ROUTES, Searcher, SearchRequest, UnknownRouteError, Visibility
from pipeline.settings import Settings

OTHER_USER = "bob"  # as in conftest.py
QUERY = "When did Caroline go to the LGBTQ support group?"


def _dia(searcher: Searcher, ids: list[str]) -> list[str]:
    return [searcher.corpus.rows[i].external_id for i in ids]


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_finds_the_turn_that_answers(built_store: Settings, route: str) -> None:
    with Searcher(built_store) as searcher:
        results = searcher.search(SearchRequest(QUERY, 5), route)
        assert results, route
        assert "D1:3" in _dia(searcher, [r.message_id for r in results]), route
        top = results[0]
        assert top.excerpt and top.conversation_id and top.routes
        assert all(path[-1].kind == "Message" and path[-1].id == r.message_id
                   for r in results for path in r.paths)
        scores = [r.score for r in results]
        assert scores == sorted(scores, reverse=True)


def test_unknown_route_is_a_clear_error(built_store: Settings) -> None:
    with Searcher(built_store) as searcher, pytest.raises(UnknownRouteError, match="flat_bm25"):
        searcher.search(SearchRequest(QUERY), "nope")


def _staging_has(conn: sqlite3.Connection, kind: str, step_id: str) -> bool:
    table_sql = {
        "Concept": ("SELECT 1 FROM concepts WHERE id = ?", [step_id]),
        "EVIDENCE_FOR": ("SELECT 1 FROM evidence WHERE id = ?", [step_id]),
        "RELATES": ("SELECT 1 FROM relations WHERE id = ?", [step_id]),
        "Topic": ("SELECT 1 FROM topics WHERE id = ?", [step_id]),
        "MERGED_INTO": ("SELECT 1 FROM concept_links WHERE kind = 'merged_into' AND"
                        " from_concept_id || '|' || to_concept_id = ?", [step_id]),
        "BELONGS_TO": ("SELECT 1 FROM topic_memberships WHERE concept_id || '|' || topic_id = ?",
                       [step_id]),
    }
    sql, params = table_sql[kind]
    return conn.execute(sql, params).fetchone() is not None


def test_every_memory_path_exists_in_staging_and_in_the_graph(built_store: Settings) -> None:
    staging = sqlite3.connect(built_store.staging_db)
    titles = [t for (t,) in staging.execute(
        "SELECT c.title FROM concepts c JOIN evidence e ON e.concept_id = c.id"
        " WHERE c.state != 'archived' LIMIT 5")]
    assert titles
    graph = open_graph(built_store)
    seen_kinds: set[str] = set()
    try:
        with Searcher(built_store) as searcher:
            for title in titles:
                for result in searcher.search(SearchRequest(title, 10), "memory"):
                    for path in result.paths:
                        for step in path:
                            seen_kinds.add(step.kind)
                            _check_step(staging, graph, searcher, step.kind, step.id)
    finally:
        graph.close()
    assert {"Concept", "EVIDENCE_FOR", "Message"} <= seen_kinds


def _check_step(staging: sqlite3.Connection, graph: object, searcher: Searcher, kind: str,
                step_id: str) -> None:
    if kind == "Message":
        assert step_id in searcher.corpus.rows
        assert graph.ids("Message") >= {step_id}  # type: ignore[attr-defined]
    elif kind in ("Concept", "Topic", "EVIDENCE_FOR", "RELATES", "MERGED_INTO", "BELONGS_TO"):
        assert _staging_has(staging, kind, step_id), (kind, step_id)
        assert step_id in graph.ids(kind), (kind, step_id)  # type: ignore[attr-defined]


def test_two_users_never_see_each_other(built_store: Settings) -> None:
    mine = Visibility(built_store.user_scope, built_store.assistant_scope)
    bobs = Visibility(OTHER_USER, built_store.assistant_scope)
    with Searcher(built_store, mine) as searcher:
        for route in ROUTES:
            found = searcher.search(SearchRequest("zeppelin hangar roof LGBTQ support", 20),
                                    route)
            assert all(searcher.corpus.rows[r.message_id].conversation_id for r in found)
            assert not any("zeppelin" in r.excerpt for r in found), route
    with Searcher(built_store, bobs) as searcher:
        assert len(searcher.corpus.rows) == 3
        for route in ROUTES:
            found = searcher.search(SearchRequest("LGBTQ support group zeppelin", 20), route)
            assert found and {r.message_id for r in found} <= set(searcher.corpus.rows), route


def test_conversation_filter_and_as_of(built_store: Settings) -> None:
    with Searcher(built_store) as searcher:
        convs = {r.conversation_id for r in searcher.corpus.rows.values()}
        assert len(convs) == 1
        request = SearchRequest(QUERY, 10, frozenset({"conv_not_there"}))
        assert all(searcher.search(request, route) == [] for route in ROUTES)
    first_session_end = "2023-05-08T23:59:59+00:00"
    early = Visibility(built_store.user_scope, built_store.assistant_scope, first_session_end)
    with Searcher(built_store, early) as searcher:
        assert searcher.corpus.rows
        for route in ROUTES:
            found = searcher.search(SearchRequest("adoption agencies research", 10), route)
            assert all((r.created_at or "") <= first_session_end for r in found), route


def test_search_cli_json(built_store: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["--store", str(built_store.store), "search", QUERY, "--k", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3
    assert {"message_id", "excerpt", "conversation_id", "session", "created_at", "score",
            "routes", "paths"} <= set(rows[0])
    assert main(["--store", str(built_store.store), "search", "[bold]x[/] \x1b[31m"]) == 0
    assert "\x1b[31m" not in capsys.readouterr().out
