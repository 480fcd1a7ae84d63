"""Graph sync throughput: nodes/s and rels/s, embedded and Neo4j, at Jocker and seed-002 scale.

    .venv/bin/python benchmarks/graph_sync.py                   # Jocker scale, both backends
    .venv/bin/python benchmarks/graph_sync.py --edges 2400000   # + the 2.4M-edge embedded load
    .venv/bin/python benchmarks/graph_sync.py --backend embedded --skip-jocker --edges 2400000

Jocker scale (synthetic): 3,253 conversations, 24,639 messages, with segments, concepts,
evidence, relations and topics in staging. Measured per backend: the first sync (bulk load of
an empty graph), a no-op resync (hash diff only, writes nothing), the incremental path
(UNWIND + MERGE of every row into an empty graph) and a --rebuild. The large run bulk-loads
synthetic rows straight through ``GraphStore.bulk_load`` (COPY from CSV on the embedded engine).
Neo4j is used when reachable at NEO4J_URI (``bash .ci/neo4j.sh start``); its data is deleted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph import EDGE_TYPES, NODE_LABELS, GraphUnavailable, open_graph
from pipeline.settings import Settings
from pipeline.sync import project_store, sync_store
from staging import SourceStore, StagingStore, transaction

WORDS = ("memory", "concept", "rust", "graph", "lineage", "topic", "ownership", "borrow",
         "trip", "lisbon", "plan", "goal", "belief", "tension", "project", "event", "quote")
PROV = ("run_bench", "bench-user", "bench-asst", "bench", "2024-01-01T00:00:00+00:00")


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_jocker(settings: Settings, conversations: int = 3253, messages: int = 24639) -> None:
    """Synthetic source + staging rows at Jocker scale (deterministic)."""
    rng = random.Random(2)
    source = SourceStore.open(settings.source_db)
    conv_ids = [f"conv_{i:06d}" for i in range(conversations)]
    msgs = []
    for i in range(messages):
        conv = i % conversations
        pos = i // conversations
        parent = f"msg_{i - conversations:07d}" if pos else None
        msgs.append((f"msg_{i:07d}", conv_ids[conv], parent, str(i), "user" if pos % 2 == 0
                     else "assistant", None, _text(rng, 60), "[]",
                     f"2024-01-{1 + conv % 28:02d}T{pos % 24:02d}:00:00+00:00", pos, 1,
                     "bench-user", "bench-asst", "src_bench", "{}"))
    with transaction(source.db):
        source.db.execute("INSERT INTO sources VALUES ('src_bench','/b','0','jsonl',"
                          "'2024-01-01T00:00:00+00:00','bench-user','bench-asst')")
        source.db.conn.executemany(
            "INSERT INTO conversations VALUES (?, 'src_bench', ?, ?, NULL, NULL, 'bench-user',"
            " 'bench-asst', '{}')", [(c, c, f"title {c}") for c in conv_ids])
        source.db.conn.executemany(
            "INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", msgs)
    source.close()
    _build_staging(settings, rng, [m[0] for m in msgs], [m[6] for m in msgs])


def _build_staging(
    settings: Settings, rng: random.Random, ids: list[str], texts: list[str]
) -> None:
    staging = StagingStore.open(settings.staging_db)
    n_concepts = 6000
    concepts = [(f"concept_{i:06d}", f"concept {i}", "goal", "d", "active", 0.8, "[]", 1,
                 None, None, None, PROV[4], PROV[4], *PROV) for i in range(n_concepts)]
    evidence = []
    for i in range(30000):
        m = rng.randrange(len(ids))
        start = rng.randrange(0, 40)
        evidence.append((f"ev_{i:07d}", concepts[i % n_concepts][0], ids[m], "src_bench",
                         texts[m][start:start + 20], start, start + 20, 0.7, None, *PROV))
    relations = [(f"rel_{i:06d}", concepts[i % n_concepts][0],
                  concepts[(i * 7 + 1) % n_concepts][0], "supports", 0.6, PROV[4], None, PROV[4],
                  None, None, None, *PROV) for i in range(6000)]
    segments, members = [], []
    for s in range(0, len(ids), 4):
        seg = f"seg_{s:07d}"
        segments.append((seg, "conv", s // 4, "current", 400, "extracted", "[]", *PROV))
        members += [(seg, ids[j], j - s) for j in range(s, min(s + 4, len(ids)))]
    with transaction(staging.db):
        conn = staging.db.conn
        conn.executemany(f"INSERT INTO concepts VALUES ({','.join('?' * 18)})", concepts)
        conn.executemany(f"INSERT INTO evidence VALUES ({','.join('?' * 14)})", evidence)
        conn.executemany(f"INSERT INTO relations VALUES ({','.join('?' * 16)})", relations)
        conn.executemany(f"INSERT INTO segments VALUES ({','.join('?' * 12)})", segments)
        conn.executemany("INSERT INTO segment_messages VALUES (?,?,?)", members)
        conn.executemany(f"INSERT INTO topics VALUES ({','.join('?' * 11)})",
                         [(f"topic_{t}", f"t{t}", "[]", 10, 1, None, *PROV) for t in range(60)])
        conn.executemany(
            f"INSERT INTO topic_memberships VALUES ({','.join('?' * 10)})",
            [(c[0], f"topic_{i % 60}", 0.5, 1, None, *PROV) for i, c in enumerate(concepts)])
    staging.close()


def _rates(label: str, nodes: int, edges: int, seconds: float) -> dict[str, object]:
    figure = {"case": label, "nodes": nodes, "edges": edges, "seconds": round(seconds, 2),
              "nodes_per_s": round(nodes / seconds) if seconds else None,
              "rels_per_s": round(edges / seconds) if seconds else None}
    print(json.dumps(figure), flush=True)
    return figure


def bench_jocker(settings: Settings, backend: str) -> None:
    first = sync_store(settings, backend=backend)
    n = sum(first.counts[k] for k in NODE_LABELS)
    e = sum(first.counts[k] for k in EDGE_TYPES)
    _rates(f"{backend} jocker first sync (bulk, incl. projection)", n, e, first.seconds)
    again = sync_store(settings, backend=backend)
    _rates(f"{backend} jocker no-op resync ({again.rows_written} rows written)", n, e,
           again.seconds)
    rebuilt = sync_store(settings, backend=backend, rebuild=True)
    _rates(f"{backend} jocker --rebuild", n, e, rebuilt.seconds)
    source, staging = SourceStore.open(settings.source_db), StagingStore.open(settings.staging_db)
    rows, _ = project_store(source, staging)
    source.close()
    staging.close()
    graph = open_graph(settings, backend)
    try:
        graph.delete_all()
        started = time.perf_counter()
        with graph.batch():
            for label in NODE_LABELS:
                graph.upsert_nodes(label, rows[label])
        mid = time.perf_counter()
        with graph.batch():
            for edge_type in EDGE_TYPES:
                graph.upsert_edges(edge_type, rows[edge_type])
        done = time.perf_counter()
    finally:
        graph.close()
    _rates(f"{backend} jocker UNWIND MERGE nodes", n, 0, mid - started)
    _rates(f"{backend} jocker UNWIND MERGE edges", 0, e, done - mid)


def bench_large(settings: Settings, edges: int) -> None:
    """``edges`` synthetic edges over ~edges/3.8 messages (seed 002: 632,868 units, 2.4M)."""
    n_msg = max(10, int(edges / 3.79))
    n_concept = max(10, n_msg // 12)
    scope = {"user_scope": "u", "assistant_scope": "a", "row_hash": "h"}
    started = time.perf_counter()
    messages = [{"id": f"m{i}", **scope, "conversation_id": f"c{i // 8}", "parent_id": None,
                 "role": "user", "author": None, "text": f"message {i}", "created_at": None,
                 "position": i % 8, "on_current_branch": True, "source_id": "s"}
                for i in range(n_msg)]
    concepts = [{"id": f"k{i}", **scope, "title": f"c{i}", "concept_type": "goal",
                 "description": "d", "state": "active", "confidence": 0.5, "aliases": "[]",
                 "revision_count": 0, "revisions": "[]", "first_seen": None, "last_seen": None,
                 "merged_into": None, "created_at": "2024", "updated_at": "2024", "run_id": "r"}
                for i in range(n_concept)]
    nexts = [{"id": f"n{i}", "src": f"m{i}", "dst": f"m{i + 1}", **scope}
             for i in range(n_msg - 1)]
    evidence = [{"id": f"e{i}", "src": f"m{i % n_msg}", "dst": f"k{(i * 31) % n_concept}",
                 **scope, "quote": "q", "span_start": 0, "span_end": 1, "confidence": 0.5,
                 "source_id": "s", "mention_id": None, "run_id": "r", "written_at": "2024"}
                for i in range(edges - len(nexts))]
    print(f"generated {n_msg + n_concept} nodes, {edges} edges in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    graph = open_graph(settings, "embedded")
    try:
        graph.delete_all()
        started = time.perf_counter()
        graph.bulk_load({"Message": messages, "Concept": concepts},
                        {"NEXT": nexts, "EVIDENCE_FOR": evidence})
        seconds = time.perf_counter() - started
        counts = graph.counts()
    finally:
        graph.close()
    assert counts["NEXT"] + counts["EVIDENCE_FOR"] == edges, counts
    _rates(f"embedded bulk load {edges} edges (COPY, CSV written included)",
           n_msg + n_concept, edges, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["embedded", "neo4j", "both"], default="both")
    parser.add_argument("--edges", type=int, default=0, help="also bulk-load N edges (embedded)")
    parser.add_argument("--skip-jocker", action="store_true")
    args = parser.parse_args()
    backends = ["embedded", "neo4j"] if args.backend == "both" else [args.backend]
    with tempfile.TemporaryDirectory(prefix="conceptmem-bench-") as tmp:
        settings = Settings(store=Path(tmp) / "store")
        if not args.skip_jocker:
            started = time.perf_counter()
            build_jocker(settings)
            print(f"built synthetic Jocker store in {time.perf_counter() - started:.1f} s")
            for backend in backends:
                try:
                    bench_jocker(settings, backend)
                except GraphUnavailable as exc:
                    print(f"{backend}: skipped ({exc.message})")
        if args.edges:
            bench_large(Settings(store=Path(tmp) / "large"), args.edges)


if __name__ == "__main__":
    main()
