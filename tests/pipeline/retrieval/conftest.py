"""A small real store: the LoCoMo excerpt through the offline pipeline, plus a second user."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.run import RunOptions, run_pipeline
from pipeline.settings import Settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXCERPT = FIXTURES / "locomo_excerpt.json"
OTHER_USER = "bob"
OTHER_LINES = [
    {"conversation_id": "bob-1", "role": "user", "content": "My zeppelin hangar needs a roof.",
     "timestamp": "2024-02-01T10:00:00Z"},
    {"conversation_id": "bob-1", "role": "assistant",
     "content": "A zeppelin hangar roof is usually fabric over steel.",
     "timestamp": "2024-02-01T10:00:05Z"},
    {"conversation_id": "bob-1", "role": "user",
     "content": "I also joined an LGBTQ support group last week.",
     "timestamp": "2024-02-01T10:01:00Z"},
]


@pytest.fixture(scope="package")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Excerpt as the default user; three JSONL lines as user ``bob``; synced graph."""
    mp = pytest.MonkeyPatch()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CONCEPTMEM_LLM_BASE_URL",
                 "CONCEPTMEM_LLM_API_KEY", "CONCEPTMEM_STORE", "CONCEPTMEM_EMBEDDER"):
        mp.delenv(name, raising=False)
    root = tmp_path_factory.mktemp("retrieval")
    settings = Settings(store=root / "store", embedder="hashing")
    run_pipeline(settings, RunOptions((EXCERPT,), "locomo", True))
    other = root / "bob.jsonl"
    other.write_text("\n".join(json.dumps(line) for line in OTHER_LINES) + "\n")
    run_pipeline(settings.model_copy(update={"user_scope": OTHER_USER}),
                 RunOptions((other,), "jsonl", True))
    yield settings
    mp.undo()
