"""Fixtures shared by every test package. Area fixtures live in tests/<area>/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings for a fresh store under tmp_path, offline, with no endpoint from the env."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CONCEPTMEM_LLM_BASE_URL",
                 "CONCEPTMEM_LLM_API_KEY", "CONCEPTMEM_STORE"):
        monkeypatch.delenv(name, raising=False)
    return Settings(store=tmp_path / "store")
