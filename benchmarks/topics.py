"""Topic quality and stability: the gardener's recipe next to BERTopic's default, same embeddings.

For each ``--store`` (a conceptmem store after ``ingest`` + ``extract``; the concepts' texts are
embedded with the store's embedder, through its cache) and, with ``--blobs N``, for synthetic
384-d blobs, prints per recipe:

* topics, largest topic's share of the assigned concepts, outlier share;
* coherence: embedding coherence (mean cosine of a member to its topic's centroid, over the
  assigned concepts) and NPMI of each topic's top-10 c-TF-IDF words over the concepts' texts
  (names + evidence quotes; a concept is a document), averaged over topics;
* stability: ARI between fits with seeds ``seed`` and ``seed+1``;
* seconds for the fit (tuning included for the gardener).

Then, on the stores, the gardener's incremental path: the concepts whose evidence lies only in a
seeded 10% of the conversations are held out, the rest clustered (full layout), the held-out
concepts added by incremental assignment, and the result compared with a full re-cluster of
everything: share of topic ids kept by the re-cluster, ARI incremental vs full, and whether a
second run on unchanged data plans any change (it must not).

BERTopic's default recipe is implemented with umap-learn + hdbscan directly: UMAP
n_neighbors=15, n_components=5, min_dist=0, metric cosine; HDBSCAN min_cluster_size=10,
metric euclidean, cluster_selection_method eom.

    .venv/bin/python benchmarks/topics.py --store /tmp/s1 [--store /tmp/s2] [--blobs 2000]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from gardener.cluster import make_hdbscan
from gardener.labels import ctfidf_keywords, stop_words_for, tokenize
from gardener.objective import largest_share, noise_fraction, stability, topic_count
from gardener.reduce import make_umap, unit_rows
from gardener.state import GardenState, concept_text, label_text
from gardener.topic_step import TopicSettings, cluster_concepts, plan_topic_step
from gardener.topics import full_layout, incremental_layout, plan_topics
from pipeline.embeddings import build_embedder
from pipeline.settings import Settings
from staging import StagingStore
from staging.gardener_repo import GardenerRepo

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def bertopic_default(vectors: np.ndarray, seed: int) -> np.ndarray:
    reduced = make_umap({"n_neighbors": 15, "n_components": 5, "min_dist": 0.0}, seed,
                        ).fit_transform(vectors)
    return np.asarray(make_hdbscan({"min_cluster_size": 10, "min_samples": None,
                                    "cluster_selection_method": "eom"}).fit(reduced).labels_)


def ours(vectors: np.ndarray, seed: int, trials: int) -> np.ndarray:
    result, _, _ = cluster_concepts(vectors, TopicSettings(seed=seed, trials=trials))
    return result.labels


def embedding_coherence(vectors: np.ndarray, labels: np.ndarray) -> float:
    unit, sims = unit_rows(vectors), []
    for label in sorted(set(labels.tolist()) - {-1}):
        block = unit[labels == label]
        centre = block.mean(axis=0)
        sims.extend((block @ (centre / (np.linalg.norm(centre) + 1e-12))).tolist())
    return float(np.mean(sims)) if sims else 0.0


def npmi(labels: np.ndarray, docs: Sequence[str], stop: frozenset[str], top: int = 10) -> float:
    """Mean over topics of the mean NPMI of their top words' pairs (documents = concepts).

    A pair that never co-occurs scores -1 (the NPMI limit), one in every document +1.
    """
    groups = [np.flatnonzero(labels == k) for k in sorted(set(labels.tolist()) - {-1})]
    if not groups:
        return 0.0
    words = ctfidf_keywords([[docs[i] for i in g] for g in groups], top, stop)
    vocab = sorted({w for topic in words for w in topic})
    column = {w: i for i, w in enumerate(vocab)}
    present = np.zeros((len(docs), len(vocab)), dtype=np.float64)
    for row, doc in enumerate(docs):
        for token in set(tokenize(doc, stop)):
            if token in column:
                present[row, column[token]] = 1.0
    p = present.T @ present / len(docs)  # joint (off-diagonal) and marginal (diagonal)
    scores = []
    for topic_words in words:
        pairs = []
        for a, b in itertools.combinations([column[w] for w in topic_words], 2):
            joint = p[a, b]
            if joint == 0:
                pairs.append(-1.0)
            elif joint >= 1:
                pairs.append(1.0)
            else:
                pairs.append(math.log(joint / (p[a, a] * p[b, b])) / -math.log(joint))
        if pairs:
            scores.append(float(np.mean(pairs)))
    return float(np.mean(scores)) if scores else 0.0


def describe(name: str, labels: np.ndarray, again: np.ndarray, vectors: np.ndarray,
             docs: Sequence[str] | None, stop: frozenset[str], seconds: float) -> str:
    text = "" if docs is None else f" npmi {npmi(labels, docs, stop):+.3f}"
    coherence = embedding_coherence(vectors, labels)
    return (f"  {name:<18} topics {topic_count(labels):>3}  largest {largest_share(labels):.1%}"
            f"  outliers {noise_fraction(labels):.1%}  emb-coh {coherence:.3f}{text}"
            f"  ARI(seeds) {stability(labels, again):.2f}  {seconds:.1f}s")


def compare(vectors: np.ndarray, docs: Sequence[str] | None, args: argparse.Namespace,
            truth: np.ndarray | None = None) -> None:
    stop = stop_words_for(docs) if docs is not None else frozenset()
    for name, fit in (("gardener", lambda s: ours(vectors, s, args.trials)),
                      ("bertopic-default", lambda s: bertopic_default(vectors, s))):
        start = time.perf_counter()
        labels = fit(args.seed)
        seconds = time.perf_counter() - start
        line = describe(name, labels, fit(args.seed + 1), vectors, docs, stop, seconds)
        print(line + ("" if truth is None else f"  ARI(truth) {stability(labels, truth):.2f}"),
              flush=True)


def load(store: Path) -> tuple[GardenState, list[str], np.ndarray, dict[str, set[str]]]:
    settings = Settings(store=store)
    staging = StagingStore.open(settings.staging_db)
    state = GardenState.from_rows(GardenerRepo(staging.db).load_rows())
    rows = state.live_concepts()
    vectors = np.asarray(build_embedder(settings, staging).embed(
        [concept_text(r) for r in rows]), dtype=np.float32)
    import sqlite3

    source = sqlite3.connect(settings.source_db)
    conversation = dict(source.execute("SELECT id, conversation_id FROM messages").fetchall())
    staging.close()
    span_conv: dict[str, set[str]] = {}
    for row in state.table("evidence").values():
        span_conv.setdefault(row["concept_id"], set()).add(
            conversation.get(row["message_id"], ""))
    return state, [r["id"] for r in rows], vectors, span_conv


def incremental(state: GardenState, ids: list[str], vectors: np.ndarray,
                seen_in: dict[str, set[str]], args: argparse.Namespace) -> None:
    """Hold out the concepts seen only in a seeded 10% of conversations, then add them."""
    conversations = sorted({v for vs in seen_in.values() for v in vs})
    rng = np.random.default_rng(args.seed)
    held = set(rng.choice(conversations, size=max(1, len(conversations) // 10), replace=False))
    new = {c for c in ids if seen_in.get(c) and seen_in[c] <= held}
    keep = [i for i, c in enumerate(ids) if c not in new]
    base_ids = [ids[i] for i in keep]
    opts = TopicSettings(seed=args.seed, trials=args.trials)
    result, _, params = cluster_concepts(vectors[keep], opts)
    base = full_layout(state, base_ids, result, vectors[keep])
    state1 = state.with_changes(plan_topics(state, base, now=NOW).change_dicts())
    start = time.perf_counter()
    inc_plan, _ = plan_topic_step(state1, ids, vectors, opts, now=NOW, salt="inc")
    inc_s = time.perf_counter() - start
    state2 = state1.with_changes(inc_plan.change_dicts())
    again, _ = plan_topic_step(state2, ids, vectors, opts, now=NOW, salt="again")
    old_ids = {k[0] for k in base.rows["topics"]}
    inc_labels = _labels_of(incremental_layout(state1, ids, vectors), ids)
    print(f"  +{len(new)} concepts ({len(held)} of {len(conversations)} conversations) on"
          f" {len(base_ids)} in {len(old_ids)} topics: {inc_plan.stats['mode']} in {inc_s:.2f}s,"
          f" assigned {inc_plan.stats.get('assigned_new')}/{len(new)}, keeps 100% of ids;"
          f" second run plans {len(again.changes)} changes", flush=True)
    for name, pinned in (("same params (drift)", params), ("re-tuned (--recluster)", {})):
        full_result, _, _ = cluster_concepts(vectors, replace(opts, pinned=pinned))
        full = full_layout(state1, ids, full_result, vectors)
        kept = len(old_ids & {k[0] for k in full.rows["topics"]}) / max(len(old_ids), 1)
        print(f"  full re-cluster, {name}: keeps {kept:.0%} of {len(old_ids)} topic ids,"
              f" {len(full.rows['topics'])} topics;"
              f" ARI incremental vs full {stability(inc_labels, _labels_of(full, ids)):.2f}",
              flush=True)


def _labels_of(layout: Any, ids: list[str]) -> np.ndarray:
    topic = {k[0]: k[1] for k in layout.rows["topic_memberships"]}
    codes = {t: i for i, t in enumerate(sorted(set(topic.values())))}
    return np.array([codes[topic[c]] if c in topic else -1 for c in ids])


def blobs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = max(5, int(math.sqrt(n) / 4))
    means = unit_rows(rng.standard_normal((centers, 384)).astype(np.float32))
    sizes = rng.dirichlet(np.ones(centers) * 2.0)
    truth = rng.choice(centers, size=n, p=sizes)
    return unit_rows(means[truth] + rng.standard_normal((n, 384)).astype(np.float32) * 0.04), truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, action="append", default=[])
    parser.add_argument("--blobs", type=int, default=0, help="also n synthetic blob vectors")
    parser.add_argument("--trials", type=int, default=TopicSettings().trials)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-incremental", action="store_true")
    args = parser.parse_args()
    for store in args.store:
        state, ids, vectors, seen_in = load(store)
        evidence = state.evidence_by_concept()
        docs = [label_text(state.concept(c) or {}, evidence.get(c, [])) for c in ids]
        print(f"{store}: {len(ids)} live concepts", flush=True)
        compare(vectors, docs, args)
        if not args.no_incremental:
            incremental(state, ids, vectors, seen_in, args)
    if args.blobs:
        vectors, truth = blobs(args.blobs, args.seed)
        print(f"blobs: {args.blobs} vectors, {len(set(truth.tolist()))} centers", flush=True)
        compare(vectors, None, args, truth)


if __name__ == "__main__":
    main()
