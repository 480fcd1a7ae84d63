"""What an extraction would cost, before spending anything (``--dry-run``): no network."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ontology import ExtractionRequest, ExtractionResult, strict_json_schema
from pipeline.llm.prompts import render_extraction_messages
from pipeline.llm.tokens import count_message_tokens, encoding_name
from pipeline.settings import Settings

__all__ = ["CostEstimate", "estimate_extraction_cost"]


@dataclass(frozen=True)
class CostEstimate:
    """Calls and tokens of one pass without retries; completion tokens are the upper bound."""

    calls: int
    prompt_tokens: int
    max_completion_tokens: int
    messages: int = 0
    encoding: str = ""

    @property
    def prompt_tokens_per_message(self) -> float:
        return self.prompt_tokens / self.messages if self.messages else 0.0


def estimate_extraction_cost(
    requests: Iterable[ExtractionRequest], settings: Settings
) -> CostEstimate:
    schema = strict_json_schema(ExtractionResult)
    per_call_completion = settings.llm_max_completion_tokens or 4096
    calls = prompt = messages = 0
    for request in requests:
        calls += 1
        messages += len(request.messages)
        prompt += count_message_tokens(render_extraction_messages(request), schema)
    return CostEstimate(
        calls=calls,
        prompt_tokens=prompt,
        max_completion_tokens=calls * per_call_completion,
        messages=messages,
        encoding=encoding_name(),
    )
