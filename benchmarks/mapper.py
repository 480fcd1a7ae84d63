"""Semantic mapper throughput against a large concept memory (prints figures, asserts nothing).

    .venv/bin/python benchmarks/mapper.py [existing_concepts] [mentions]

Builds a staging db with N existing concepts (hashing embedder: no model load), then maps M
verified mentions (half near-duplicates of existing names, half new) in extractions of 20, and
prints index build time and mentions/s. Candidate search is an alias dict, one rapidfuzz pass and
one matrix-vector product per mention: no Python loop over concept pairs.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from ontology import RawMention, stable_id
from pipeline.embeddings import HashingEmbedder
from pipeline.evidence import Verification
from pipeline.mapping import MappingInput, SemanticMapper
from pipeline.settings import Settings
from staging import StagingStore, transaction
from staging.concept_repo import ConceptRepo, ConceptRow

WORDS = [
    "rust", "garden", "lyon", "sister", "python", "kafka", "budget", "marathon", "piano",
    "spanish", "novel", "startup", "mortgage", "climbing", "sleep", "diet", "guitar", "chess",
    "thesis", "podcast", "camera", "bike", "kitchen", "vote",
]


def _name(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, 3)) + f" {rng.randrange(10_000)}"


def main(existing: int = 20_000, mentions: int = 2_000) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store=Path(tmp), embedder="hashing")
        staging = StagingStore.open(settings.staging_db)
        run = staging.start_run("bench", {}, "bench", "u", "a")
        prov = run.provenance("bench")
        repo = ConceptRepo(staging)
        names = [_name(rng) for _ in range(existing)]
        with transaction(staging.db):
            for i, name in enumerate(names):
                repo.save_concept(ConceptRow(f"c_{i}", name, "goal", "d", "active", 0.5), prov)
        started = time.perf_counter()
        mapper = SemanticMapper(repo, HashingEmbedder(), settings)
        built = time.perf_counter() - started
        items = []
        for i in range(mentions):
            title = rng.choice(names) + "s" if i % 2 else _name(rng)
            mention = RawMention(title=title, type="goal", description="d", quote=title,
                                 message_ref="m1", confidence=0.6, relations=[])
            check = Verification(True, f"msg_{i}", 0, len(title), None)
            items.append(MappingInput(stable_id("mn", i), mention, check, "src",
                                      datetime(2024, 1, 1, tzinfo=UTC)))
        started = time.perf_counter()
        actions: dict[str, int] = {}
        for start in range(0, mentions, 20):
            with transaction(staging.db):
                tally = mapper.map_extraction(items[start : start + 20], prov)
            for action, count in tally.actions.items():
                actions[action] = actions.get(action, 0) + count
        elapsed = time.perf_counter() - started
        staging.close()
    print(f"existing concepts: {existing}; index build (embed {existing} names): {built:.2f} s")
    print(f"mapped {mentions} mentions in {elapsed:.2f} s = {mentions / elapsed:.0f} mentions/s")
    print(f"decisions: {actions}")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
