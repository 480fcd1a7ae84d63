"""Ingest benchmark: a Jocker-scale ChatGPT export (3,253 conversations, 24,639 messages).

Generates ``conversations.json`` in a temp dir (realistic node layout: null root, hidden empty
system node, metadata, ~10% of conversations with a regenerated answer or edited prompt), then
times ``ingest_paths`` into a fresh store and prints seconds, messages/s and peak memory.
Then re-ingests the same file (must add 0 rows) and prints that time too.

    .venv/bin/python benchmarks/ingest.py [--conversations 3253] [--messages 24639]
        [--trace-memory] [--profile 30]

``--profile N`` prints the N most expensive functions (cProfile, by own time) of the first
ingest; the profiler slows it, so its timing line says so.

Target on a 2-core machine: <= 2 s for the first ingest.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import resource
import sqlite3
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from pipeline.ingest import ingest_paths
from pipeline.settings import Settings

_VOCABULARY = (
    "the project memory graph training plan budget rust cli lisbon spanish remote work goal"
    " because deadline weekly review habit focus energy team design test data export concept"
    " evidence message branch answer question schedule run marathon pace week month year"
)
WORDS = tuple(_VOCABULARY.split())


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _node(
    node_id: str, parent: str | None, role: str, text: str, ts: float | None, hidden: bool = False
) -> dict[str, Any]:
    meta: dict[str, Any] = {"request_id": "8" + node_id[:15], "timestamp_": "absolute"}
    if hidden:
        meta["is_visually_hidden_from_conversation"] = True
    if role == "assistant":
        meta.update(model_slug="gpt-4o", finish_details={"type": "stop", "stop_tokens": [200002]})
    return {
        "id": node_id, "parent": parent, "children": [],
        "message": {
            "id": node_id, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": ts, "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "end_turn": role == "assistant" or None,
            "weight": 1.0, "metadata": meta, "recipient": "all", "channel": None,
        },
    }


def _conversation(rng: random.Random, index: int, n_messages: int, branch: bool) -> dict[str, Any]:
    start = 1.68e9 + index * 9000.0
    root = f"root-{index}"
    mapping: dict[str, Any] = {root: {"id": root, "message": None, "parent": None, "children": []}}
    system = f"sys-{index}"
    mapping[system] = _node(system, root, "system", "", None, hidden=True)
    parent, last_user = system, system
    main_len = n_messages - 1 if branch else n_messages
    for i in range(main_len):
        role = "user" if i % 2 == 0 else "assistant"
        node_id = f"{index:05d}-{i:03d}-{rng.getrandbits(32):08x}"
        text = _text(rng, rng.randint(8, 40) if role == "user" else rng.randint(60, 220))
        mapping[node_id] = _node(node_id, parent, role, text, start + i * 30.0)
        if role == "user":
            last_user = node_id
        parent = node_id
    current = parent
    if branch:  # a regenerated answer: a sibling under the last user prompt
        node_id = f"{index:05d}-alt-{rng.getrandbits(32):08x}"
        mapping[node_id] = _node(node_id, last_user, "assistant", _text(rng, 80), start + 9e3 - 1)
    for node_id, node in mapping.items():
        if node["parent"] is not None:
            mapping[node["parent"]]["children"].append(node_id)
    conv_id = f"c{index:05d}-{rng.getrandbits(64):016x}"
    return {
        "title": _text(rng, 4), "create_time": start, "update_time": start + 9e3,
        "mapping": mapping, "moderation_results": [], "current_node": current,
        "plugin_ids": None, "conversation_id": conv_id, "default_model_slug": "gpt-4o",
        "is_archived": False, "safe_urls": [], "id": conv_id,
    }


def generate(path: Path, conversations: int, messages: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    sizes = [messages // conversations] * conversations
    for i in rng.sample(range(conversations), messages - sum(sizes)):
        sizes[i] += 1
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        for index, size in enumerate(sizes):
            if index:
                f.write(",\n")
            branch = size >= 4 and rng.random() < 0.1
            json.dump(_conversation(rng, index, size, branch), f, ensure_ascii=False)
        f.write("]")


def _timed(
    settings: Settings, path: Path, trace: bool, profile: int = 0
) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds of this process, messages added, peak traced bytes)."""
    if trace:
        tracemalloc.start()
    profiler = cProfile.Profile() if profile else None
    started, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    report = ingest_paths(settings, [path])
    if profiler is not None:
        profiler.disable()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(profile)
    return seconds, cpu, report.totals.messages, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=3253)
    parser.add_argument("--messages", type=int, default=24639)
    parser.add_argument("--trace-memory", action="store_true",
                        help="also measure peak Python memory with tracemalloc (slows ingest)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the N costliest functions of the first ingest (slows it)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        generate(export, args.conversations, args.messages)
        size_mb = export.stat().st_size / 1e6
        settings = Settings(store=Path(tmp) / "store")
        seconds, cpu, added, peak = _timed(settings, export, args.trace_memory, args.profile)
        again, again_cpu, readded, _ = _timed(settings, export, False)
        stored = sqlite3.connect(settings.source_db).execute(
            "SELECT COUNT(*) FROM messages").fetchone()[0]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"export: {args.conversations} conversations, {stored} messages stored,"
          f" {size_mb:.1f} MB")
    slowed = " (with tracemalloc on)" if peak else ""
    slowed += " (with cProfile on)" if args.profile else ""
    print(f"ingest: {seconds:.2f} s wall ({cpu:.2f} s CPU), {added / seconds:,.0f} messages/s"
          f"{slowed}")
    if peak:
        print(f"peak traced Python memory: {peak / 1e6:.1f} MB")
    print(f"max RSS of the process (incl. generation): {rss:.0f} MB")
    print(f"re-ingest: {again:.2f} s wall ({again_cpu:.2f} s CPU), {readded} messages added"
          " (must be 0)")
    print(f"load average before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f}"
          f" on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
