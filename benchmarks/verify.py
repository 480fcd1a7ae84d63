"""`verify` cost: comparing ids + stored row hashes (before issue 11) vs every property (now).

Reads a synced store's graph both ways and prints the best of ``--repeat`` runs of each:

    .venv/bin/python benchmarks/verify.py --store STORE [--backend embedded] [--repeat 3]

Build a store first, e.g. ``conceptmem --store STORE run data/sample/*_conversations.json``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from graph import SCHEMA, GraphStore, open_graph
from pipeline.settings import Settings
from pipeline.sync import fingerprints


def _best(repeat: int, read: Callable[[str], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for kind in SCHEMA.kinds():
            read(kind)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    graph: GraphStore = open_graph(Settings(store=args.store), args.backend, read_only=True)
    try:
        rows = sum(graph.counts().values())
        hashes = _best(args.repeat, graph.hashes)
        content = _best(args.repeat, lambda kind: fingerprints(kind, graph.rows(kind)))
    finally:
        graph.close()
    print(f"{rows} graph rows ({args.backend}), best of {args.repeat}:")
    print(f"  ids + stored row_hash (baseline): {hashes:.3f} s")
    print(f"  every property, fingerprinted   : {content:.3f} s ({content / hashes:.1f}x)")


if __name__ == "__main__":
    main()
