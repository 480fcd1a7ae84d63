"""The pure parts of retrieval: query priors, FTS5 query quoting, RRF fusion."""

from __future__ import annotations

import sqlite3

from pipeline.retrieval import Candidate, rrf
from pipeline.retrieval.lexical import fts_query, query_words
from pipeline.retrieval.priors import TimeWindow, read_priors, strip_names


def test_speakers_named_in_the_query_come_from_the_store_names() -> None:
    priors = read_priors("What did Ana's brother say to bo?", ["Ana Lima", "Bo", "Cy"], None)
    assert priors.speakers == ("ana lima", "bo")
    assert strip_names("What did Ana's brother say to bo?", priors.speakers) == \
        "What did brother say to"
    assert read_priors("What did Anna say?", ["Ana"], None).speakers == ()


def test_time_expressions() -> None:
    may = read_priors("What happened in May 2023?", [], None).windows
    assert may == (TimeWindow("2023-05-01T00:00:00", "2023-06-01T00:00:00"),)
    assert may[0].contains("2023-05-31T23:59:59+00:00")
    assert not may[0].contains("2023-06-01T00:00:00+00:00")
    assert read_priors("may I ask about Jan?", ["Jan"], None).windows == ()
    assert read_priors("in 2022", [], None).windows == (TimeWindow("2022-01-01", "2023-01-01"),)
    last = read_priors("what did we plan last month", [], "2024-01-15T10:00:00+00:00").windows
    assert last == (TimeWindow("2023-12-01T00:00:00", "2024-01-01T00:00:00"),)


def test_user_text_is_never_fts5_syntax() -> None:
    words = query_words('NEAR("x" y) OR * AND col:val ^ "quote')
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
    conn.execute("INSERT INTO t VALUES ('near x y col val quote')")
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", [fts_query(words)]).fetchone()
    assert query_words("the of and") == []


def test_rrf_dedupes_by_message_and_orders_deterministically() -> None:
    a = [Candidate("m1", 5.0, "a"), Candidate("m2", 4.0, "a"), Candidate("m1", 1.0, "a")]
    b = [Candidate("m2", 0.9, "b"), Candidate("m3", 0.8, "b")]
    fused = rrf({"a": a, "b": b}, k=1.0)
    assert [f.message_id for f in fused] == ["m2", "m1", "m3"]
    assert fused[0].score == 1 / 3 + 1 / 2  # rank 2 in a, rank 1 in b
    assert fused[1].score == 1 / 2  # m1 counted once, at its best rank
    assert {c.route for c in fused[0].found_by} == {"a", "b"}
