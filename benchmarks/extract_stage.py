"""The whole extract stage (segment -> extract -> verify -> map -> commit per segment), timed.

    .venv/bin/python benchmarks/extract_stage.py [--conversations 120] [--latency 0.5]
        [--concurrency 16] [--embedder hashing]

1. LLM path: the scripted server (tests/llm_server.py, its own process) answers every call after
   ``--latency`` s with a valid extraction quoting the first message; the stage runs
   ``--concurrency`` calls in flight and commits each segment in its own transaction.
2. Offline path: the same export through the offline extractor.
Prints messages/s for both (the LLM-path target of issue #3 is >= 50 messages/s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pipeline.extract import extract_store
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["learning Rust", "moving to Lisbon", "training for a marathon", "a budgeting app",
          "Spanish lessons", "a novel draft", "sleep habits", "a garden plan"]


def synthetic_export(path: Path, conversations: int, turns: int = 6) -> int:
    items = []
    for c in range(conversations):
        topic = TOPICS[c % len(TOPICS)]
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                            "children": [f"{c}-0"]}}
        for i in range(turns):
            role = "user" if i % 2 == 0 else "assistant"
            text = (f"I want to keep working on {topic}; step {i} of chat {c} is about"
                    f" planning my week around it." if role == "user" else
                    f"Good plan for {topic}. Try a small daily habit and review it on Sunday.")
            mapping[f"{c}-{i}"] = {
                "id": f"{c}-{i}", "parent": "root" if i == 0 else f"{c}-{i - 1}",
                "children": [f"{c}-{i + 1}"] if i + 1 < turns else [],
                "message": {"id": f"{c}-{i}", "author": {"role": role},
                            "create_time": 1.7e9 + c * 3600 + i * 60,
                            "content": {"content_type": "text", "parts": [text]},
                            "status": "finished_successfully", "metadata": {}},
            }
        items.append({"title": f"{topic} {c}", "create_time": 1.7e9 + c * 3600,
                      "update_time": 1.7e9 + c * 3600, "mapping": mapping,
                      "current_node": f"{c}-{turns - 1}", "id": f"conv-{c}"})
    path.write_text(json.dumps(items), encoding="utf-8")
    return conversations * turns


def _server(latency: float) -> tuple[subprocess.Popen[str], str]:
    launch = (f"import runpy, sys; sys.argv = ['llm_server', '--latency', '{latency}']; "
              f"runpy.run_path({str(ROOT / 'tests' / 'llm_server.py')!r}, run_name='__main__')")
    server = subprocess.Popen([sys.executable, "-c", launch], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    if not base_url.startswith("http"):
        raise SystemExit("the scripted server did not start")
    return server, base_url


def _timed(settings: Settings, export: Path, messages: int, label: str, **kwargs: Any) -> None:
    ingest_paths(settings, [export])
    started = time.perf_counter()
    report = extract_store(settings, **kwargs)
    elapsed = time.perf_counter() - started
    print(f"{label}: {messages} messages, {report.segments_done} segments in {elapsed:.2f} s"
          f" -> {messages / elapsed:.1f} messages/s; {report.concepts} concepts,"
          f" {report.evidence_total} evidence, decisions {dict(report.mapping.actions)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=120)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--embedder", default="hashing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "export.json"
        messages = synthetic_export(export, args.conversations)
        server, base_url = _server(args.latency)
        try:
            llm = Settings(store=Path(tmp) / "llm", embedder=args.embedder,
                           llm_base_url=base_url, llm_model="bench",
                           llm_concurrency=args.concurrency)
            _timed(llm, export, messages,
                   f"LLM stage (latency {args.latency * 1000:.0f} ms, concurrency"
                   f" {args.concurrency})")
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)
        offline = Settings(store=Path(tmp) / "offline", embedder=args.embedder)
        _timed(offline, export, messages, "offline stage", offline=True)


if __name__ == "__main__":
    main()
