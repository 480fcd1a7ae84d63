"""Gardening converges: `run` three times on the shared exports, the 2nd and 3rd change nothing.

Before issue 10 a re-run merged split parts back and split them again (+2 concepts, +3 plans and
one more "(keyword)" in a title per run). Row hashes of every memory table must stay equal after
the first run; run bookkeeping (``runs``, ``gardener_studies``, ``sync_receipts``) is left out,
and the ``embeddings`` cache may only gain rows (the mapper's index embeds the names of the first
run's split parts on the second run), never change one.
"""

from __future__ import annotations

import hashlib
import sqlite3
from itertools import pairwise
from pathlib import Path

import pytest

from pipeline.cli.app import main
from pipeline.settings import Settings

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
EXPORTS = sorted(SHARED.glob("*/*.json"))
STAGING_TABLES = (
    "concepts", "evidence", "relations", "concept_links", "topics", "topic_memberships",
    "concept_revisions", "gardener_plans", "mentions", "mapper_decisions", "extractions",
    "segments",
)


def _cache(db: Path) -> dict[tuple[str, str], bytes]:
    conn = sqlite3.connect(db)
    try:
        return {(h, m): v for h, m, v in conn.execute(
            "SELECT text_hash, model, vector FROM embeddings")}
    finally:
        conn.close()


def _hashes(db: Path, tables: tuple[str, ...]) -> dict[str, str]:
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in tables:
            digest = hashlib.sha256()
            for row in conn.execute(f"SELECT * FROM [{table}] ORDER BY 1, 2"):
                digest.update(repr(row).encode())
            out[table] = digest.hexdigest()
        return out
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.skipif(not EXPORTS, reason=f"shared exports not found under {SHARED}")
def test_run_three_times_plans_nothing_after_the_first(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")  # the convergence, not the model
    monkeypatch.setenv("CONCEPTMEM_GARDEN_TRIALS", "2")
    command = ["--store", str(settings.store), "run", *map(str, EXPORTS)]
    states, caches = [], []
    for _ in range(3):
        assert main(command) == 0
        states.append((_hashes(settings.staging_db, STAGING_TABLES),
                       _hashes(settings.source_db, ("conversations", "messages"))))
        caches.append(_cache(settings.staging_db))
    staging = sqlite3.connect(settings.staging_db)
    steps = {row[0] for row in staging.execute(
        "SELECT step FROM gardener_plans WHERE status = 'applied'")}
    assert {"merge", "topics"} <= steps  # the first run did garden, merges included
    titles = [row[0] for row in staging.execute("SELECT title FROM concepts")]
    assert not [t for t in titles if t.count("(") > 1]  # no "Maria (maria) (maria)"
    changed = [table for table, digest in states[1][0].items() if states[0][0][table] != digest]
    assert changed == [], f"the second run changed {changed}"
    assert states[2] == states[1] == states[0]
    for earlier, later in pairwise(caches):
        assert {key: later.get(key) for key in earlier} == earlier  # only ever added to
    assert caches[2] == caches[1]  # and the third run embeds nothing new
