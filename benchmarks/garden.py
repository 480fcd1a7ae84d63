"""Topic clustering time against the number of concepts (synthetic 384-d blob embeddings).

The gardener's topic path, timed step by step: the Optuna study (``--trials`` on a seeded sample
of ``--sample-size``), UMAP (exact-kNN fit on ``--fit-size`` rows, the rest placed by their
nearest sample rows in a PCA space), then HDBSCAN on all rows.

    .venv/bin/python benchmarks/garden.py [--sizes 10000,100000] [--trials 20]
    .venv/bin/python benchmarks/garden.py --sizes 632868      # seed 002's scale, on demand

Target (issue #5): 632,868 concepts clustered in <= 10 minutes including 20 trials.
The one-off numba compilation (per process) is measured first and reported apart.
The figures below predate the HDBSCAN-only study (UMAP fixed at BERTopic's recipe, two
reductions per study instead of up to 32); they have not been re-measured since.

Measured here (2 cores, 20 trials, sample 2000, fit 10,000; 384-d blobs; numba warm-up
14-20 s apart; another engineer's jobs shared the cores during some runs):

         n  topics  tune    umap    hdbscan  total   ARI vs truth
    10,000      25  43.4s   19.3s    0.5s    63.1s   1.00
   100,000      79  38.1s   32.9s    8.2s    79.3s   1.00
   632,868     198  39.2s  105.8s   64.6s   209.5s   1.00   (peak RSS 2.3 GB; 404 s when
                                                             the cores were shared)
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from gardener.cluster import make_hdbscan
from gardener.objective import noise_fraction, stability, topic_count
from gardener.reduce import SampledUMAP, unit_rows
from gardener.tuning import tune


def blob_embeddings(n: int, dim: int, centers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors around ``centers`` random directions (float32, built in chunks)."""
    rng = np.random.default_rng(seed)
    means = unit_rows(rng.standard_normal((centers, dim)).astype(np.float32))
    truth = rng.integers(0, centers, size=n)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        block = truth[start : start + 100_000]
        noise = rng.standard_normal((len(block), dim)).astype(np.float32) * 0.035
        out[start : start + len(block)] = means[block] + noise
    return unit_rows(out), truth


def warm_up(seed: int) -> float:
    start = time.perf_counter()
    vectors, _ = blob_embeddings(300, 384, 3, seed)
    make_hdbscan({"min_cluster_size": 20}).fit(SampledUMAP({}, seed).fit_transform(vectors))
    return time.perf_counter() - start


def run(n: int, args: argparse.Namespace) -> dict[str, float]:
    centers = max(5, int(math.sqrt(n) / 4))
    vectors, truth = blob_embeddings(n, args.dim, centers, args.seed)
    t0 = time.perf_counter()
    study = tune(vectors, seed=args.seed, trials=args.trials, sample_size=args.sample_size,
                 with_stability=not args.no_stability)
    t1 = time.perf_counter()
    reduced = SampledUMAP(study.best_params, args.seed, fit_size=args.fit_size).fit_transform(
        vectors)
    t2 = time.perf_counter()
    labels = make_hdbscan(study.best_params).fit(reduced).labels_
    t3 = time.perf_counter()
    return {"n": n, "centers": centers, "trials": args.trials, "tune_s": t1 - t0,
            "umap_s": t2 - t1, "hdbscan_s": t3 - t2, "total_s": t3 - t0,
            "topics": topic_count(labels), "noise": noise_fraction(labels),
            "ari": stability(labels, truth), "best": study.best_params}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000",
                        help="comma-separated concept counts, e.g. 10000,100000,632868")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--sample-size", type=int, default=2000)
    parser.add_argument("--fit-size", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-stability", action="store_true",
                        help="skip the second-seed fit per trial (ARI term)")
    args = parser.parse_args()
    print(f"numba warm-up (compile, once per process): {warm_up(args.seed):.1f}s")
    print(f"{'n':>8} {'centers':>7} {'trials':>6} {'tune':>7} {'umap':>7} {'hdbscan':>8}"
          f" {'total':>7} {'topics':>6} {'noise':>6} {'ARI':>5}")
    for size in (int(s) for s in args.sizes.split(",")):
        r = run(size, args)
        print(f"{r['n']:>8} {r['centers']:>7} {r['trials']:>6} {r['tune_s']:>6.1f}s"
              f" {r['umap_s']:>6.1f}s {r['hdbscan_s']:>7.1f}s {r['total_s']:>6.1f}s"
              f" {r['topics']:>6} {r['noise']:>6.3f} {r['ari']:>5.2f}  best={r['best']}",
              flush=True)


if __name__ == "__main__":
    main()
