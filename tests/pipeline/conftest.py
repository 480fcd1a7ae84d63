"""Fixtures for pipeline tests: the scripted OpenAI-compatible server (``tests/llm_server.py``)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.settings import Settings


def _load_llm_server() -> None:
    """Register tests/llm_server.py as module ``llm_server`` (tests/ is not on sys.path, and
    putting it there would shadow the ``ontology`` package with ``tests/ontology``)."""
    if "llm_server" in sys.modules:
        return
    path = Path(__file__).resolve().parents[1] / "llm_server.py"
    spec = importlib.util.spec_from_file_location("llm_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["llm_server"] = module
    spec.loader.exec_module(module)


_load_llm_server()

from llm_server import ScriptedLLMServer  # noqa: E402


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started server on 127.0.0.1 (random port); stopped at teardown."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def llm_settings(settings: Settings, llm_server: ScriptedLLMServer) -> Settings:
    """Settings pointing at ``llm_server``: small timeout, tiny backoff, small retry bounds."""
    return settings.model_copy(
        update={
            "llm_base_url": llm_server.base_url,
            "llm_model": "scripted-model",
            "llm_timeout_s": 2.0,
            "llm_backoff_base_s": 0.001,
            "llm_max_retries": 2,
            "llm_repair_attempts": 1,
        }
    )
