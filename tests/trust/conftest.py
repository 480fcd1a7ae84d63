"""Trust fixtures: real stores built by the real pipeline (offline, hashing embedder)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.extract import extract_store
from pipeline.garden import garden_store
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from pipeline.sync import sync_store

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "conceptmem" / "numba"))


def store_settings(store: Path, **extra: object) -> Settings:
    values: dict[str, object] = {"store": store, "embedder": "hashing", "garden_trials": 2,
                                 "llm_base_url": None, "llm_api_key": None}
    values.update(extra)
    return Settings(**values)  # type: ignore[arg-type]


def build(settings: Settings, paths: list[Path], *, garden: bool = True,
          sync: bool = True) -> Settings:
    ingest_paths(settings, paths)
    extract_store(settings, offline=True)
    if garden:
        garden_store(settings)
    if sync:
        sync_store(settings)
    return settings


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """data/sample ingested, extracted, gardened and synced once (read-only for tests)."""
    return build(store_settings(tmp_path_factory.mktemp("sample") / "store"), [SAMPLE])


@pytest.fixture
def copy_store(tmp_path: Path) -> Callable[[Settings], Settings]:
    """A private copy of a built store (for tests that change it)."""

    def copy(settings: Settings) -> Settings:
        target = tmp_path / "copy"
        shutil.copytree(settings.store, target)
        return settings.model_copy(update={"store": target})

    return copy
