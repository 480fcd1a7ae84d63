"""Extraction benchmark: LLM-path throughput, prompt tokens versus a naive baseline, offline speed.

    .venv/bin/python benchmarks/extract.py [--segments 200] [--latency 0.5] [--concurrency 16]
    .venv/bin/python benchmarks/extract.py --real-url http://127.0.0.1:18080/v1 [--real-segments 8]

1. Throughput: the scripted OpenAI-compatible server (tests/llm_server.py) answers every call
   after ``--latency`` seconds; ``--concurrency`` threads run ``LLMExtractor`` (the real openai
   client, validation and the SQLite call log) over synthetic segments of 5 messages.
   Target: >= 50 messages/s at 500 ms latency and concurrency 16.
2. Prompt tokens per message (cl100k_base): our prompt + strict ExtractionResult schema versus a
   NAIVE prompt that sends the full ConceptHypothesis schema and the known concepts (titles and
   descriptions) on every call so the model decides identity. Seed 002 reports -48%.
3. The --dry-run estimate (calls, tokens) at Jocker scale and how long it takes (no network).
4. Offline extractor messages/s, if ``pipeline.offline_extractor`` is present.
5. With ``--real-url``: the extract stage on the bundled sample (data/sample) against a real
   OpenAI-compatible server (``bash .ci/llama.sh start``: llama-cpp-python + Gemma 3 270M):
   messages/s, prompt and completion tokens per message (the server's own usage counts), the
   ladder step detected, next to the offline extractor on the same segments (baseline).
   Only this part runs when --real-url is given.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import Field

from ontology import (
    ConceptHypothesis,
    ExtractionRequest,
    ExtractionResult,
    SegmentMessage,
    StrictBase,
    strict_json_schema,
)
from pipeline.llm import (
    SYSTEM_PROMPT,
    LLMCallLog,
    LLMExtractor,
    StructuredClient,
    count_message_tokens,
    count_tokens,
    estimate_extraction_cost,
    render_extraction_messages,
)
from pipeline.settings import Settings
from staging import StagingStore

ROOT = Path(__file__).resolve().parents[1]

WORDS = (
    "garden", "tomato", "schedule", "thesis", "marathon", "budget", "python", "refactor",
    "family", "trip", "lisbon", "german", "lessons", "piano", "habit", "sleep", "coffee",
    "deadline", "manager", "promotion", "startup", "idea", "database", "migration", "anxiety",
    "meditation", "recipe", "bread", "sourdough", "climbing", "knee", "injury", "apartment",
    "rent", "savings", "investment", "book", "novel", "chapter", "podcast", "interview",
    "bicycle",
)
STARTS = ("I want to", "My goal is to", "I keep failing to", "We decided to", "I believe we should",
          "Yesterday I tried to", "I'm worried that I can't", "The plan is to")


def synthetic_requests(
    segments: int, per_segment: int = 5, seed: int = 7
) -> list[ExtractionRequest]:
    rng = random.Random(seed)
    start = datetime(2024, 3, 1, tzinfo=UTC)
    requests = []
    for s in range(segments):
        messages = []
        for i in range(1, per_segment + 1):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(25, 60)))
            text = f"{rng.choice(STARTS)} {words}."
            messages.append(SegmentMessage(
                ref=f"m{i}", message_id=f"msg_{s:05d}_{i}_{rng.getrandbits(64):016x}",
                role="user" if i % 2 else "assistant", author=None,
                created_at=start + timedelta(minutes=s * 10 + i), text=text))
        requests.append(ExtractionRequest(f"seg_{s:05d}", f"Conversation {s}", tuple(messages)))
    return requests


def bench_throughput(requests: list[ExtractionRequest], latency: float, workers: int) -> None:
    # The server runs in its own process so that its work does not share our GIL.
    # run_path, not `python tests/llm_server.py`: tests/ on sys.path would shadow `ontology`.
    launch = (f"import runpy, sys; sys.argv = ['llm_server', '--latency', '{latency}']; "
              f"runpy.run_path({str(ROOT / 'tests' / 'llm_server.py')!r}, run_name='__main__')")
    server = subprocess.Popen(
        [sys.executable, "-c", launch],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        if not base_url.startswith("http"):
            raise SystemExit("the scripted server did not start (see its stderr above)")
        with tempfile.TemporaryDirectory() as tmp:
            elapsed, results, ok = _run_extraction(requests, base_url, Path(tmp), workers)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    messages = sum(len(r.messages) for r in requests)
    assert all(isinstance(r, ExtractionResult) for r in results) and ok == len(requests)
    ideal = len(requests) * latency / workers
    print(f"throughput: {len(requests)} segments, {messages} messages, "
          f"latency {latency * 1000:.0f} ms, concurrency {workers}")
    print(f"  elapsed {elapsed:.2f}s (ideal {ideal:.2f}s) -> {messages / elapsed:.1f} messages/s, "
          f"{len(requests) / elapsed:.1f} calls/s; {ok} ok rows in llm_calls "
          f"[target >= 50 messages/s: {'PASS' if messages / elapsed >= 50 else 'FAIL'}]")


def _run_extraction(
    requests: list[ExtractionRequest], base_url: str, store: Path, workers: int
) -> tuple[float, list[ExtractionResult], int]:
    settings = Settings(store=store, llm_base_url=base_url, llm_model="bench",
                        llm_timeout_s=30.0, llm_concurrency=workers)
    staging = StagingStore.open(settings.staging_db)
    log = LLMCallLog(staging, staging.start_run("extract", {}, "bench", "u", "a"))
    extractor = LLMExtractor(StructuredClient(settings, log), settings.llm_model)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(extractor.extract, requests))
    elapsed = time.perf_counter() - started
    ok = staging.count("llm_calls", "status = 'ok'")
    log.close()
    staging.close()
    return elapsed, results, ok


def known_concepts(count: int, seed: int = 11) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [{"concept_id": f"concept_{rng.getrandbits(64):016x}",
             "title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4))).title(),
             "description": "The user " + " ".join(rng.choice(WORDS) for _ in range(12)) + "."}
            for _ in range(count)]


class NaiveReply(StrictBase):
    """The naive reply: full ConceptHypothesis objects, identity decided by the model."""

    concepts: list[ConceptHypothesis] = Field(description="Concepts, new or updated.")


def naive_messages(request: ExtractionRequest, known: list[dict[str, str]]) -> list[dict[str, str]]:
    schema = json.dumps(strict_json_schema(ConceptHypothesis), indent=2)
    system = (
        "You maintain a concept memory of the user. Read the conversation and return the "
        "concepts it contains as ConceptHypothesis objects following this JSON schema:\n"
        f"{schema}\n"
        "If a concept is already known, reuse its concept_id and update its description, "
        "aliases, confidence and revision_count; otherwise create a new concept_id. Give "
        "evidence_spans with the source_id, message_id and the exact text.\n"
        "Known concepts:\n" + json.dumps(known, indent=1)
    )
    lines = [f"Conversation: {request.conversation_title}"]
    for m in request.messages:
        lines.append(f"message_id={m.message_id} role={m.role} time={m.created_at}\n{m.text}")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(lines)}]


def bench_tokens(requests: list[ExtractionRequest], known_count: int) -> None:
    ours_schema = strict_json_schema(ExtractionResult)
    naive_schema = strict_json_schema(NaiveReply)
    messages = sum(len(r.messages) for r in requests)
    ours = sum(count_message_tokens(render_extraction_messages(r), ours_schema) for r in requests)
    print(f"prompt tokens per message over {len(requests)} segments of "
          f"{messages // len(requests)} messages (cl100k_base):")
    fixed = count_tokens(SYSTEM_PROMPT) + count_tokens(json.dumps(ours_schema,
                                                                separators=(",", ":")))
    print(f"  ours (prompt + strict ExtractionResult schema): {ours / messages:.1f} "
          f"(of which {fixed} fixed per call: system prompt + schema)")
    for count in sorted({0, known_count}):
        known = known_concepts(count)
        naive = sum(count_message_tokens(naive_messages(r, known), naive_schema) for r in requests)
        print(f"  naive (ConceptHypothesis schema + {count} known concepts): "
              f"{naive / messages:.1f} -> ours is {100 * (ours / naive - 1):+.0f}%")


def bench_dry_run(segments: int) -> None:
    requests = synthetic_requests(segments, seed=5)
    started = time.perf_counter()
    estimate = estimate_extraction_cost(requests, Settings())
    elapsed = time.perf_counter() - started
    print(f"dry-run estimate: {estimate.calls} calls, {estimate.messages} messages, "
          f"{estimate.prompt_tokens} prompt tokens, <= {estimate.max_completion_tokens} "
          f"completion tokens, computed in {elapsed:.2f}s ({estimate.encoding}, no network)")


def bench_offline(requests: list[ExtractionRequest]) -> None:
    try:
        from pipeline.offline_extractor import OfflineExtractor
    except ImportError:
        print("offline extractor: not available")
        return
    extractor = OfflineExtractor()
    messages = sum(len(r.messages) for r in requests)
    started = time.perf_counter()
    mentions = sum(len(extractor.extract(r).mentions) for r in requests)
    elapsed = time.perf_counter() - started
    print(f"offline extractor ({extractor.label}): {messages} messages in {elapsed:.2f}s -> "
          f"{messages / elapsed:.0f} messages/s, {mentions} mentions")


def bench_real_server(url: str, model: str, segments: int, max_tokens: int) -> None:
    from pipeline.ingest import ingest_paths

    sample = sorted((ROOT / "data" / "sample").glob("*_conversations.json"))
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(store=Path(tmp) / "real", embedder="hashing", llm_base_url=url,
                        llm_model=model, llm_concurrency=1, llm_timeout_s=300.0,
                        llm_max_completion_tokens=max_tokens)
        real = _staged_run(base, sample, ingest_paths, segments, offline=False)
        offline = _staged_run(base.model_copy(update={"store": Path(tmp) / "offline"}), sample,
                              ingest_paths, segments, offline=True)
    print(f"real server {url} model {model}: {real['segments']} segments of the bundled sample "
          f"({real['messages']} messages), structured output {real['step']}")
    print(f"  {real['elapsed']:.1f}s -> {real['messages'] / real['elapsed']:.2f} messages/s; "
          f"{real['done']} segments done, {real['failed']} failed {real['failures'] or ''}; "
          f"{real['verified']} verified spans of {real['mentions']} mentions")
    per = max(real["messages"], 1)
    print(f"  tokens per message (server usage): prompt {real['prompt'] / per:.0f}, completion "
          f"{real['completion'] / per:.0f}; {real['calls']} calls")
    print(f"  baseline, offline extractor on the same segments: "
          f"{offline['messages'] / offline['elapsed']:.1f} messages/s (stage incl. mapping)")


def _staged_run(settings: Settings, sample: list[Path], ingest: Any, segments: int,
                offline: bool) -> dict[str, Any]:
    from pipeline.extract import extract_store

    ingest(settings, sample)
    started = time.perf_counter()
    report = extract_store(settings, offline=offline, limit=segments)
    elapsed = time.perf_counter() - started
    staging = StagingStore.open(settings.staging_db)
    try:
        messages = staging.db.execute(
            "SELECT COUNT(*) FROM segment_messages sm JOIN segments s ON s.id = sm.segment_id"
            " WHERE s.status IN ('extracted', 'failed')").fetchone()[0]
        calls, prompt, completion = staging.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)"
            " FROM llm_calls").fetchone()
    finally:
        staging.close()
    return {"segments": report.segments_pending, "messages": int(messages), "elapsed": elapsed,
            "done": report.segments_done, "failed": report.segments_failed,
            "failures": dict(report.llm_failures), "step": report.structured_output,
            "verified": report.verified, "mentions": report.mentions, "calls": int(calls),
            "prompt": int(prompt), "completion": int(completion)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--known", type=int, default=300)
    parser.add_argument("--offline-segments", type=int, default=200)
    parser.add_argument("--dry-run-segments", type=int, default=4928,
                        help="segments of 5 messages for the estimate (4928 ~ Jocker's 24,639)")
    parser.add_argument("--real-url", default=None,
                        help="a real OpenAI-compatible /v1 URL (bash .ci/llama.sh start)")
    parser.add_argument("--real-model", default="gemma3-270m")
    parser.add_argument("--real-segments", type=int, default=8)
    parser.add_argument("--real-max-tokens", type=int, default=768)
    args = parser.parse_args()
    if args.real_url:
        bench_real_server(args.real_url, args.real_model, args.real_segments,
                          args.real_max_tokens)
        return
    requests = synthetic_requests(args.segments)
    bench_tokens(requests, args.known)
    bench_throughput(requests, args.latency, args.concurrency)
    if args.dry_run_segments:
        bench_dry_run(args.dry_run_segments)
    if args.offline_segments:
        bench_offline(synthetic_requests(args.offline_segments, seed=3))


if __name__ == "__main__":
    main()
