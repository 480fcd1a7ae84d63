"""Small protocols, in ontology terms, for the parts that have several backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ontology.extraction import ExtractionRequest, ExtractionResult

__all__ = ["Embedder", "Extractor"]


@runtime_checkable
class Embedder(Protocol):
    """Texts to L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class Extractor(Protocol):
    """A segment to a validated ``ExtractionResult``. ``label`` goes into provenance."""

    label: str

    def extract(self, request: ExtractionRequest) -> ExtractionResult: ...
