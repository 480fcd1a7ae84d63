"""``LLMExtractor``: the ``ontology.Extractor`` protocol over a ``StructuredClient``."""

from __future__ import annotations

import threading

from ontology import ExtractionRequest, ExtractionResult
from pipeline.llm.client import StructuredClient
from pipeline.llm.prompts import render_extraction_messages

__all__ = ["LLMExtractor"]


class LLMExtractor:
    """Extracts raw mentions from one segment per call; safe to share between threads.

    ``last_call_id`` is per thread: after ``extract`` returns, the same thread reads the id of
    the ``llm_calls`` row that produced the result, for the extraction's provenance.
    """

    def __init__(self, client: StructuredClient, model: str | None = None) -> None:
        self.client = client
        self.model = model or client.settings.llm_model
        self.label = f"llm:{self.model}"
        self._local = threading.local()

    @property
    def last_call_id(self) -> str | None:
        return getattr(self._local, "call_id", None)

    @property
    def structured_output(self) -> str:
        """The structured-output ladder step this endpoint and model are on."""
        return self.client.structured_output(self.model)

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        self._local.call_id = None
        # Quotes must name a shown label: grammar-compiling servers enforce it.
        labels = (("message_ref", tuple(message.ref for message in request.messages)),)
        done = self.client.complete_logged(
            ExtractionResult, render_extraction_messages(request), request.segment_id, self.model,
            labels,
        )
        self._local.call_id = done.call_id
        return done.value
