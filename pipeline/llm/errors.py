"""Errors of the LLM path: one base the CLI shows, per-segment failures, endpoint failures."""

from __future__ import annotations

from pipeline.errors import ConceptmemError

__all__ = ["BatchFileError", "ExtractionFailed", "LLMEndpointError", "LLMError"]


class LLMError(ConceptmemError):
    """Base of every error raised by ``pipeline.llm``."""


class ExtractionFailed(LLMError):
    """One segment could not be turned into a validated reply within the retry bounds.

    ``error_class`` is the class of the last attempt (``missing_fields``, ``rate_limited``...),
    the same value its ``llm_calls`` row carries. Other segments can still succeed.
    """

    def __init__(self, error_class: str, detail: str, segment_id: str | None) -> None:
        self.error_class = error_class
        self.detail = detail
        self.segment_id = segment_id
        where = f"segment {segment_id}" if segment_id else "LLM call"
        super().__init__(
            f"{where}: extraction failed ({error_class}): {detail}",
            "see the llm_calls table of the staging db for every attempt and raw reply; "
            "re-run the stage to retry failed segments",
        )


class LLMEndpointError(LLMError):
    """The endpoint refuses every call (bad key, unknown model, wrong URL): stop the run."""

    def __init__(self, base_url: str, status: int | None, detail: str) -> None:
        self.base_url = base_url
        self.status = status
        self.detail = detail
        code = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(
            f"LLM endpoint {base_url}: {code}: {detail}",
            "check CONCEPTMEM_LLM_BASE_URL, CONCEPTMEM_LLM_MODEL and CONCEPTMEM_LLM_API_KEY "
            "(or run with --offline)",
        )


class BatchFileError(LLMError):
    """A Batch API file cannot be written or read: names the file, the line and the reason."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(
            f"{where}: {reason}",
            "pass the output file the OpenAI Batch API produced for the input file "
            "written by `conceptmem extract --batch-out`",
        )
