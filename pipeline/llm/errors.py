"""Errors of the LLM path: one base the CLI shows, per-segment failures, endpoint failures."""

from __future__ import annotations

from pipeline.errors import ConceptmemError

__all__ = [
    "FAILURE_HINTS",
    "BatchFileError",
    "ExtractionFailed",
    "LLMEndpointError",
    "LLMError",
    "NothingExtracted",
    "StructuredOutputUnsupported",
    "hint_for",
]

_SCHEMA_HINT = (
    "the model's replies do not follow the schema: try a larger or instruction-tuned model "
    "(every attempt and raw reply is in the llm_calls table of the staging db)"
)
# What to change, per failure class (the classes of llm_calls.error_class).
FAILURE_HINTS = {
    "server_error": "the server failed while answering: read its log; if it runs out of memory, "
    "lower CONCEPTMEM_LLM_CONCURRENCY",
    "timeout": "raise CONCEPTMEM_LLM_TIMEOUT_S, or lower CONCEPTMEM_LLM_CONCURRENCY or "
    "CONCEPTMEM_SEGMENT_MAX_TOKENS",
    "connection_error": "is the server running and is CONCEPTMEM_LLM_BASE_URL (--base-url) "
    "its /v1 URL?",
    "rate_limited": "lower CONCEPTMEM_LLM_CONCURRENCY, or raise the endpoint's rate limit",
    "context_length": "lower CONCEPTMEM_SEGMENT_MAX_TOKENS or "
    "CONCEPTMEM_LLM_MAX_COMPLETION_TOKENS, or serve the model with a larger context "
    "(llama.cpp: --n_ctx)",
    "truncated_json": "raise CONCEPTMEM_LLM_MAX_COMPLETION_TOKENS or lower "
    "CONCEPTMEM_SEGMENT_MAX_TOKENS",
    "bad_request": "the server refused the request as sent (its message is above); check "
    "CONCEPTMEM_LLM_MODEL and the server's version",
    "unsupported_format": "the server accepts none of json_schema, json_object with a schema, "
    "json_object: use a server with structured output (vLLM, Ollama, llama.cpp)",
    "refusal": "the model refused: try another model",
    "batch_error": "see the Batch API's error file; re-run extract without --batch-in to retry "
    "the failed segments live",
    **{name: _SCHEMA_HINT for name in (
        "empty_reply", "prose_around_json", "merged_objects", "invalid_json", "extra_keys",
        "missing_fields", "bad_enum", "wrong_type", "out_of_range",
    )},
}


def hint_for(error_class: str | None) -> str:
    """What to change after failures of ``error_class``."""
    return FAILURE_HINTS.get(error_class or "", "see the llm_calls table of the staging db for "
                             "every attempt and raw reply; re-run the stage to retry")


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
        super().__init__(f"{where}: extraction failed ({error_class}): {detail}",
                         hint_for(error_class))


class LLMEndpointError(LLMError):
    """The endpoint refuses every call (bad key, unknown model, wrong URL): stop the run."""

    def __init__(self, base_url: str, status: int | None, detail: str,
                 message: str | None = None, hint: str | None = None) -> None:
        self.base_url = base_url
        self.status = status
        self.detail = detail
        code = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(
            message or f"LLM endpoint {base_url}: {code}: {detail}",
            hint or "check CONCEPTMEM_LLM_BASE_URL, CONCEPTMEM_LLM_MODEL and "
            "CONCEPTMEM_LLM_API_KEY (or run with --offline)",
        )


class StructuredOutputUnsupported(LLMEndpointError):
    """The endpoint refused every step of the structured-output ladder: stop the run."""

    def __init__(self, base_url: str, model: str, detail: str) -> None:
        self.model = model
        super().__init__(
            base_url, None, detail,
            message=f"LLM endpoint {base_url}, model {model}: refuses every structured-output "
            f"format (json_schema, json_object with a schema, json_object); last answer: {detail}",
            hint=FAILURE_HINTS["unsupported_format"],
        )


class NothingExtracted(LLMError):
    """Segments were pending and none of them succeeded: the run failed as a whole."""

    def __init__(self, failed: int, failures: dict[str, int], details: dict[str, str]) -> None:
        self.failed = failed
        self.failures = dict(failures)
        worst = max(sorted(failures), key=lambda name: failures[name]) if failures else None
        counts = ", ".join(f"{name} {count}" for name, count in sorted(failures.items()))
        said = details.get(worst or "", "")
        super().__init__(
            f"extract: none of the {failed} segments tried succeeded ({counts or 'no detail'})"
            + (f"; last {worst}: {said}" if said else ""),
            hint_for(worst),
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
